/**
 * A query's use of the trigram index: which indexed blobs cannot hold a match
 * (or are binary), so the walk can hand the engine those files as settled,
 * unread. Blobs the index does not hold are read as before. Selections are
 * kept for the last few queries, for as long as the index does not change.
 */
import type { TreeEntry } from "../../repo/tree-scan";
import { BINARY, NO_MATCH, READ, type TrigramIndex, type TrigramSelection, type Verdict } from "../../repo/trigram-index/store";
import { trigramPlan } from "./index-plan";
import { compileQuery, type GrepOptions } from "./query";

export { BINARY, NO_MATCH, READ, type Verdict };

/**
 * A clean tracked file as the live walk lists it: its index blob id, and room for the index's handle of that
 * blob (-1: not indexed) with the index's version, which a server's walk keeps from call to call (the entries of
 * an unchanged index are reused, tree-scan.ts).
 */
export type IndexedEntry = Pick<TreeEntry, "gitOid" | "trigramHandle" | "trigramVersion">;

/** What the walk asks per candidate. */
export interface IndexFilter {
  /** a clean tracked file, by its entry (its index blob id; the lookup of the blob kept on the entry) */
  byEntry(entry: IndexedEntry): Verdict;
  /** the verdicts of index blob ids, in order (a listing's: the lookups kept per array while the index does not change) */
  byGitOids(oids: readonly string[]): Uint8Array;
  /** a stored blob, by its handle in the index (handlesOf; -1: not indexed) */
  byHandle(handle: number): Verdict;
  /**
   * The index's handle of each entry's blob (`sha256:` and the hex), -1 where it holds none. Kept per entries
   * array (a loaded snapshot's entries stay the same array) while the index does not change: a whole-tree
   * search of a 90,000-file snapshot asks for them once, not 90,000 map lookups per call.
   */
  handlesOf(entries: readonly { blob?: string }[]): Int32Array;
  /** the SHA-256 (hex) of the blob with this git id, which the index holds */
  sha256OfGitOid(oid: string): string;
}

const CACHED = 8;
const cache = new WeakMap<TrigramIndex, Map<string, TrigramSelection>>();
const handleCache = new WeakMap<object, { index: TrigramIndex; generation: number; handles: Int32Array }>();
const oidHandles = new WeakMap<readonly string[], { version: number; handles: Int32Array }>();

/** The index's filter for a query; null when the index holds nothing or the query has no trigram to ask. */
export function indexFilter(index: TrigramIndex | null, query: Omit<GrepOptions, "queryKey" | "cursor">): IndexFilter | null {
  if (!index) return null;
  index.refresh();
  if (index.blobs === 0) return null;
  const q = compileQuery({ ...query, queryKey: "" });
  const plan = trigramPlan(q);
  if (plan === null) return null;
  const key = `${index.generation}\0${JSON.stringify(plan)}`;
  let selections = cache.get(index);
  if (!selections) cache.set(index, (selections = new Map()));
  let selection = selections.get(key);
  if (!selection) {
    selection = index.select(plan);
    selections.set(key, selection);
    if (selections.size > CACHED) selections.delete(selections.keys().next().value as string);
  }
  const chosen = selection;
  return {
    byEntry: (entry) => {
      if (entry.gitOid === undefined) return READ;
      const version = index.version;
      if (entry.trigramVersion !== version) {
        entry.trigramHandle = index.handleOfOid(entry.gitOid);
        entry.trigramVersion = version;
      }
      return chosen.verdict(entry.trigramHandle as number);
    },
    byGitOids: (oids) => {
      const version = index.version;
      let kept = oidHandles.get(oids);
      if (!kept || kept.version !== version) {
        const handles = new Int32Array(oids.length);
        for (let i = 0; i < oids.length; i++) handles[i] = index.handleOfOid(oids[i]!);
        oidHandles.set(oids, (kept = { version, handles }));
      }
      const out = new Uint8Array(oids.length);
      for (let i = 0; i < out.length; i++) out[i] = chosen.verdict(kept.handles[i]!);
      return out;
    },
    byHandle: (handle) => chosen.verdict(handle),
    handlesOf: (entries) => {
      const kept = handleCache.get(entries);
      if (kept && kept.index === index && kept.generation === index.generation) return kept.handles;
      const handles = new Int32Array(entries.length);
      for (let i = 0; i < entries.length; i++) {
        const blob = entries[i]!.blob;
        handles[i] = blob === undefined ? -1 : index.handleOfBlob(blob);
      }
      handleCache.set(entries, { index, generation: index.generation, handles });
      return handles;
    },
    sha256OfGitOid: (oid) => index.sha256Of(index.handleOfOid(oid)),
  };
}
