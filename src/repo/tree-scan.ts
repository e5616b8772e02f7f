import type { FileMode } from "../core/file-mode";
import { compareUtf8, searchUtf8 } from "../core/byte-order";
import { sha256Hex } from "../core/hash";
import { isReservedPath, isWithin, type RepoPath } from "../core/repo-path";
import { isAscii } from "node:buffer";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { presentSkipWorktree } from "./index-flags";
import { indexIdentity } from "./index-identity";
import { decodePath, git, type GitResult, splitNul } from "./git";
import type { HashItem } from "./hash-files";
import { nativeModule, type NativeLayout } from "./native";
import type { RepoRoot } from "./root";
import { tempPath } from "./state-dir";
import { listOthers, rememberUntracked, sameDirs, type UntrackedGuess } from "./untracked-guess";
import { perPath } from "../core/per-path";

/** How a candidate's content is known without reading it. */
export interface TreeEntry {
  path: string;
  /** git mode: "100644", "100755" or "120000"; "" when not known until the file is looked at. */
  mode: FileMode | "";
  /** The index blob id when the work tree file is known to equal the index (clean tracked file). */
  gitOid?: string;
  /**
   * A cache for readers: set once the blob store was found to hold the
   * sha256 of `gitOid` (never unset: the store only grows). Entries of an
   * unchanged index and status are reused by a server (gitTreeEntries).
   */
  storedBlob?: true;
  /** A cache for the grep's trigram index: the handle of gitOid's blob (-1: not indexed) in the index of that version (index-select.ts). */
  trigramHandle?: number;
  trigramVersion?: number;
  /** Whether the path holds a UTF-16 unit of U+D800 or above (byte-order.ts); absent when the walk did not look. */
  wide?: boolean;
}

export interface ScanSkips {
  /** Names that are not valid UTF-8. */
  non_utf8: number;
  /** Gitlinks and nested repositories, which are not descended into. */
  submodules: number;
}

export interface TreeScan {
  entries: TreeEntry[];
  skipped: ScanSkips;
  /**
   * Where skip-worktree entries are absent from the work tree (a sparse checkout): the top-most absent path
   * above each (a directory, or the file itself), sorted by bytes. They are not candidates; something that
   * remembers the scan must find them still absent (warm-cache.ts).
   */
  absentSkipWorktree: string[];
}

interface StatusInfo {
  /** Paths whose work tree content differs from the index (or that are unmerged). */
  dirty: Set<string>;
  /** Tracked paths missing from the work tree. */
  missing: Set<string>;
  untrackedFiles: string[];
  untrackedDirs: string[];
  nonUtf8: number;
}

const UNMERGED = new Set(["DD", "AU", "UD", "UA", "DU", "AA", "UU"]);

/**
 * Parses `git status --porcelain=v1 -z`, whose paths are named from the top
 * of the work tree: with `prefix` (RepoRoot.gitPrefix, a root below the top)
 * only paths under it count, named relative to the root.
 */
export function parseStatus(raw: Uint8Array, prefix = ""): StatusInfo {
  const info: StatusInfo = { dirty: new Set(), missing: new Set(), untrackedFiles: [], untrackedDirs: [], nonUtf8: 0 };
  const records = splitNul(raw);
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (rec.length < 4) continue;
    const xy = String.fromCharCode(rec[0] as number, rec[1] as number);
    let path = decodePath(rec.subarray(3));
    if (xy[0] === "R" || xy[0] === "C") i++; // the source path follows as its own record
    if (path !== null && prefix !== "") {
      if (xy === "??" && path.endsWith("/") && prefix.startsWith(path)) {
        info.untrackedDirs.push("."); // the root lies in an untracked directory: every file of it is untracked
        continue;
      }
      if (!path.startsWith(prefix)) continue; // outside the root
      path = path.slice(prefix.length);
    }
    if (path === null) {
      if (xy === "??") info.nonUtf8++;
      continue;
    }
    if (xy === "??") {
      if (path.endsWith("/")) info.untrackedDirs.push(path.slice(0, -1));
      else info.untrackedFiles.push(path);
      continue;
    }
    if (xy === "!!") continue;
    const y = xy[1];
    if (UNMERGED.has(xy)) info.dirty.add(path);
    else if (y === "D") info.missing.add(path);
    else if (y !== " ") info.dirty.add(path);
  }
  return info;
}

