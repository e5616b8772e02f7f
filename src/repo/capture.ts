import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "../core/byte-order";
import { isMissingPath } from "../core/errors";
import { modeOfStat, type FileMode } from "../core/file-mode";
import { blobIdFromHex, type BlobId } from "../core/hash";
import { perPath } from "../core/per-path";
import { settleAll } from "../core/settle";
import type { HashItem, HashOutcome } from "./hash-files";
import { splitFollowers } from "./blob-followers";
import { hashInParallel } from "./hash-pool";
import type { Prehash, PrehashList } from "./prehash";
import { freshen } from "./fs-blob-store";
import type { RepoBlobStore } from "./repo-blob-store";
import type { RepoRoot } from "./root";
import { ConversionCheck } from "./content-conversion";
import { RACY_MARGIN_MS, StatCache } from "./stat-cache";
import type { TreeEntry } from "./tree-scan";
import { type ModeRules, modeRules } from "./mode-rules";

export interface CapturedEntry {
  path: string;
  blob: BlobId;
  mode: FileMode;
  size: number;
}

export interface CaptureResult {
  entries: CapturedEntry[];
  /** Candidates that disappeared between the walk and the read. */
  vanished: string[];
  /**
   * Candidates that could not be read, sorted by bytes: permission denied, or
   * a FIFO, socket or device where a file was listed. They are left out of
   * `entries`, as git and ripgrep skip what they cannot read, and named.
   */
  unreadable: string[];
  /**
   * Candidates git vouched for (`gitOid`) whose bytes, read, are not their index blob's (git converts their content
   * here, or they changed after git's status); every other such candidate's entry holds its index blob.
   */
  notAsIndexed: ReadonlySet<string>;
  /**
   * The pairs of git blob id and sha256 the capture learnt (files read whose bytes were their index blob's, or that
   * git vouched for): in the blob map already, unless the caller asked to enter them (learntByCaller). A pair is
   * only as sound as the candidates: a clean candidate named with a blob its file does not hold (a status and a
   * listing of two indexes) pairs that blob with other bytes, and the store would then serve the file's bytes as
   * the blob's, or the blob's as the file's.
   */
  learnt: { oid: string; sha256: string; size: number }[];
}

export interface CaptureOptions {
  signal?: AbortSignal;
  /**
   * When git compared the work tree with the index (the start of the `git
   * status` the candidates came from), ms since the epoch. A clean tracked
   * file that has not changed since safely before then holds its index blob's
   * bytes, unless git converts content here (see contentConversionPossible),
   * so git's blob hash of it is skipped. Without it every file is verified.
   */
  gitComparedAt?: number;
  /** Files already being read ahead of the status (a cold capture); used where they are still clean. */
  prehash?: Prehash;
  /**
   * The blobs learnt are not entered in the blob map: they are returned (CaptureResult.learnt) for the caller to
   * enter once it knows its candidates were sound (a snapshot's capture: see createSnapshot's IndexReplaced).
   */
  learntByCaller?: boolean;
  /**
   * Told each entry, in order, as soon as it and every one before it are known (a snapshot's manifest is
   * encoded and written while the rest is read: SnapshotStore.manifestWriter).
   */
  onEntry?: (entry: CapturedEntry) => void;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Turns candidates into manifest entries, storing every blob.
 * - Clean tracked files whose git blob id is in the map cost a lookup.
 * - Other clean tracked files are read once on every core and hashed with
 *   sha256, and with git's blob hash unless the caller vouches for them (see
 *   trustCleanBefore); meanwhile their git objects are copied into the private
 *   store. Only files whose bytes equal their index blob are entered in the
 *   map, so eol conversion or filters never confuse the two.
 * - Everything else goes through the stat cache and the loose store.
 */
