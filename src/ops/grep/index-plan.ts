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
 *   mix of case, except those touching `k` or `s`, which `iu` also matches as
 *   the Kelvin sign and the long s (non-ASCII bytes the index keeps as such);
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
    if (/[ks]/.test(three) || seen.has(three)) continue;
    seen.add(three);
    positions.push(caseVariants(three));
  }
  return positions.length > 0 ? [[positions]] : null;
}

function caseVariants(three: string): number[] {
  let out = [0];
  for (const ch of three) {
    const forms = new Set([ch.charCodeAt(0), ch.toUpperCase().charCodeAt(0)]);
    out = out.flatMap((t) => [...forms].map((c) => (t << 8) | c));
  }
  return out;
}