function inScope(path: string, scope: RepoPath[]): boolean {
  for (const s of scope) if (isWithin(path, s)) return true;
  return false;
}

/** Pathspecs that mean exactly these paths, never globs. */
export function literalPathspecs(scope: RepoPath[]): string[] {
  return scope.map((p) => (p === "." ? ":(literal)." : `:(literal)${p}`));
}

/**
 * Starts `git ls-files -s -v -z` for the scope; callers run it beside the
 * fingerprint. `-v` tags each entry, so entries git status does not look at
 * (assume-unchanged, skip-worktree) are never taken for clean.
 */
export function startIndexListing(repo: RepoRoot, scope: RepoPath[]): Promise<GitResult> {
  const index = repo.gitDir ? join(repo.gitDir, "index") : null;
  const identity = index ? indexIdentity(index) : null;
  const key = `${repo.root}\0${scope.join("\0")}`;
  const hit = listings.get(key);
  if (hit && identity !== null && hit.identity === identity) {
    const known = Promise.resolve(hit.result);
    listingStarts.set(known, identity);
    return known;
  }
  const listing = git(["ls-files", "-s", "-v", "-z", "--", ...literalPathspecs(scope)], { cwd: repo.root, spool: tempPath(repo.stateDir, "listing") });
  const kept = listing.then((result) => {
    // kept only when the index was the same file before and after git read it
    if (keepListings && identity !== null && index && identity === indexIdentity(index)) {
      listings.delete(key);
      listings.set(key, { identity, result });
      if (listings.size > MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    }
    return result;
  });
  // Started ahead and awaited later (after git status, which fails first on a corrupt index): a failure before
  // then is not unhandled; whoever awaits the listing gets it.
  kept.catch(() => undefined);
  listingStarts.set(kept, identity);
  return kept;
}

/** Each listing's index identity when it was started (startIndexListing). */
const listingStarts = new WeakMap<Promise<GitResult>, string | null>();

/**
 * The identity the index had when `listing` was started (index-identity.ts), or undefined for a listing
 * startIndexListing did not start: a read that must know the listing read the same index as a status compares it
 * with the identity after both.
 */
export function listingStartIdentity(listing: Promise<GitResult>): string | null | undefined {
  return listingStarts.get(listing);
}

/**
 * The listing depends on nothing but the index file and the scope, and a
 * server lists the same index again and again: the last few listings are
 * kept, by index file identity (fingerprint.ts), so an unchanged index is
 * listed at once, and parsed once (indexRecords).
 */
const listings = new Map<string, { identity: string; result: GitResult }>();
const MAX_LISTINGS = 4;
let keepListings = false;

/**
 * Keeps listings for the life of the process (a server: `worksnap serve`);
 * a one-shot command lists once and would only hold the memory.
 */
export function keepIndexListings(on: boolean): void {
  keepListings = on;
  if (!on) {
    listings.clear();
    lastTracked = null;
  }
}

/**
 * One entry of `git ls-files -s -v`: "<tag> <mode> <oid> <stage>\t<path>".
 * The tag is "H" for a plain entry, lower case for assume-unchanged, "S" for
 * skip-worktree, "M" for unmerged. Tag, mode and stage are shared strings
 * (a handful of values); the oid and the path are the only strings an entry
 * owns, and every view of the listing (plainIndexPaths, plainIndexFiles, the
 * tracked entries) uses these, so a server keeping a 90k-file listing keeps
 * two strings an entry, not five (regression: the listing's views held
 * about 46 MB of heap on the bench tree).
 */
export interface IndexRecord {
  tag: string;
  mode: string;
  oid: string;
  stage: string;
  path: string | null;
  /** the path is reserved (isReservedPath): asked once here rather than by each view */
  reserved: boolean;
  /** the path holds a UTF-16 unit of U+D800 or above, where UTF-16 order and byte order can differ (byte-order.ts) */
  wide: boolean;
}

/** Single characters, and the index's modes, as shared strings: the usual values of the short fields. */
const ONE_CHAR = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
const MODES = ["100644", "100755", "120000", "160000"] as const;
/** Other values seen (a handful at most), one string each. */
const fieldValues = new Map<string, string>();

/** The field text[start, end) as a shared string, made without a slice for the usual values. */
function sharedField(text: string, start: number, end: number): string {
  if (end - start === 1) {
    const one = ONE_CHAR[text.charCodeAt(start)];
    if (one !== undefined) return one;
  } else if (end - start === 6) {
    for (const m of MODES) if (text.startsWith(m, start)) return m;
  }
  const v = text.slice(start, end);
  const had = fieldValues.get(v);
  if (had !== undefined) return had;
  if (fieldValues.size < 64) fieldValues.set(v, v);
  return v;
}
perPath(sharedField);

/** Parsed listings, so that the walk and a read ahead working on the same listing split it once. */
const parsed = new WeakMap<Uint8Array, IndexRecord[]>();

/** Splits ls-files -s output; decodes in one pass when it is all UTF-8 (the usual case). */
export function indexRecords(raw: Uint8Array): IndexRecord[] {
  let records = parsed.get(raw);
  if (!records) parsed.set(raw, (records = splitIndexRecords(raw)));
  return records;
}

/**
 * The listing's records, read as Latin-1 (one character per byte): the
 * fields are ASCII, and a name that is plain ASCII is already right. Only a
 * name holding a byte of 0x80 or more is decoded as UTF-8 on its own (null
 * when invalid: skipped and counted). The text stays one byte a character
 * however many Unicode names there are (a UTF-8 decoding of the whole listing
 * would double it), and the names, slices of it, share its memory. The native
 * module splits the records (src/native/listing_plan.c, the planner's split)
 * and flags the names to check; without it, one pass here does both.
 * `native: false` is for tests, which hold the two equal.
 */
export function splitIndexRecords(raw: Uint8Array, native = true): IndexRecord[] {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = bytes.toString("latin1");
  const m = native ? nativeModule() : null;
  const at = m ? m.listingRecords(raw) : null;
  return m && at ? recordsAt(text, bytes, at, m.layout) : scanRecords(text, bytes);
}

/**
 * The records the native split found: the fields sliced at its offsets, and a name checked only where it
 * flagged one (a byte of 0x80 or more; an ASCII name that may fold to a reserved one). The bench tree's
 * 11 MB listing: about 68 to 25 ms (without the scan for separators, the reserved names and the wide
 * characters).
 */
function recordsAt(text: string, bytes: Buffer, at: Int32Array, layout: NativeLayout): IndexRecord[] {
  const out: IndexRecord[] = [];
  const { LR_FIELDS: step, LR_NON_ASCII: nonAscii } = layout;
  for (let r = 0; r < at.length; r += step) {
    const start = at[r] as number;
    const sp1 = at[r + 1] as number;
    const sp2 = at[r + 2] as number;
    const sp3 = at[r + 3] as number;
    const tab = at[r + 4] as number;
    const end = at[r + 5] as number;
    const flags = at[r + 6] as number;
    let path: string | null = text.slice(tab + 1, end);
    let wide = false;
    let reserved = false;
    if (flags !== 0) {
      if (flags & nonAscii) {
        path = decodePath(bytes.subarray(tab + 1, end));
        wide = path !== null && WIDE.test(path);
      }
      reserved = path !== null && isReservedPath(path);
    }
    out.push(recordOf(text, start, sp1, sp2, sp3, tab, path, reserved, wide));
  }
  return out;
}

/** A record from its separators' places in the text (both splits make it so). */
function recordOf(text: string, start: number, sp1: number, sp2: number, sp3: number, tab: number, path: string | null, reserved: boolean, wide: boolean): IndexRecord {
  return { tag: sharedField(text, start, sp1), mode: sharedField(text, sp1 + 1, sp2), oid: text.slice(sp2 + 1, sp3), stage: sharedField(text, sp3 + 1, tab), path, reserved, wide };
}
perPath(recordOf);

/** The records in one pass over the text, the same as recordsAt's (without the native module). */
function scanRecords(text: string, bytes: Buffer): IndexRecord[] {
  /** where the next character of 0x80 or more is, from the current record on: a record before it is ASCII */
  let nextWide = isAscii(bytes) ? Infinity : wideFrom(text, 0);
  const out: IndexRecord[] = [];
  /** the directory (with its "/") of the last path found not reserved: its segments are not checked again */
  let clearDir = "";
  let start = 0;
  while (start < text.length) {
    // "<tag> <mode> <oid> <stage>\t<path>": the usual record's separators sit at fixed places (a one-letter tag,
    // a six-digit mode, a SHA-1 or SHA-256 id, a one-digit stage); any other is scanned for
    let sp1 = start + 1;
    let sp2 = start + 8;
    let sp3 = start + 49;
    let tab = start + 51;
    if (text.charCodeAt(sp1) !== 32 || text.charCodeAt(sp2) !== 32 || !((text.charCodeAt(sp3) === 32 && text.charCodeAt(tab) === 9) || (text.charCodeAt((sp3 = start + 73)) === 32 && text.charCodeAt((tab = start + 75)) === 9))) {
      tab = text.indexOf("\t", start);
      sp1 = text.indexOf(" ", start);
      sp2 = sp1 < 0 ? -1 : text.indexOf(" ", sp1 + 1);
      sp3 = sp2 < 0 ? -1 : text.indexOf(" ", sp2 + 1);
    }
    let end = text.indexOf("\0", start);
    if (end < 0) end = text.length;
    if (tab > start && tab < end && sp1 > start && sp3 > sp2 && sp3 < tab) {
      let path: string | null = text.slice(tab + 1, end);
      let wide = false;
      if (nextWide < end) {
        if (NON_ASCII.test(path)) {
          path = decodePath(bytes.subarray(tab + 1, end));
          wide = path !== null && WIDE.test(path);
        }
        nextWide = wideFrom(text, end);
      }
      let reserved = false;
      if (path !== null) {
        const shared = clearDir !== "" && path.startsWith(clearDir);
        reserved = isReservedPath(path, shared ? clearDir.length : 0);
        const dirEnd = path.lastIndexOf("/") + 1;
        if (!reserved && (!shared || dirEnd !== clearDir.length)) clearDir = path.slice(0, dirEnd);
      }
      out.push(recordOf(text, start, sp1, sp2, sp3, tab, path, reserved, wide));
    }
    start = end + 1;
  }
  return out;
}

const NON_ASCII = /[^\x00-\x7f]/;
/** A UTF-16 unit of U+D800 or above: where UTF-16 order and byte order can differ (byte-order.ts). */
export const WIDE = /[\ud800-\uffff]/;
const NON_ASCII_FROM = /[^\x00-\x7f]/g;

/** The position of the first character of 0x80 or more at or after `from`, or Infinity (one scan of the listing in all, not a test of every name). */
export function wideFrom(text: string, from: number): number {
  NON_ASCII_FROM.lastIndex = from;
  return NON_ASCII_FROM.exec(text)?.index ?? Infinity;
}

/** Paths and blob ids per listing: a server asks again for the same listing. */
const plainPaths = new WeakMap<Uint8Array, { paths: readonly string[]; oids: readonly string[] }>();

/** The paths of plainIndexFiles, without an object per entry; the same array for the same listing (do not change it). */
export function plainIndexPaths(listing: Uint8Array): readonly string[] {
  return plainIndex(listing).paths;
}

/** The blob ids of plainIndexPaths' entries, in the same order; the same array for the same listing. */
export function plainIndexOids(listing: Uint8Array): readonly string[] {
  return plainIndex(listing).oids;
}

function plainIndex(listing: Uint8Array): { paths: readonly string[]; oids: readonly string[] } {
  const known = plainPaths.get(listing);
  if (known) return known;
  const paths: string[] = [];
  const oids: string[] = [];
  for (const rec of indexRecords(listing)) {
    if (!plainFile(rec)) continue;
    paths.push(rec.path);
    oids.push(rec.oid);
  }
  const both = { paths, oids };
  plainPaths.set(listing, both);
  return both;
}

/**
 * plainIndexFiles in pieces of about `pieceBytes` of the listing, each parsed when asked for, so a caller can
 * start on the first entries while the rest is parsed (the index build: its first read starts about 150 ms
 * sooner on the bench tree). A listing parsed already is given whole.
 */
export function* plainIndexFilePieces(listing: Uint8Array, pieceBytes = 1 << 20): Generator<TreeEntry[]> {
  if (parsed.has(listing)) {
    yield plainIndexFiles(listing);
    return;
  }
  for (let start = 0; start < listing.length; ) {
    // a piece ends after a record's NUL: each is a listing of its own
    const cut = start + pieceBytes >= listing.length ? listing.length : listing.indexOf(0, start + pieceBytes) + 1 || listing.length;
    yield plainIndexFiles(listing.subarray(start, cut));
    start = cut;
  }
}

/**
 * Index entries that are clean if git status does not name them: plain
 * (not assume-unchanged, not skip-worktree) regular files at stage 0, with
 * their blob ids. What a capture can start reading before the status is in.
 */
export function plainIndexFiles(listing: Uint8Array): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const rec of indexRecords(listing)) {
    if (!plainFile(rec)) continue;
    out.push({ path: rec.path, mode: rec.mode as FileMode, gitOid: rec.oid });
  }
  return out;
}

