/**
 * Static analysis of a user regex, done once per query:
 *
 * - **Line semantics by rewriting.** grep matches within a line, like ripgrep:
 *   `.` is any character but `\n` (so it matches `\r`, as in rg), `^`/`$` anchor
 *   only at `\n` boundaries (so `foo$` does not match `foo\r\n`, as in rg), and
 *   no atom can consume `\n`. The rewritten source makes that true when the
 *   regex runs over a whole block of lines at once, which is much faster than
 *   one `exec` per line. Only user lookarounds could see across a line break,
 *   so a pattern with one is run line by line instead (`perLine`).
 * - **Required literals** for a byte-search prefilter (`literals`): any match
 *   contains one of them, so a block without any is skipped undecoded.
 * - **Catastrophic backtracking**: the classic exponential shapes (a repetition
 *   nested in a repetition that can match the same text, `(a+)+`, `(.*a){20}`;
 *   an ambiguous alternation under a repetition, `(a|a)*`) are rejected with a
 *   reason. Everything that is not provably cheap runs on a worker thread under
 *   a time budget (see regex-pool.ts); `inline` marks the provably cheap ones.
 */
import { invalidArgument } from "../../core/errors";
import { alsoRequired, literalInfo, pickBest, score } from "./regex-literals";
import type { AsciiFold } from "./regex-scan";
import { parseRegex, RegexSyntaxError, walkRegex, type RegexNode } from "./regex-syntax";

export interface RegexPlan {
  /** the pattern rewritten to line semantics; compile with `flags` */
  source: string;
  flags: string;
  perLine: boolean;
  /** UTF-8 byte strings, one of which every match contains; null when none is known */
  literals: Uint8Array[] | null;
  /**
   * Further sets of UTF-8 byte strings, each of which every match also
   * contains one string of (only with `literals`): a line lacking any set
   * cannot match, so the prefilter and the scan skip it
   */
  required: Uint8Array[][];
  /** bounded backtracking: safe to run on the main thread */
  inline: boolean;
  /**
   * For a regex that is not `inline` but whose backtracking on a line of
   * length L is at most quadraticWays x L^2 tries (one unbounded repetition
   * of a single character class, nested in nothing): text of n bytes whose
   * longest line is L then costs at most quadraticWays x L x n tries, and may
   * run in-process when that is within a budget (engine.ts MAIN_TRIES,
   * reader-pool.ts READER_TRIES). Other text goes to the regex child process.
   */
  quadraticWays: number | null;
  /** set for an ASCII fixed string matched case-insensitively: a byte-level shortcut (regex-scan.ts AsciiFold) */
  fold: AsciiFold | null;
}

const INLINE_MAX_WAYS = 64;
/** a counted repetition this large is treated like an unbounded one */
const LARGE_REPEAT = 10;

export function planRegex(pattern: string, caseInsensitive: boolean): RegexPlan {
  const flags = caseInsensitive ? "iu" : "u";
  try {
    new RegExp(pattern, flags);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const text = /^invalid regular expression/i.test(message) ? message : `invalid regular expression: ${message}`;
    throw invalidArgument(text, { arg: "pattern", engine_message: message });
  }
  let root: RegexNode;
  try {
    root = parseRegex(pattern);
  } catch (err) {
    if (!(err instanceof RegexSyntaxError)) throw err;
    throw invalidArgument(`unsupported regular expression syntax (${err.message})`, { arg: "pattern" });
  }
  const sets = new CharSets(pattern, flags);
  let hasLook = false;
  let cheap = true;
  walkRegex(root, (n) => {
    if (n.t === "char" && n.cp === 10) {
      throw invalidArgument(
        "pattern contains a line break (\\n); grep matches within one line, so search for each line's text separately",
        { arg: "pattern" },
      );
    }
    if (n.t === "look") hasLook = true;
    if (n.t === "backref" || (n.t === "quant" && n.max === Infinity)) cheap = false;
  });
  rejectCatastrophic(root, pattern, sets);
  const lit = literalInfo(root, caseInsensitive);
  const best = pickBest(lit.exact, lit.req);
  const primary = best && score(best) > 0 ? best : null;
  const bytes = (set: string[]) => set.map((s) => new Uint8Array(Buffer.from(s, "utf8")));
  return {
    source: rewrite(root, pattern, sets),
    flags,
    perLine: hasLook,
    literals: primary ? bytes(primary) : null,
    required: primary ? alsoRequired(primary, lit.all).map(bytes) : [],
    inline: cheap && ways(root) <= INLINE_MAX_WAYS,
    quadraticWays: cheap ? null : quadraticWays(root),
    fold: null,
  };
}

