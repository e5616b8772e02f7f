/**
 * A parser for JavaScript regular expressions in `u` mode, just deep enough to
 * analyse and rewrite them (see regex-analysis.ts). The engine validates the
 * pattern first (`new RegExp(p, "u")`), so this parser may assume well-formed
 * input; it keeps each node's source span so a rewrite can reuse the text.
 */
export type RegexNode =
  | { t: "alt"; alts: RegexNode[]; s: number; e: number }
  | { t: "seq"; items: RegexNode[]; s: number; e: number }
  /** one literal code point, written plainly or as an escape */
  | { t: "char"; cp: number; s: number; e: number }
  /** an atom matching one character from a set: `.`, `[...]`, `\d`, `\p{..}` */
  | { t: "set"; kind: "dot" | "class" | "escape"; s: number; e: number }
  | { t: "group"; open: string; capture: boolean; modifiers: string; body: RegexNode; s: number; e: number }
  | { t: "look"; open: string; behind: boolean; negate: boolean; body: RegexNode; s: number; e: number }
  | { t: "anchor"; kind: "^" | "$" | "b" | "B"; s: number; e: number }
  | { t: "backref"; s: number; e: number }
  | { t: "quant"; body: RegexNode; min: number; max: number; q: string; s: number; e: number };

export class RegexSyntaxError extends Error {}

const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