/** plainIndexFiles as the items a read ahead hashes, numbered in order, leaving out the blob ids `skip` names. */
export function plainIndexItems(listing: Uint8Array, skip?: (oid: string) => boolean): HashItem[] {
  const out: HashItem[] = [];
  for (const rec of indexRecords(listing)) {
    if (!plainFile(rec) || skip?.(rec.oid)) continue;
    out.push({ index: out.length, path: rec.path, gitOid: rec.oid, mode: rec.mode });
  }
  return out;
}

/**
 * plainIndexItems (nothing skipped) with each item's position among the listing's plain records, as the native
 * planner counts them (src/native/listing_plan.c: tag H, stage 0, a regular mode, an id of 40 or 64 digits,
 * whatever the name): `plainAt[i]` is item i's; `plain` counts them all, names left out included. null when
 * a record's blob id is of another length than the first's, or neither, which the planner does not count.
 */
export function plainIndexItemsAt(listing: Uint8Array): { items: HashItem[]; plainAt: Int32Array; plain: number } | null {
  const records = indexRecords(listing);
  const items: HashItem[] = [];
  const plainAt = new Int32Array(records.length);
  let plain = 0;
  let idLength = 0;
  for (const rec of records) {
    if (rec.tag !== "H" || rec.stage !== "0" || (rec.mode !== "100644" && rec.mode !== "100755")) continue;
    if (idLength === 0 && (rec.oid.length === 40 || rec.oid.length === 64)) idLength = rec.oid.length;
    if (rec.oid.length !== idLength) return null;
    if (rec.path !== null && !rec.reserved) {
      plainAt[items.length] = plain;
      items.push({ index: items.length, path: rec.path, gitOid: rec.oid, mode: rec.mode });
    }
    plain++;
  }
  return { items, plainAt: plainAt.subarray(0, items.length), plain };
}