/**
 * With a single unbounded repetition, of one character class, inside no other
 * repetition, a start position tries at most (line length) extents of it times
 * the paths through the rest: O(ways x L^2) per line, whatever the text.
 */
function quadraticWays(root: RegexNode): number | null {
  const unbounded: RegexNode[] = [];
  let nested = false;
  let backref = false;
  const visit = (n: RegexNode, inRepeat: boolean): void => {
    if (n.t === "backref") backref = true;
    if (n.t === "quant" && n.max === Infinity) {
      unbounded.push(n);
      if (inRepeat) nested = true;
    }
    const repeat = inRepeat || (n.t === "quant" && n.max > 1);
    if (n.t === "alt") n.alts.forEach((a) => visit(a, repeat));
    else if (n.t === "seq") n.items.forEach((a) => visit(a, repeat));
    else if (n.t === "group" || n.t === "look" || n.t === "quant") visit(n.body, repeat);
  };
  visit(root, false);
  if (backref || nested || unbounded.length !== 1) return null;
  const star = unbounded[0] as Extract<RegexNode, { t: "quant" }>;
  let atom = star.body;
  while (atom.t === "group" && !atom.capture && atom.modifiers === "") atom = atom.body;
  if (atom.t !== "char" && atom.t !== "set") return null;
  const w = ways(root, star);
  return w <= INLINE_MAX_WAYS ? w : null;
}

// ---------------------------------------------------------------- rewriting

function rewrite(node: RegexNode, src: string, sets: CharSets): string {
  const emit = (n: RegexNode): string => rewrite(n, src, sets);
  switch (node.t) {
    case "alt":
      return node.alts.map(emit).join("|");
    case "seq":
      return node.items.map(emit).join("");
    case "char":
    case "backref":
      return src.slice(node.s, node.e);
    case "set": {
      if (node.kind === "dot") return "[^\\n]";
      const text = unicodeClasses(src.slice(node.s, node.e), node.kind);
      return sets.matchesNewline(text) ? `(?:(?!\\n)${text})` : text;
    }
    case "anchor":
      if (node.kind === "^") return "(?<![^\\n])";
      if (node.kind === "$") return "(?![^\\n])";
      if (node.kind === "b") return `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`;
      return `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`;
    case "group":
    case "look":
      return `${node.open}${emit(node.body)})`;
    case "quant":
      return `${emit(node.body)}${node.q}`;
  }
}

// ---------------------------------------------------------------- Unicode classes

/**
 * ripgrep's (UTS #18) meanings of the Perl classes, so `\w+` takes "héllo"
 * whole and `\b` sees no boundary inside it, as rg does; JavaScript's own are
 * ASCII-only.
 */
const WORD_PROPS = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
const WORD = `[${WORD_PROPS}]`;
const IN_CLASS: Record<string, string> = { d: "\\p{Nd}", D: "\\P{Nd}", s: "\\p{White_Space}", S: "\\P{White_Space}", w: WORD_PROPS };

function unicodeClasses(text: string, kind: "class" | "escape"): string {
  if (kind === "escape") {
    const c = text[1]!;
    if (c === "W") return `[^${WORD_PROPS}]`;
    if (c in IN_CLASS) return `[${IN_CLASS[c]}]`;
    return text; // \p{..} / \P{..}
  }
  const negated = text[1] === "^";
  let body = "";
  let nonWord = false;
  for (let i = negated ? 2 : 1; i < text.length - 1; i++) {
    const ch = text[i]!;
    if (ch !== "\\") {
      body += ch;
      continue;
    }
    const next = text[++i]!;
    if (next === "W") nonWord = true;
    else if (next in IN_CLASS) body += IN_CLASS[next];
    else body += ch + next;
  }
  if (!nonWord) return `[${negated ? "^" : ""}${body}]`;
  // \W has no single-property form inside a class (no v flag), so split it out
  const rest = body.startsWith("^") ? `\\${body}` : body;
  if (!negated) return rest === "" ? `[^${WORD_PROPS}]` : `(?:[${rest}]|[^${WORD_PROPS}])`;
  return rest === "" ? WORD : `(?:(?![${rest}])${WORD})`;
}

