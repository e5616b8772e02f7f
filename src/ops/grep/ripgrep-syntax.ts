/**
 * ripgrep's regex syntax (Rust's `regex` crate) where it differs from
 * JavaScript's `u` mode in spelling only. Agents and people write patterns for
 * rg: `(?i)foo`, `[[:alpha:]]`, `\p{Greek}`, `(?P<name>..)`, `\x{1F600}`,
 * `\<word\>`, all of them errors in a JavaScript `u` regex. A pattern that is
 * already a valid JavaScript regex is never touched (its meaning stays what it
 * was); one that is not is rewritten construct by construct to the JavaScript
 * spelling of the same thing, and used only if the result is valid. Anything
 * without a faithful spelling (verbose mode `(?x)`, swapped greed `(?U)`,
 * class set operations `&&`, nested classes) is left alone, so the pattern
 * stays an error, as before.
 */

/** The JavaScript source for `pattern`, and whether the whole of it is case-insensitive. */
export interface JsPattern {
  source: string;
  caseInsensitive: boolean;
}

/**
 * `pattern` as JavaScript takes it (flags `u`, or `iu` when `caseInsensitive`):
 * itself when it is valid there, else its rewrite from ripgrep's spelling when
 * that is valid, else itself (whose error the caller reports).
 */
export function fromRipgrepSyntax(pattern: string, caseInsensitive: boolean): JsPattern {
  if (validJs(pattern, caseInsensitive)) return { source: pattern, caseInsensitive };
  const rewritten = rewrite(pattern);
  if (rewritten === null) return { source: pattern, caseInsensitive };
  const ci = caseInsensitive || rewritten.caseInsensitive;
  return validJs(rewritten.source, ci) ? { source: rewritten.source, caseInsensitive: ci } : { source: pattern, caseInsensitive };
}

function validJs(source: string, caseInsensitive: boolean): boolean {
  try {
    new RegExp(source, caseInsensitive ? "iu" : "u");
    return true;
  } catch {
    return false;
  }
}

/** POSIX bracket classes as Rust's regex defines them: ASCII only. */
const POSIX: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

/** The rewrite, or null when the pattern uses something with no faithful JavaScript spelling. */
function rewrite(src: string): JsPattern | null {
  let out = "";
  let i = 0;
  let caseInsensitive = false;
  /** For each open group: the flag groups opened in it, which its end (and each `|` in it) must close. */
  const opened: string[][] = [[]];
  while (i < src.length) {
    const c = src[i]!;
    if (c === "\\") {
      const escaped = escape(src, i, false);
      if (escaped === null) return null;
      out += escaped.text;
      i = escaped.end;
      continue;
    }
    if (c === "[") {
      const cls = charClass(src, i);
      if (cls === null) return null;
      out += cls.text;
      i = cls.end;
      continue;
    }
    if (c === "(") {
      const flags = /^\(\?([a-zA-Z-]*)\)/.exec(src.slice(i));
      if (flags) {
        const set = flags[1]!;
        if (!/^[ims]*(-[ims]*)?$/.test(set)) return null; // x, U, R, u: no JavaScript spelling
        i += flags[0].length;
        const [on, off = ""] = set.split("-") as [string, string?];
        const wantI = on.includes("i");
        const dropI = off.includes("i");
        // m and s change nothing in a search line by line (matches never span lines): dropped
        if (!wantI && !dropI) continue;
        if (out === "" && opened.length === 1 && wantI && !dropI) {
          caseInsensitive = true; // the whole pattern: the case-insensitive search's own flag
          continue;
        }
        const open = `(?${wantI ? "i" : ""}${dropI ? "-i" : ""}:`;
        out += open;
        opened[opened.length - 1]!.push(open);
        continue;
      }
      const named = /^\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(src.slice(i));
      if (named) {
        out += `(?<${named[1]}>`;
        i += named[0].length;
      } else {
        out += c;
        i++;
      }
      opened.push([]);
      continue;
    }
    if (c === ")") {
      if (opened.length === 1) return null;
      out += ")".repeat(opened.pop()!.length) + ")";
      i++;
      continue;
    }
    if (c === "|") {
      // Rust's flags hold to the end of their group, the alternatives after them included
      const here = opened[opened.length - 1]!;
      out += `${")".repeat(here.length)}|${here.join("")}`;
      i++;
      continue;
    }
    out += c;
    i++;
  }
  if (opened.length !== 1) return null;
  out += ")".repeat(opened[0]!.length);
  return { source: out, caseInsensitive };
}