/** A plain (tag H) regular file at stage 0, its path decoded and not reserved: git status vouches for it when it does not name it. */
function plainFile(rec: IndexRecord): rec is IndexRecord & { path: string } {
  return rec.tag === "H" && rec.stage === "0" && (rec.mode === "100644" || rec.mode === "100755") && rec.path !== null && !rec.reserved;
}

/**
 * A digest of the listing's entries git status does not look at, as `ls-files -v` tags them (lower case:
 * assume-unchanged; S: skip-worktree; M: unmerged): "" when there is none, the usual index. What a warm capture
 * must find unchanged besides the fingerprint (warm-cache.ts).
 */
export function flaggedEntriesDigest(listing: Uint8Array): string {
  let text = "";
  for (const rec of indexRecords(listing)) {
    if (rec.tag === "H") continue;
    text += `${rec.tag} ${rec.stage} ${rec.path ?? `(not UTF-8) ${rec.oid}`}\0`;
  }
  return text === "" ? "" : sha256Hex(text);
}

/** What a git tree scan is made of: the status, the raw index listing and the untracked files. */
export interface GitTreeInputs {
  /** RepoRoot.root, which the listing's paths are named from: where skip-worktree entries are looked for. */
  root: string;
  info: StatusInfo;
  /** The raw status the info came from. */
  status: Uint8Array;
  /** Raw `git ls-files -s -z` output for the scope, read on first use. */
  listing: () => Promise<Uint8Array>;
  /** Untracked, not-ignored files in scope, sorted by bytes. */
  untracked: TreeEntry[];
  skipped: ScanSkips;
}

