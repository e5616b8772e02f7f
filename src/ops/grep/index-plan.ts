/**
 * What the trigram index (src/repo/trigram-index/) is asked for a query: the
 * trigrams a file must hold to hold a match, from the same required literals
 * the byte prefilter uses (a fixed string; a regex's literal sets,
 * regex-literals.ts), as code-search engines do (Russ Cox's codesearch,
 * Zoekt). Only ever a necessary condition: the index prunes files that cannot
 * match, and every file it leaves is searched for real, so answers are exact.
 *
 * - a case-sensitive fixed string: all its trigrams;
 * - a regex: for each required set (one of its strings is in every match),
 *   one of the strings' trigram sets; a set holding a string shorter than
 *   three bytes says nothing and is dropped;
 * - an ASCII fixed string searched case-insensitively: its trigrams in every
 *   mix of case; where a window holds a `k` or an `s`, which `iu` also
 *   matches as the Kelvin sign and the long s (non-ASCII: two and three bytes
 *   of UTF-8, which the index keeps as such), the first three bytes of each
 *   spelling with those signs too (a match spelt so starts with them);
 * - anything else (a case-insensitive non-ASCII pattern, a regex without a
 *   required literal of three bytes): no plan, the scan as before.
 */
import type { TrigramQuery } from "../../repo/trigram-index/store";
import type { CompiledQuery } from "./query";

/** Trigrams per required string at most: any subset is still necessary, and each costs a posting list. */
const MAX_TRIGRAMS = 24;

export function trigramPlan(q: CompiledQuery): TrigramQuery | null {
  const m = q.matcher;
  if (m.kind === "literal") return clauses([[m.needle]]);
  const { plan } = m;
  const out = [...(plan.literals !== null ? (clauses([plan.literals, ...plan.required]) ?? []) : []), ...(plan.fold ? (foldedClause(plan.fold.lower) ?? []) : [])];
  return out.length > 0 ? out : null;
}

function clauses(sets: Uint8Array[][]): TrigramQuery | null {
  const out: TrigramQuery = [];
  for (const set of sets) {
    if (set.length === 0 || set.some((s) => s.length < 3)) continue;
    out.push(set.map((s) => exactTrigrams(s).map((t) => [t])));
  }
  return out.length > 0 ? out : null;
}

function exactTrigrams(s: Uint8Array): number[] {
  const seen = new Set<number>();
  for (let i = 2; i < s.length && seen.size < MAX_TRIGRAMS; i++) seen.add(((s[i - 2] as number) << 16) | ((s[i - 1] as number) << 8) | (s[i] as number));
  return [...seen];
}

/** `lower`: an ASCII string in lowercase, matched ASCII case-insensitively (plus the Kelvin sign and the long s). */
function foldedClause(lower: string): TrigramQuery | null {
  const positions: number[][] = [];
  const seen = new Set<string>();
  for (let i = 2; i < lower.length && positions.length < MAX_TRIGRAMS; i++) {
    const three = lower.slice(i - 2, i + 1);
    if (seen.has(three)) continue;
    seen.add(three);
    positions.push(spellings(three));
  }
  return positions.length > 0 ? [[positions]] : null;
}

/** The characters `iu` matches for an ASCII character: its two cases, and the sign that folds to k or to s. */
const FOLDS_TO: Record<string, string> = { k: "\u212a", s: "\u017f" };

/**
 * The trigram each spelling of `three` under `iu` starts with: every mix of case, and every place of the Kelvin
 * sign or the long s. A spelling with one of those is more than three bytes; its first three are in the file.
 */
function spellings(three: string): number[] {
  let words = [""];
  for (const ch of three) {
    const forms = new Set([ch, ch.toUpperCase(), ...(FOLDS_TO[ch] ?? "")]);
    words = words.flatMap((w) => [...forms].map((f) => w + f));
  }
  const out = new Set<number>();
  for (const w of words) {
    const b = Buffer.from(w, "utf8");
    out.add((b[0]! << 16) | (b[1]! << 8) | b[2]!);
  }
  return [...out];
}