// ---------------------------------------------------------------- character sets

/** Code points on which atoms are probed: all of ASCII plus a few telling others. */
const SAMPLES: number[] = [
  ...Array.from({ length: 128 }, (_, i) => i),
  0xa0, 0xc9, 0xe9, 0x17f, 0x212a, 0x3b1, 0x416, 0x4e00, 0x1f600, 0x2028, 0xfeff, 0xfffd,
];
const SAMPLE_WORDS = Math.ceil(SAMPLES.length / 32);
type Bits = Uint32Array;

class CharSets {
  private cache = new Map<string, Bits>();
  constructor(
    private readonly src: string,
    readonly flags: string,
  ) {}

  matchesNewline(atomSource: string): boolean {
    return new RegExp(`^(?:${atomSource})$`, this.flags).test("\n");
  }

  /** The sampled characters one atom (char or set) matches. */
  atom(atom: RegexNode): Bits {
    const text = atom.t === "set" && atom.kind === "dot" ? "[^\\n]" : this.src.slice(atom.s, atom.e);
    let bits = this.cache.get(text);
    if (!bits) {
      const re = new RegExp(`^(?:${text})$`, this.flags);
      bits = new Uint32Array(SAMPLE_WORDS);
      SAMPLES.forEach((cp, k) => {
        if (re.test(String.fromCodePoint(cp))) bits![k >> 5]! |= 1 << (k & 31);
      });
      this.cache.set(text, bits);
    }
    return bits;
  }

  /** Every character the node may consume (outside lookarounds). */
  consumed(node: RegexNode): Bits {
    const out = new Uint32Array(SAMPLE_WORDS);
    walkRegex(node, (n, inLook) => {
      if (inLook) return;
      if (n.t === "char" || n.t === "set") orInto(out, this.atom(n));
      if (n.t === "backref") out.fill(0xffffffff);
    });
    return out;
  }

  /** The characters a match of the node can begin with. */
  first(node: RegexNode): Bits {
    switch (node.t) {
      case "char":
      case "set":
        return this.atom(node);
      case "backref":
        return new Uint32Array(SAMPLE_WORDS).fill(0xffffffff);
      case "group":
      case "quant":
        return this.first(node.body);
      case "alt": {
        const out = new Uint32Array(SAMPLE_WORDS);
        for (const a of node.alts) orInto(out, this.first(a));
        return out;
      }
      case "seq": {
        const out = new Uint32Array(SAMPLE_WORDS);
        for (const item of node.items) {
          orInto(out, this.first(item));
          if (!nullable(item)) break;
        }
        return out;
      }
      default:
        return new Uint32Array(SAMPLE_WORDS);
    }
  }
}

function orInto(a: Bits, b: Bits): void {
  for (let k = 0; k < a.length; k++) a[k]! |= b[k]!;
}

function intersects(a: Bits, b: Bits): boolean {
  for (let k = 0; k < a.length; k++) if ((a[k]! & b[k]!) !== 0) return true;
  return false;
}

function nullable(node: RegexNode): boolean {
  switch (node.t) {
    case "char":
    case "set":
      return false;
    case "seq":
      return node.items.every(nullable);
    case "alt":
      return node.alts.some(nullable);
    case "quant":
      return node.min === 0 || nullable(node.body);
    case "group":
      return nullable(node.body);
    default:
      return true;
  }
}

// ---------------------------------------------------------------- catastrophic shapes

function rejectCatastrophic(root: RegexNode, src: string, sets: CharSets): void {
  walkRegex(root, (q) => {
    if (q.t !== "quant" || q.max <= 1 || (q.max !== Infinity && q.max < LARGE_REPEAT)) return;
    const construct = src.slice(q.s, q.e);
    const reject = (why: string, hint: string) =>
      invalidArgument(
        `pattern can take exponential time on long lines (catastrophic backtracking): in ${JSON.stringify(construct)} ${why}. ${hint}`,
        { arg: "pattern", reason: "catastrophic_backtracking", construct },
      );
    const inner: Extract<RegexNode, { t: "quant" }>[] = [];
    walkRegex(q.body, (n, look) => {
      if (!look && n.t === "quant" && n.max > n.min) inner.push(n);
    });
    if (inner.length > 0) {
      const consumed = new Uint32Array(SAMPLE_WORDS);
      for (const n of inner) orInto(consumed, sets.consumed(n.body));
      const separated = mandatoryAtoms(q.body).some((a) => !intersects(sets.atom(a), consumed));
      if (!separated) {
        throw reject(
          "a repetition is nested inside another and both can match the same text",
          'Use a single repetition (e.g. "a+" instead of "(a+)+"), or make each repeated item end in a character the inner repetition cannot match.',
        );
      }
    }
    walkRegex(q.body, (alt, look) => {
      if (look || alt.t !== "alt" || !ambiguousAlternation(alt, sets, sets.flags.includes("i"))) return;
      throw reject(
        "the alternatives of a repeated group can match the same text",
        "Make the alternatives mutually exclusive (e.g. \"\\w+\" instead of \"(\\w|\\d)+\"), or drop the duplicate branch.",
      );
    });
  });
}