/**
 * Reads the status-derived parts; the index listing starts now if given, on first use otherwise. `guess`: the
 * untracked directories' listing started beside the status (untracked-guess.ts).
 */
export async function readGitTreeInputs(
  repo: RepoRoot,
  status: Uint8Array,
  scope: RepoPath[],
  indexListing?: Promise<GitResult>,
  guess?: UntrackedGuess | null,
): Promise<GitTreeInputs> {
  const info = parseStatus(status, repo.gitPrefix);
  const skipped: ScanSkips = { non_utf8: info.nonUtf8, submodules: 0 };
  let started = indexListing;
  const listing = async () => {
    started ??= startIndexListing(repo, scope);
    return (await started).stdout;
  };
  const untracked = await untrackedCandidates(repo, info, scope, skipped, guess ?? null);
  return { root: repo.root, info, status, listing, untracked, skipped };
}

/**
 * Candidate files of a git work tree under `scope`, sorted by UTF-8 bytes:
 * the index (minus files missing on disk) plus untracked, not-ignored files.
 * Clean tracked files carry their index blob id so nobody has to read them.
 */
export async function scanGitTree(
  repo: RepoRoot,
  status: Uint8Array,
  scope: RepoPath[],
  indexListing: Promise<GitResult> = startIndexListing(repo, scope),
): Promise<TreeScan> {
  return gitTreeEntries(await readGitTreeInputs(repo, status, scope, indexListing));
}