/** One escape at `src[i] === "\\"`: its JavaScript spelling (inside a class when `inClass`) and where it ends. */
function escape(src: string, i: number, inClass: boolean): { text: string; end: number } | null {
  const next = src[i + 1];
  if (next === undefined) return null;
  if (next === "x" && src[i + 2] === "{") {
    const m = /^\\x\{([0-9A-Fa-f]{1,6})\}/.exec(src.slice(i));
    if (!m) return null;
    return { text: `\\u{${m[1]}}`, end: i + m[0].length };
  }
  if (next === "p" || next === "P") {
    const m = /^\\[pP](\{([^}]*)\}|([A-Za-z]))/.exec(src.slice(i));
    if (!m) return null;
    const spelled = property(m[2] ?? m[3]!);
    if (spelled === null) return null;
    return { text: `\\${next}{${spelled}}`, end: i + m[0].length };
  }
  if (!inClass) {
    if (next === "A") return { text: "^", end: i + 2 };
    if (next === "z") return { text: "$", end: i + 2 };
    if (next === "<") return { text: "\\b(?=\\w)", end: i + 2 };
    if (next === ">") return { text: "\\b(?<=\\w)", end: i + 2 };
  }
  return { text: src.slice(i, i + 2), end: i + 2 };
}

/** A Unicode property as JavaScript names it: general categories and binary properties as they are, scripts as `Script=`. */
function property(name: string): string | null {
  const candidates = [name, `Script=${name}`, `Script=${name.charAt(0).toUpperCase()}${name.slice(1).toLowerCase()}`];
  const colon = /^([A-Za-z_]+)[:=](.+)$/.exec(name);
  if (colon) candidates.unshift(`${colon[1]}=${colon[2]}`);
  for (const c of candidates) {
    try {
      new RegExp(`\\p{${c}}`, "u");
      return c;
    } catch {
      // not this spelling
    }
  }
  return null;
}

/** A bracket class at `src[i] === "["`: POSIX classes and Rust escapes spelled for JavaScript. */
function charClass(src: string, i: number): { text: string; end: number } | null {
  let j = i + 1;
  let text = "[";
  if (src[j] === "^") {
    text += "^";
    j++;
  }
  // a lone negated POSIX class is the whole class negated: [[:^alpha:]] is [^A-Za-z]
  const lone = /^\[:\^([a-z]+):\]\]/.exec(src.slice(j));
  if (lone && text === "[" && POSIX[lone[1]!] !== undefined) return { text: `[^${POSIX[lone[1]!]}]`, end: j + lone[0].length };
  let first = true;
  while (j < src.length) {
    const c = src[j]!;
    if (c === "]" && !first) return { text: `${text}]`, end: j + 1 };
    if (c === "]") {
      text += "\\]"; // first in the class, Rust's `]` is a literal one
      j++;
      first = false;
      continue;
    }
    first = false;
    if (c === "\\") {
      const escaped = escape(src, j, true);
      if (escaped === null) return null;
      text += escaped.text;
      j = escaped.end;
      continue;
    }
    if (c === "[") {
      const posix = /^\[:([a-z]+):\]/.exec(src.slice(j));
      if (!posix || POSIX[posix[1]!] === undefined) return null; // a nested class or a negated POSIX class inside a larger one
      text += POSIX[posix[1]!];
      j += posix[0].length;
      continue;
    }
    if ((c === "&" || c === "-" || c === "~") && src[j + 1] === c) return null; // set operations
    text += c;
    j++;
  }
  return null;
}
