import { blobIdFromHex, sha256Hex } from "../../core/hash";
import { ConversionCheck } from "../../repo/content-conversion";
import { type RevisionEntry, listRevisionTree } from "../../repo/git-revision";
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
 * A commit's files as one side of a comparison: what git stores, read from
 * its objects (no checkout, no index, no lock); revisionBlobs of the whole
 * tree, kept per commit.
 */
export async function revisionEntries(ws: Workspace, commit: string, signal?: AbortSignal): Promise<SideEntry[]> {
  const key = `${ws.repo.stateDir}\0${commit}`;
  const hit = kept.get(key);
  if (hit) return hit;
  // the listing is kept only where a comparison needs it again (revisionTree): the entries hold all of it that this needs
  const tree = listings.get(key) ?? (await listRevisionTree(ws.repo, commit)).entries;
  return remember(kept, key, await revisionBlobs(ws, tree, signal));
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
 * when some of its files are compared), not only these entries.
 */
export async function revisionBlobs(ws: Workspace, entries: readonly RevisionEntry[], signal?: AbortSignal, conversionScope: readonly (readonly RevisionEntry[])[] = [entries]): Promise<SideEntry[]> {
  const map = ws.blobs.gitMap;
  // one lookup an entry: 100k of them are most of a commit's side once its listing is kept
  const known = entries.map((e) => map.get(e.oid)?.sha256);
  const unknown = [...new Set(entries.filter((_, i) => known[i] === undefined).map((e) => e.oid))];
  const loose = new Map<string, string>();
  if (unknown.length > 0) {
    const check = new ConversionCheck(ws.repo);
    let converting = false;
    for (const files of conversionScope) if (!converting) converting = await check.possibleFor(files);
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
  return entries.map((e, i) => ({ path: e.path, mode: e.mode, blob: blobIdFromHex(known[i] ?? loose.get(e.oid) ?? map.get(e.oid)!.sha256) }));
}