export async function gitTreeEntries(inputs: GitTreeInputs): Promise<TreeScan> {
  const listing = await inputs.listing();
  const { tracked: plain, hidden, skipped } = trackedEntries(listing, inputs);
  // skip-worktree entries are looked for at every scan: git status never does, so nothing else tells
  const sparse = hidden.length === 0 ? null : presentSkipWorktree(inputs.root, hidden);
  const tracked = sparse && sparse.present.length > 0 ? mergeSorted(plain, sparse.present) : plain;
  const untracked = inputs.untracked;
  return { entries: untracked.length === 0 ? tracked : mergeSorted(tracked, untracked), skipped, absentSkipWorktree: sparse?.absent ?? [] };
}

/**
 * The tracked part of a scan depends on nothing but the listing and the
 * status bytes; a server keeping listings keeps the last one too, so a read
 * of an unchanged tree does not build 100k entries again. (Untracked files
 * are listed afresh every time: a file added inside an untracked directory
 * does not change the status.)
 */
let lastTracked: { listing: Uint8Array; status: Uint8Array; tracked: TreeEntry[]; hidden: TreeEntry[]; skipped: ScanSkips } | null = null;

/** The tracked candidates git vouches for or names (`tracked`), and the skip-worktree entries, which it does neither for (`hidden`). */
function trackedEntries(listing: Uint8Array, inputs: GitTreeInputs): { tracked: TreeEntry[]; hidden: TreeEntry[]; skipped: ScanSkips } {
  const hit = lastTracked;
  if (keepListings && hit && hit.listing === listing && Buffer.from(hit.status).equals(inputs.status)) {
    const skipped = { ...inputs.skipped };
    skipped.non_utf8 += hit.skipped.non_utf8;
    skipped.submodules += hit.skipped.submodules;
    return { tracked: hit.tracked, hidden: hit.hidden, skipped };
  }
  const st = inputs.info;
  const skipped: ScanSkips = { ...inputs.skipped };
  const own: ScanSkips = { non_utf8: 0, submodules: 0 };
  const tracked: TreeEntry[] = [];
  const hidden: TreeEntry[] = [];
  let lastPath = "";
  let lastWide = false;
  let sorted = true;
  // git keeps its index in byte order; two paths without a unit of U+D800 or above are checked with the runtime's
  // comparison (UTF-16 order is byte order for them), others with compareUtf8
  for (const rec of indexRecords(listing)) {
    const path = rec.path;
    if (path === null) {
      own.non_utf8++;
      continue;
    }
    if (path === lastPath) continue; // unmerged stages of one path
    const mode = rec.mode;
    if (mode === "160000") {
      own.submodules++;
      continue;
    }
    if (rec.reserved || st.missing.has(path)) continue;
    const clean = rec.stage === "0" && rec.tag === "H" && !st.dirty.has(path);
    if (sorted && lastPath !== "" && (lastWide || rec.wide ? compareUtf8(lastPath, path) > 0 : lastPath > path)) sorted = false;
    lastPath = path;
    lastWide = rec.wide;
    // the index's other modes are 100644, 100755 and 120000
    if (rec.tag === "S" || rec.tag === "s") hidden.push({ path, mode: mode as FileMode, wide: rec.wide });
    else tracked.push(clean ? { path, mode: mode as FileMode, gitOid: rec.oid, wide: rec.wide } : { path, mode: mode as FileMode, wide: rec.wide });
  }
  if (!sorted) {
    tracked.sort((a, b) => compareUtf8(a.path, b.path));
    hidden.sort((a, b) => compareUtf8(a.path, b.path));
  }
  if (keepListings) lastTracked = { listing, status: inputs.status.slice(), tracked, hidden, skipped: own };
  skipped.non_utf8 += own.non_utf8;
  skipped.submodules += own.submodules;
  return { tracked, hidden, skipped };
}

