import { compareUtf8, searchUtf8 } from "../../core/byte-order";
import { type BlobId, blobIdFromHex, sha256Hex } from "../../core/hash";
import { ConversionCheck } from "../../repo/content-conversion";
import { type RevisionEntry, listRevisionTree } from "../../repo/git-revision";
import type { TreeEntry } from "../../repo/tree-scan";
import { ROOT, type RepoPath } from "../../core/repo-path";
import type { SideEntry } from "./tree-side";
import type { Workspace } from "../workspace";

/** Commits whose entries a process keeps (a commit never changes, so they never go stale). */
const KEPT = 4;
/** Commits whose listings (git's blob ids too: some 20 MB for 100k files) it keeps, for the comparisons that need them. */
const KEPT_LISTINGS = 2;
/** Blob reads in flight at once when a commit's blobs are new to the store. */
const READ_WINDOW = 256;
const listings = new Map<string, RevisionEntry[]>();
const kept = new Map<string, SideEntry[]>();

function remember<T>(cache: Map<string, T>, key: string, value: T, most = KEPT): T {
  if (cache.size >= most) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

/** Every file of a commit's tree as git stores it (listRevisionTree), sorted by bytes; kept per commit. */
export async function revisionTree(ws: Workspace, commit: string): Promise<RevisionEntry[]> {
  const key = `${ws.repo.stateDir}\0${commit}`;
  return listings.get(key) ?? remember(listings, key, (await listRevisionTree(ws.repo, commit)).entries, KEPT_LISTINGS);
}

/**
 * Whether this process holds what a comparison needs of a commit under `scope` already (its listing; for the whole
 * tree, its entries will do): nothing is asked of git for it.
 */
export function commitListed(ws: Workspace, commit: string, scope: RepoPath[]): boolean {
  const key = `${ws.repo.stateDir}\0${commit}`;
  return listings.has(key) || (scope.length === 1 && scope[0] === ROOT && kept.has(key));
}

/** A commit's files under a scope: all of them (`whole`), or at least those under the scope. */
export interface CommitFiles {
  entries: RevisionEntry[];
  whole: boolean;
}

/**
 * A commit's files under `scope`: as `viaIndex` told them (revision-via-index.ts: from the index listing a
 * comparison with the work tree made anyway), else its whole tree (revisionTree). What the index told is kept as
 * the commit's listing where it is the whole tree.
 */
export async function commitFiles(ws: Workspace, commit: string, scope: RepoPath[], viaIndex?: Promise<RevisionEntry[] | null>): Promise<CommitFiles> {
  const key = `${ws.repo.stateDir}\0${commit}`;
  const listed = listings.get(key);
  if (listed) return { entries: listed, whole: true };
  // a failure of git there is told by the listing of the tree, which fails alike, or answers
  const told = viaIndex ? await viaIndex.catch(() => null) : null;
  if (told === null) return { entries: await revisionTree(ws, commit), whole: true };
  const whole = scope.length === 1 && scope[0] === ROOT;
  if (whole) remember(listings, key, told, KEPT_LISTINGS);
  return { entries: told, whole };
}

/**
 * A commit's files as one side of a comparison: what git stores, read from
 * its objects (no checkout, no index, no lock); revisionBlobs of the whole
 * tree, kept per commit. `viaIndex`: see commitFiles.
 */
export async function revisionEntries(ws: Workspace, commit: string, signal?: AbortSignal, viaIndex?: Promise<RevisionEntry[] | null>, indexed?: IndexedBlobs): Promise<SideEntry[]> {
  const key = `${ws.repo.stateDir}\0${commit}`;
  const hit = kept.get(key);
  if (hit) return hit;
  // the listing is kept only where a comparison needs it again (revisionTree): the entries hold all of it that this needs
  const tree = listings.get(key) ?? (viaIndex ? await viaIndex.catch(() => null) : null) ?? (await listRevisionTree(ws.repo, commit)).entries;
  return remember(kept, key, await revisionBlobs(ws, tree, signal, [tree], indexed));
}

/**
 * The blobs a capture of the work tree took as its clean tracked files' index blobs (captureEntries), looked up by
 * path and git blob id: where a commit holds such a file alike, its blob is the work tree's, and the blob map is
 * not asked (a lookup there costs about 1 µs; a commit of 100k files near the index holds almost all of them
 * alike). Asked in path order (a cursor; a path before it is searched for).
 */
export class IndexedBlobs {
  private at = 0;

  /** `candidates` and `captured` sorted by bytes, as the capture took and made them. */
  constructor(
    private readonly candidates: readonly TreeEntry[],
    private readonly captured: readonly SideEntry[],
    private readonly notAsIndexed: ReadonlySet<string>,
  ) {}

  /** `oid`'s blob where the capture took the file at `path` for its index blob `oid`; undefined elsewhere. */
  blobOf(path: string, oid: string): BlobId | undefined {
    const candidates = this.candidates;
    let i = this.at;
    if (i < candidates.length && (candidates[i] as TreeEntry).path !== path && compareUtf8((candidates[i] as TreeEntry).path, path) > 0) {
      i = searchUtf8(candidates, path, (e) => e.path);
    }
    while (i < candidates.length && (candidates[i] as TreeEntry).path !== path && compareUtf8((candidates[i] as TreeEntry).path, path) < 0) i++;
    this.at = i;
    const cand = candidates[i];
    if (cand === undefined || cand.path !== path || cand.gitOid !== oid || this.notAsIndexed.has(path)) return undefined;
    // the captured entries are the candidates less those that vanished or could not be read
    const captured = this.captured;
    const k = i < captured.length && (captured[i] as SideEntry).path === path ? i : searchUtf8(captured, path, (e) => e.path);
    const entry = captured[k];
    return entry !== undefined && entry.path === path ? entry.blob : undefined;
  }
}

/**
 * Entries named by git blob id (a commit's, or the index's) as side entries.
 * Each blob's sha256 comes from the blob map when the private store already
 * holds it (every clean tracked file a capture has seen); the others are
 * copied into the private store the way a capture copies them and hashed
 * once, so later reads and diffs find them by sha256 like any snapshot's.
 * Only these entries' blobs are read: a comparison of one directory of a
 * commit reads none of the others. The bytes are git's, not converted for
 * the work tree (no eol conversion, no filters): see docs/decisions.md.
 *
 * The blob map also tells a capture what a clean tracked file holds, which is
 * only true where git converts nothing; where it may, a new blob goes to the
 * loose store instead and the map is left as it was. The map is by blob, not
 * by path, so "where" is every file of `conversionScope` (the whole commit,
 * when some of its files are compared), not only these entries; a function
 * where listing them costs, called only when some blob is new to the map.
 */
export async function revisionBlobs(
  ws: Workspace,
  entries: readonly RevisionEntry[],
  signal?: AbortSignal,
  conversionScope: readonly (readonly RevisionEntry[])[] | (() => Promise<readonly (readonly RevisionEntry[])[]>) = [entries],
  indexed?: IndexedBlobs,
): Promise<SideEntry[]> {
  const map = ws.blobs.gitMap;
  // one lookup an entry, where the work tree's capture does not tell the blob already
  const known: (BlobId | undefined)[] = entries.map((e) => {
    const told = indexed?.blobOf(e.path, e.oid);
    if (told !== undefined) return told;
    const info = map.get(e.oid);
    return info === undefined ? undefined : blobIdFromHex(info.sha256);
  });
  const unknown = [...new Set(entries.filter((_, i) => known[i] === undefined).map((e) => e.oid))];
  const loose = new Map<string, string>();
  if (unknown.length > 0) {
    const check = new ConversionCheck(ws.repo);
    let converting = false;
    // asked for only now: the whole commit's files may have to be listed for it
    const where = typeof conversionScope === "function" ? await conversionScope() : conversionScope;
    for (const files of where) if (!converting) converting = await check.possibleFor(files);
    await ws.blobs.gitObjects.importFrom(ws.repo, unknown);
    for (let i = 0; i < unknown.length; i += READ_WINDOW) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      const batch = unknown.slice(i, i + READ_WINDOW);
      const read = await Promise.all(batch.map(async (oid) => ({ oid, bytes: await ws.blobs.gitObjects.read(oid) })));
      const hashed = read.map(({ oid, bytes }) => ({ oid, bytes, sha256: sha256Hex(bytes), size: bytes.length }));
      if (!converting) map.add(hashed.map(({ oid, sha256, size }) => ({ oid, sha256, size })));
      else {
        for (const h of hashed) {
          ws.blobs.loose.writeKnown(blobIdFromHex(h.sha256), h.bytes);
          loose.set(h.oid, h.sha256);
        }
      }
    }
  }
  return entries.map((e, i) => ({ path: e.path, mode: e.mode, blob: known[i] ?? blobIdFromHex(loose.get(e.oid) ?? map.get(e.oid)!.sha256) }));
}