/** Atoms every match of the node must consume, outside any variable repetition. */
function mandatoryAtoms(node: RegexNode): RegexNode[] {
  switch (node.t) {
    case "char":
    case "set":
      return [node];
    case "seq":
      return node.items.flatMap(mandatoryAtoms);
    case "group":
      return mandatoryAtoms(node.body);
    case "quant":
      return node.min >= 1 && node.max === node.min ? mandatoryAtoms(node.body) : [];
    default:
      return [];
  }
}

function ambiguousAlternation(alt: Extract<RegexNode, { t: "alt" }>, sets: CharSets, ci: boolean): boolean {
  const exact = alt.alts.map((a) => literalInfo(a, false).exact);
  if (exact.every((e) => e !== null)) {
    const words = [...new Set(exact.flat().map((w) => (ci ? w.toLowerCase() : w)))].filter((w) => w !== "");
    if (words.length < exact.flat().filter((w) => w !== "").length) return true; // a duplicate branch
    return words.some((w) => splitsIntoWords(w, words));
  }
  const firsts = alt.alts.map((a) => sets.first(a));
  const prefixes = alt.alts.map((a) => literalPrefix(a, ci));
  for (let x = 0; x < firsts.length; x++) {
    for (let y = x + 1; y < firsts.length; y++) {
      const [px, py] = [prefixes[x]!, prefixes[y]!];
      const diverge = !px.startsWith(py) && !py.startsWith(px); // "foo\d" and "for\w" part at the third character
      if (!diverge && intersects(firsts[x]!, firsts[y]!)) return true;
    }
  }
  return false;
}

/** The literal characters a branch must start with. */
function literalPrefix(node: RegexNode, ci: boolean): string {
  let out = "";
  const items = node.t === "seq" ? node.items : [node];
  for (const item of items) {
    // case-insensitively only ASCII folds as simply as toLowerCase (think ſ, ς)
    if (item.t !== "char" || (ci && item.cp >= 128)) break;
    out += String.fromCodePoint(item.cp);
  }
  return ci ? out.toLowerCase() : out;
}

/** True when `w` is a concatenation of two or more of `words` (each shorter than w). */
function splitsIntoWords(w: string, words: string[]): boolean {
  const pieces = new Array<number>(w.length + 1).fill(Infinity);
  pieces[0] = 0;
  for (let i = 0; i < w.length; i++) {
    if (pieces[i] === Infinity) continue;
    for (const p of words) {
      if (p.length < w.length && w.startsWith(p, i)) pieces[i + p.length] = Math.min(pieces[i + p.length]!, pieces[i]! + 1);
    }
  }
  return pieces[w.length]! >= 2 && pieces[w.length]! !== Infinity;
}

// ---------------------------------------------------------------- cost bound

/** Paths through the pattern per start position: a bound on backtracking. `except` counts as one path. */
function ways(node: RegexNode, except?: RegexNode): number {
  const cap = (n: number) => Math.min(n, 1e9);
  if (node === except) return 1;
  switch (node.t) {
    case "seq":
      return node.items.reduce((acc, n) => cap(acc * ways(n, except)), 1);
    case "alt":
      return cap(node.alts.reduce((acc, n) => acc + ways(n, except), 0));
    case "group":
    case "look":
      return ways(node.body, except);
    case "quant":
      return node.max === Infinity ? Infinity : cap(Math.pow(ways(node.body, except), node.max) * (node.max - node.min + 1));
    case "backref":
      return Infinity;
    default:
      return 1;
  }
}