async function untrackedCandidates(repo: RepoRoot, st: StatusInfo, scope: RepoPath[], skipped: ScanSkips, guess: UntrackedGuess | null): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  for (const path of st.untrackedFiles) if (!isReservedPath(path) && inScope(path, scope)) out.push({ path, mode: "" });
  const dirs = st.untrackedDirs.filter((d) => !isReservedPath(d) && (inScope(d, scope) || scope.some((s) => isWithin(s, d as RepoPath))));
  // git's status (untracked files "normal") names no untracked directory standing where a tracked file was deleted
  // (" D a", and a directory `a/` made in its place): its files are listed like any untracked directory's
  for (const path of st.missing) {
    if (!isReservedPath(path) && (inScope(path, scope) || scope.some((s) => isWithin(s, path as RepoPath))) && isDirectory(join(repo.root, path))) dirs.push(path);
  }
  rememberUntracked(repo, scope, dirs);
  if (dirs.length > 0) {
    const others = await (guess && sameDirs(guess.dirs, dirs) ? guess.listing : listOthers(repo, literalPathspecs(dirs as RepoPath[])));
    for (const rec of splitNul(others.stdout)) {
      const path = decodePath(rec);
      if (path === null) skipped.non_utf8++;
      else if (path.endsWith("/")) skipped.submodules++;
      else if (!isReservedPath(path) && inScope(path, scope)) out.push({ path, mode: "" });
    }
  }
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false; // gone, as the status said, or below something that is not a directory
  }
}

/** Merges two byte-sorted lists; a path present in both keeps the first list's entry. */
export function mergeSorted<E extends { path: string }>(a: E[], b: E[]): E[] {
  // a few untracked files among many tracked ones (the usual case): each is placed by a binary search, and the
  // runs of `a` between them are copied whole, instead of comparing every path of `a`
  if (b.length * 32 < a.length) return insertSorted(a, b);
  const out: E[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const c = compareUtf8((a[i] as E).path, (b[j] as E).path);
    if (c < 0) out[k++] = a[i++] as E;
    else if (c > 0) out[k++] = b[j++] as E;
    else {
      out[k++] = a[i++] as E;
      j++;
    }
  }
  while (i < a.length) out[k++] = a[i++] as E;
  while (j < b.length) out[k++] = b[j++] as E;
  out.length = k;
  return out;
}

/** mergeSorted for a short `b`: each of b's placed by binary search in `a`, the runs of `a` between them copied whole. */
function insertSorted<E extends { path: string }>(a: E[], b: E[]): E[] {
  const parts: E[][] = [];
  let from = 0;
  for (const e of b) {
    const lo = searchUtf8(a, e.path, pathOf, from);
    if (lo > from) parts.push(a.slice(from, lo));
    from = lo;
    // a path in both keeps a's entry (copied with the next run)
    if (lo < a.length && (a[lo] as E).path === e.path) continue;
    parts.push([e]);
  }
  if (from < a.length) parts.push(from === 0 ? a.slice() : a.slice(from));
  return ([] as E[]).concat(...parts);
}

const pathOf = (e: { path: string }) => e.path;
