/**
 * A query's use of the trigram index: which indexed blobs cannot hold a match
 * (or are binary), so the walk can hand the engine those files as settled,
 * unread. Blobs the index does not hold are read as before. Selections are
 * kept for the last few queries, for as long as the index does not change.
 */
import { BINARY, NO_MATCH, READ, type TrigramIndex, type TrigramSelection, type Verdict } from "../../repo/trigram-index/store";
import { trigramPlan } from "./index-plan";
import { compileQuery, type GrepOptions } from "./query";

export { BINARY, NO_MATCH, READ, type Verdict };

/** What the walk asks per candidate. */
export interface IndexFilter {
  /** a clean tracked file, by its index blob id */
  byGitOid(oid: string): Verdict;
  /** a stored blob, by its SHA-256 (hex) */
  bySha256(sha256: string): Verdict;
  /** the SHA-256 (hex) of the blob with this git id, which the index holds */
  sha256OfGitOid(oid: string): string;
}

const CACHED = 8;
const cache = new WeakMap<TrigramIndex, Map<string, TrigramSelection>>();

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
    byGitOid: (oid) => chosen.verdict(index.handleOfOid(oid)),
    bySha256: (sha256) => chosen.verdict(index.handleOfSha(sha256)),
    sha256OfGitOid: (oid) => index.sha256Of(index.handleOfOid(oid)),
  };
}