export async function captureEntries(repo: RepoRoot, store: RepoBlobStore, candidates: TreeEntry[], opts: CaptureOptions = {}): Promise<CaptureResult> {
  const statCache = new StatCache(repo.stateDir);
  const entries = new EntryFold(candidates, statCache, opts.onEntry, await modeRules(repo));
  const { slots, settled, vanished, unreadable } = entries;
  const toRead: HashItem[] = [];
  const readAhead: PrehashList | null = opts.prehash ? await opts.prehash.listed : null;
  /** Candidates the read ahead covers, and the read-ahead index of each. */
  const ahead: number[] = [];
  const aheadAt: number[] = [];
  // a read ahead runs only for a store whose blob map was empty (Prehash.worthwhile): no lookups then
  const mapped = readAhead === null;
  for (let i = 0; i < candidates.length; i++) {
    const cand = candidates[i] as TreeEntry;
    if (cand.gitOid) {
      const known = mapped ? store.gitMap.get(cand.gitOid) : undefined;
      if (known) {
        slots[i] = { path: cand.path, blob: blobIdFromHex(known.sha256), mode: cand.mode as FileMode, size: known.size };
        settled[i] = 1;
        continue;
      }
      // only regular files are read ahead: nothing else is looked for among them
      const k = cand.mode === "100644" || cand.mode === "100755" ? readAhead?.find(cand.path) : undefined;
      if (k !== undefined && readAhead?.items[k]?.gitOid === cand.gitOid) {
        ahead.push(i);
        aheadAt.push(k);
      }
      else toRead.push({ index: i, path: cand.path, gitOid: cand.gitOid, mode: cand.mode });
      continue;
    }
    const cached = cachedEntry(repo, store, statCache, cand.path);
    if (cached === "vanished") vanished.push(cand.path);
    else if (cached === "unreadable") unreadable.push(cand.path);
    else if (cached) slots[i] = entries.withGitMode(cand, cached);
    else {
      toRead.push({ index: i, path: cand.path });
      continue;
    }
    settled[i] = 1;
  }
  /** read-ahead items read again: their git objects are the read ahead's to copy into the store */
  const reread: HashItem[] = [];
  // A path the read ahead takes from its blob's first path (blob-followers.ts) counts only where git status found
  // that first path clean too: read before the status was in, a first path it names may hold other bytes. The
  // others are read now, beside the rest of the read ahead (after it, they made the end of the capture later).
  if (readAhead && ahead.length > 0 && (await opts.prehash?.vouching)) {
    const split = splitFollowers(readAhead.items);
    const leadOf = new Int32Array(readAhead.items.length).fill(-1);
    for (let j = 0; j < split.followers.length; j++) leadOf[(split.followers[j] as HashItem).index] = (split.leaders[split.leaderOf[j] as number] as HashItem).index;
    const clean = new Uint8Array(readAhead.items.length);
    for (const k of aheadAt) clean[k] = 1;
    let kept = 0;
    for (let n = 0; n < ahead.length; n++) {
      const i = ahead[n] as number;
      const k = aheadAt[n] as number;
      const lead = leadOf[k] as number;
      if (lead >= 0 && clean[lead] === 0) {
        const cand = candidates[i] as TreeEntry;
        reread.push({ index: i, path: cand.path, gitOid: cand.gitOid, mode: cand.mode });
      } else {
        ahead[kept] = i;
        aheadAt[kept++] = k;
      }
    }
    ahead.length = kept;
    aheadAt.length = kept;
  }
  // the read ahead's outcomes are taken as they come: the entries they complete are told meanwhile
  if (readAhead && ahead.length > 0 && opts.prehash) {
    const candOf = new Int32Array(readAhead.items.length).fill(-1);
    for (let n = 0; n < ahead.length; n++) candOf[aheadAt[n] as number] = ahead[n] as number;
    entries.followAhead(candOf);
    opts.prehash.subscribe(entries.tookAhead.bind(entries));
  }
  entries.tell();
  const alreadyKnown = candidates.length - toRead.length - reread.length - ahead.length;
  opts.onProgress?.(alreadyKnown, candidates.length);
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");

  const own = toRead.filter((t) => t.gitOid);
  const importing = store.gitObjects.importFrom(repo, [...new Set(own.map((t) => t.gitOid as string))]);
  const gitItems = own.concat(reread);
  // what the read ahead does not cover is read meanwhile; files git does not vouch for need no cutoff, so their
  // reading starts at once, and the clean ones' as soon as the cutoff is known
  const hashOpts = { root: repo.root, stateDir: repo.stateDir, trustCleanBefore: 0 };
  const others = toRead.filter((t) => !t.gitOid);
  let othersDone = 0;
  let cleanDone = 0;
  const report = () => opts.onProgress?.(alreadyKnown + othersDone + cleanDone, candidates.length);
  const conversion = opts.prehash?.conversion ?? new ConversionCheck(repo);
  // both settle before the capture goes on or throws, so no hashing outlives it
  const took = entries.took.bind(entries);
  const reading = settleAll([
    hashInParallel(hashOpts, others, (n) => ((othersDone = n), report()), undefined, undefined, took),
    cleanTrustCutoff(conversion, gitItems, opts.gitComparedAt).then((trustCleanBefore) =>
      hashInParallel({ ...hashOpts, trustCleanBefore }, gitItems, (n) => ((cleanDone = n), report()), undefined, undefined, took),
    ),
  ]).then(([a, b]) => a.concat(b));
  const [outcomes, aheadOutcomes] = await settleAll([reading, opts.prehash?.outcomes]);
  // every outcome was taken as it came; any that was not is taken now
  for (const o of outcomes) if (settled[o.index] === 0) entries.fold(o.index, o);
  for (let n = 0; n < ahead.length; n++) if (settled[ahead[n] as number] === 0) entries.fold(ahead[n] as number, aheadOutcomes?.[aheadAt[n] as number] as HashOutcome);
  entries.tell();
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
  await Promise.all([importing, ahead.length + reread.length > 0 ? opts.prehash?.importing : undefined]);
  const learnt = [...entries.imports.values()];
  if (!opts.learntByCaller) store.gitMap.add(learnt);
  statCache.save();
  opts.onProgress?.(candidates.length, candidates.length);
  vanished.sort(compareUtf8);
  unreadable.sort(compareUtf8);
  const captured = vanished.length + unreadable.length === 0 ? (slots as CapturedEntry[]) : slots.filter((s): s is CapturedEntry => s !== null);
  return { entries: captured, vanished, unreadable, notAsIndexed: entries.notAsIndexed, learnt };
}