export function parseRegex(src: string): RegexNode {
  let i = 0;

  const fail = (why: string): never => {
    throw new RegexSyntaxError(`${why} at offset ${i}`);
  };

  function disjunction(): RegexNode {
    const start = i;
    const alts = [alternative()];
    while (src[i] === "|") {
      i++;
      alts.push(alternative());
    }
    return alts.length === 1 ? alts[0]! : { t: "alt", alts, s: start, e: i };
  }

  function alternative(): RegexNode {
    const start = i;
    const items: RegexNode[] = [];
    while (i < src.length && src[i] !== "|" && src[i] !== ")") items.push(term());
    return items.length === 1 ? items[0]! : { t: "seq", items, s: start, e: i };
  }

  function term(): RegexNode {
    const start = i;
    const atomNode = atom();
    if (atomNode.t === "anchor" || atomNode.t === "look") return atomNode; // not quantifiable in u mode
    const q = quantifier();
    if (!q) return atomNode;
    return { t: "quant", body: atomNode, min: q.min, max: q.max, q: src.slice(q.s, i), s: start, e: i };
  }

  function quantifier(): { min: number; max: number; s: number } | null {
    const s = i;
    const c = src[i];
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (!m) return fail("malformed quantifier");
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      i += m[0].length - 1;
    } else return null;
    i++;
    if (src[i] === "?") i++;
    return { min, max, s };
  }

  function atom(): RegexNode {
    const s = i;
    const c = src[i]!;
    switch (c) {
      case "^":
      case "$":
        i++;
        return { t: "anchor", kind: c, s, e: i };
      case ".":
        i++;
        return { t: "set", kind: "dot", s, e: i };
      case "[":
        skipClass();
        return { t: "set", kind: "class", s, e: i };
      case "(":
        return group();
      case "\\":
        return escape();
      default: {
        const cp = src.codePointAt(i)!;
        i += cp > 0xffff ? 2 : 1;
        return { t: "char", cp, s, e: i };
      }
    }
  }

  function skipClass(): void {
    i++; // [
    if (src[i] === "^") i++;
    while (i < src.length && src[i] !== "]") i += src[i] === "\\" ? 2 : 1;
    if (src[i] !== "]") fail("unterminated character class");
    i++;
  }

  function group(): RegexNode {
    const s = i;
    let open: string;
    let node: (body: RegexNode) => RegexNode;
    const rest = src.slice(i, i + 4);
    if (rest.startsWith("(?:")) {
      open = "(?:";
      node = (body) => ({ t: "group", open, capture: false, modifiers: "", body, s, e: i });
    } else if (rest.startsWith("(?=") || rest.startsWith("(?!")) {
      open = rest.slice(0, 3);
      node = (body) => ({ t: "look", open, behind: false, negate: open[2] === "!", body, s, e: i });
    } else if (rest.startsWith("(?<=") || rest.startsWith("(?<!")) {
      open = rest;
      node = (body) => ({ t: "look", open, behind: true, negate: open[3] === "!", body, s, e: i });
    } else if (rest.startsWith("(?<")) {
      const m = /^\(\?<[^>]+>/.exec(src.slice(i));
      if (!m) return fail("malformed group name");
      open = m[0];
      node = (body) => ({ t: "group", open, capture: true, modifiers: "", body, s, e: i });
    } else if (rest.startsWith("(?")) {
      const m = /^\(\?([a-z]*(?:-[a-z]*)?):/.exec(src.slice(i));
      if (!m) return fail("unknown group syntax");
      open = m[0];
      const modifiers = m[1]!;
      node = (body) => ({ t: "group", open, capture: false, modifiers, body, s, e: i });
    } else {
      open = "(";
      node = (body) => ({ t: "group", open, capture: true, modifiers: "", body, s, e: i });
    }
    i += open.length;
    const body = disjunction();
    if (src[i] !== ")") fail("unterminated group");
    i++;
    return node(body);
  }

  function escape(): RegexNode {
    const s = i;
    const c = src[i + 1];
    if (c === undefined) return fail("trailing backslash");
    i += 2;
    if (c === "b" || c === "B") return { t: "anchor", kind: c, s, e: i };
    if ("dDsSwW".includes(c)) return { t: "set", kind: "escape", s, e: i };
    if (c === "p" || c === "P") {
      const close = src.indexOf("}", i);
      if (close < 0) fail("unterminated property escape");
      i = close + 1;
      return { t: "set", kind: "escape", s, e: i };
    }
    if (c === "k") {
      const close = src.indexOf(">", i);
      if (close < 0) fail("unterminated named reference");
      i = close + 1;
      return { t: "backref", s, e: i };
    }
    if (c >= "1" && c <= "9") {
      while (src[i]! >= "0" && src[i]! <= "9") i++;
      return { t: "backref", s, e: i };
    }
    const char = (cp: number): RegexNode => ({ t: "char", cp, s, e: i });
    if (c in CONTROL_ESCAPES) return char(CONTROL_ESCAPES[c]!);
    if (c === "0") return char(0);
    if (c === "c") {
      const letter = src.charCodeAt(i);
      i++;
      return char(letter % 32);
    }
    if (c === "x") {
      const cp = parseInt(src.slice(i, i + 2), 16);
      i += 2;
      return char(cp);
    }
    if (c === "u") {
      if (src[i] === "{") {
        const close = src.indexOf("}", i);
        const cp = parseInt(src.slice(i + 1, close), 16);
        i = close + 1;
        return char(cp);
      }
      let cp = parseInt(src.slice(i, i + 4), 16);
      i += 4;
      const low = src.startsWith("\\u", i) ? parseInt(src.slice(i + 2, i + 6), 16) : NaN;
      if (cp >= 0xd800 && cp <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        i += 6;
      }
      return char(cp);
    }
    // identity escape of a syntax character (or `/`, `-`)
    const cp = src.codePointAt(s + 1)!;
    i = s + 1 + (cp > 0xffff ? 2 : 1);
    return char(cp);
  }

  const root = disjunction();
  if (i !== src.length) fail("unbalanced parenthesis");
  return root;
}

/** Visits every node depth-first (parents before children). */
export function walkRegex(node: RegexNode, visit: (n: RegexNode, insideLook: boolean) => void, insideLook = false): void {
  visit(node, insideLook);
  switch (node.t) {
    case "alt":
      for (const a of node.alts) walkRegex(a, visit, insideLook);
      return;
    case "seq":
      for (const a of node.items) walkRegex(a, visit, insideLook);
      return;
    case "group":
    case "quant":
      walkRegex(node.body, visit, insideLook);
      return;
    case "look":
      walkRegex(node.body, visit, true);
      return;
    default:
      return;
  }
}
