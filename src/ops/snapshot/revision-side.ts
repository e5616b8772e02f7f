import { blobIdFromHex, sha256Hex } from "../../core/hash";
import { ConversionCheck } from "../../repo/content-conversion";
import { listRevisionTree } from "../../repo/git-revision";
import type { SideEntry } from "./tree-side";
import type { Workspace } from "../workspace";

/** Commits whose entries a process keeps (a commit never changes, so they never go stale). */
const KEPT = 4;
/** Blob reads in flight at once when a commit's blobs are new to the store. */
const READ_WINDOW = 256;
const kept = new Map<string, SideEntry[]>();

/**
 * A commit's files as one side of a comparison: what git stores, read from
 * its objects (no checkout, no index, no lock). Each blob's sha256 comes from
 * the blob map when the private store already holds it (every clean tracked
 * file a capture has seen); the others are copied into the private store the
 * way a capture copies them and hashed once, so later reads and diffs find
 * them by sha256 like any snapshot's. The bytes are git's, not converted for
 * the work tree (no eol conversion, no filters): see docs/decisions.md.
 *
 * The blob map also tells a capture what a clean tracked file holds, which is
 * only true where git converts nothing; in a repository where it may, a new
 * blob goes to the loose store instead and the map is left as it was.
 */
export async function revisionEntries(ws: Workspace, commit: string, signal?: AbortSignal): Promise<SideEntry[]> {
  const key = `${ws.repo.stateDir}\0${commit}`;
  const hit = kept.get(key);
  if (hit) return hit;
  const tree = await listRevisionTree(ws.repo, commit);
  const map = ws.blobs.gitMap;
  const unknown = [...new Set(tree.entries.filter((e) => !map.has(e.oid)).map((e) => e.oid))];
  const loose = new Map<string, string>();
  if (unknown.length > 0) {
    const converting = await new ConversionCheck(ws.repo).possibleFor(tree.entries);
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
  const entries = tree.entries.map((e) => ({ path: e.path, mode: e.mode, blob: blobIdFromHex(loose.get(e.oid) ?? map.get(e.oid)!.sha256) }));
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value as string);
  kept.set(key, entries);
  return entries;
}