/**
 * A capture's entries as its outcomes come: each outcome folded into its candidate's slot, and every entry
 * told, in order, once it and each one before it are final (a snapshot's manifest is written meanwhile).
 * Methods rather than closures, so that they can be declared as run per path (core/per-path.ts).
 */
class EntryFold {
  readonly slots: (CapturedEntry | null)[];
  /** 1 once a candidate's slot is final (an entry, or null when it vanished or could not be read) */
  readonly settled: Uint8Array;
  readonly vanished: string[] = [];
  readonly unreadable: string[] = [];
  /** CaptureResult.notAsIndexed */
  readonly notAsIndexed = new Set<string>();
  /** what enters the blob map: each blob once, however many paths hold it */
  readonly imports = new Map<string, { oid: string; sha256: string; size: number }>();
  /** the entries before it have been given to onEntry */
  private told = 0;
  /** each read-ahead item's candidate (-1: none), once the read ahead's outcomes are followed */
  private candOf: Int32Array = new Int32Array(0);

  constructor(
    private readonly candidates: TreeEntry[],
    private readonly statCache: StatCache,
    private readonly onEntry?: (entry: CapturedEntry) => void,
    /** mode-rules.ts: where git does not trust the executable bit or make symlinks, it takes modes from the index */
    private readonly rules: ModeRules = { executableBit: true, symlinks: true },
  ) {
    this.slots = new Array(candidates.length).fill(null);
    this.settled = new Uint8Array(candidates.length);
  }

  /**
   * A file's mode as git takes it (`ce_mode_from_stat`): without symlinks, a plain file whose index entry is a
   * symlink is that symlink (its bytes are the link's text); without a trusted executable bit, a regular file
   * keeps its index entry's mode, and a new one is 100644.
   */
  gitMode(cand: TreeEntry, mode: FileMode): FileMode {
    if (mode === "120000") return mode;
    if (!this.rules.symlinks && cand.mode === "120000") return "120000";
    if (this.rules.executableBit) return mode;
    return cand.mode === "100644" || cand.mode === "100755" ? cand.mode : "100644";
  }

