/**
 * Required literals of a regex, for the byte prefilter: every match contains
 * one of a small set of strings, found with memchr-speed Buffer.indexOf long
 * before any decoding or regex work. Conservative: when unsure, no literal.
 */
import type { RegexNode } from "./regex-syntax";

const MAX_SET = 8;
const MAX_LITERAL = 64;

export interface LiteralInfo {
  /** every string the node can match, when that set is small */
  exact: string[] | null;
  /** every match contains one of these */
  req: string[] | null;
  /** sets that are all required: every match contains one string of each (runs of exact text, and the like) */
  all: string[][];
}

const UNKNOWN: LiteralInfo = { exact: null, req: null, all: [] };
const EMPTY: LiteralInfo = { exact: [""], req: null, all: [] };

export function literalInfo(node: RegexNode, ci: boolean): LiteralInfo {
  switch (node.t) {
    case "char": {
      const ch = String.fromCodePoint(node.cp);
      return ci && !caseless(node.cp) ? UNKNOWN : { exact: [ch], req: null, all: [[ch]] };
    }
    case "set":
    case "backref":
      return UNKNOWN;
    case "anchor":
    case "look":
      return EMPTY;
    case "group":
      return node.modifiers.includes("i") ? UNKNOWN : literalInfo(node.body, ci);
    case "quant": {
      if (node.max === 0) return EMPTY;
      const body = literalInfo(node.body, ci);
      const req = node.min >= 1 ? pickBest(body.exact, body.req) : null;
      const one = body.exact?.length === 1 ? body.exact[0]! : null;
      const exact = one !== null && node.min === node.max && one.length * node.min <= MAX_LITERAL ? [one.repeat(node.min)] : null;
      return { exact, req, all: node.min >= 1 ? body.all : [] };
    }
    case "alt": {
      const infos = node.alts.map((a) => literalInfo(a, ci));
      const exact = union(infos.map((x) => x.exact));
      const req = union(infos.map((x) => pickBest(x.exact, x.req)));
      const kept = req && score(req) > 0 ? req : null;
      return { exact, req: kept, all: kept ? [kept] : [] };
    }
    case "seq": {
      let run: string[] | null = [""];
      let best: string[] | null = null;
      let allExact = true;
      const all: string[][] = [];
      for (const item of node.items) {
        const info = literalInfo(item, ci);
        const joined: string[] | null = run && info.exact ? product(run, info.exact) : null;
        if (joined) {
          run = joined;
          continue;
        }
        allExact = false;
        best = pickBest(best, run);
        best = pickBest(best, info.req);
        best = pickBest(best, info.exact);
        if (run && score(run) > 0) all.push(run);
        if (!info.exact) all.push(...info.all);
        run = info.exact ?? [""];
      }
      best = pickBest(best, run);
      if (run && score(run) > 0) all.push(run);
      return { exact: allExact ? run : null, req: best && score(best) > 0 ? best : null, all };
    }
  }
}

/** ASCII other than letters: matched by itself only, even case-insensitively. */
function caseless(cp: number): boolean {
  return cp < 128 && !((cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122));
}

function union(sets: (string[] | null)[]): string[] | null {
  const out = new Set<string>();
  for (const s of sets) {
    if (!s) return null;
    for (const w of s) out.add(w);
  }
  return out.size <= MAX_SET ? [...out] : null;
}

function product(a: string[], b: string[]): string[] | null {
  if (a.length * b.length > MAX_SET) return null;
  const out: string[] = [];
  for (const x of a) for (const y of b) out.push(x + y);
  return out.every((w) => w.length <= MAX_LITERAL) ? out : null;
}

export function score(set: string[]): number {
  return Math.min(...set.map((w) => Buffer.byteLength(w, "utf8")));
}

export function pickBest(a: string[] | null, b: string[] | null): string[] | null {
  if (!a) return b;
  if (!b) return a;
  const sa = score(a);
  const sb = score(b);
  if (sa !== sb) return sa > sb ? a : b;
  return a.length <= b.length ? a : b;
}

/**
 * The sets besides `primary` that every match must also meet (one string of
 * each), strongest first: sets implied by a stronger one are dropped (every
 * string of "fetch" contains "fet"), and at most `max` are kept.
 */
export function alsoRequired(primary: string[], all: string[][], max = 3): string[][] {
  const implies = (t: string[], s: string[]) => t.every((x) => s.some((y) => x.includes(y)));
  const sets = [primary, ...all.filter((s) => s.length <= MAX_SET && score(s) > 0).sort((a, b) => score(b) - score(a))];
  const kept: string[][] = [];
  for (const s of sets) if (!kept.some((k) => implies(k, s))) kept.push(s);
  return kept.slice(1, 1 + max);
}