  /** `entry` with gitMode's mode. */
  withGitMode(cand: TreeEntry, entry: CapturedEntry): CapturedEntry {
    const mode = this.gitMode(cand, entry.mode);
    return mode === entry.mode ? entry : { ...entry, mode };
  }

  fold(i: number, o: HashOutcome): void {
    const cand = this.candidates[i] as TreeEntry;
    this.settled[i] = 1;
    if (o.kind === "vouched") {
      // its first path is among these outcomes, clean, and enters the blob map
      this.slots[i] = { path: cand.path, blob: o.blob, mode: this.gitMode(cand, o.mode), size: o.size };
      return;
    }
    if (o.kind === "vanished") return void this.vanished.push(cand.path);
    if (o.kind === "denied" || o.kind === "special") return void this.unreadable.push(cand.path);
    this.slots[i] = { path: cand.path, blob: blobIdFromHex(o.sha256), mode: this.gitMode(cand, o.mode), size: o.size };
    if (cand.gitOid && o.gitOid === cand.gitOid) {
      if (!this.imports.has(cand.gitOid)) this.imports.set(cand.gitOid, { oid: cand.gitOid, sha256: o.sha256, size: o.size });
    } else {
      if (cand.gitOid) this.notAsIndexed.add(cand.path);
      this.statCache.record(cand.path, o, o.sha256, o.hashedAt);
    }
  }

  /** Gives onEntry every entry final from the last one told on. */
  tell(): void {
    const onEntry = this.onEntry;
    if (!onEntry) return;
    let told = this.told;
    for (; told < this.candidates.length && this.settled[told] === 1; told++) {
      const entry = this.slots[told];
      if (entry) onEntry(entry);
    }
    this.told = told;
  }

  /** An outcome of the capture's own reading (its index is its candidate's). */
  took(o: HashOutcome): void {
    this.fold(o.index, o);
    this.tell();
  }

  /** The read ahead's outcomes are taken from now on: `candOf` maps its items to candidates. */
  followAhead(candOf: Int32Array): void {
    this.candOf = candOf;
  }

  /** An outcome of the read ahead (its index is its item's), taken where it is a candidate not settled yet. */
  tookAhead(o: HashOutcome): void {
    const i = o.index < this.candOf.length ? (this.candOf[o.index] as number) : -1;
    if (i < 0 || this.settled[i] === 1) return;
    this.fold(i, o);
    this.tell();
  }
}
perPath(EntryFold.prototype.fold);
perPath(EntryFold.prototype.tell);
perPath(EntryFold.prototype.took);
perPath(EntryFold.prototype.tookAhead);
perPath(EntryFold.prototype.gitMode);

/** The ctime before which clean tracked files are taken as their index blobs; 0 trusts none. */
async function cleanTrustCutoff(conversion: ConversionCheck, clean: HashItem[], gitComparedAt: number | undefined): Promise<number> {
  if (gitComparedAt === undefined || clean.length === 0) return 0;
  if (await conversion.possibleFor(clean)) return 0;
  return gitComparedAt - RACY_MARGIN_MS;
}

function cachedEntry(repo: RepoRoot, store: RepoBlobStore, statCache: StatCache, path: string): CapturedEntry | "vanished" | "unreadable" | null {
  let st: Stats;
  try {
    st = lstatSync(join(repo.root, path));
  } catch (err) {
    if (isMissingPath(err)) return "vanished";
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM") return "unreadable"; // a directory above it cannot be searched
    throw err;
  }
  const mode = modeOfStat(st);
  if (mode === null) return st.isDirectory() ? "vanished" : "unreadable"; // a FIFO, socket or device is never read
  const hex = statCache.lookup(path, st);
  if (!hex || !existsLoose(store, hex)) return null;
  return { path, blob: blobIdFromHex(hex), mode, size: st.size };
}

function existsLoose(store: RepoBlobStore, hex: string): boolean {
  const p = store.loose.pathOf(blobIdFromHex(hex));
  const st = lstatSync(p, { throwIfNoEntry: false });
  if (st) freshen(p, st.mtimeMs); // the snapshot about to be saved relies on it: gc must spare it
  return st !== undefined;
}
