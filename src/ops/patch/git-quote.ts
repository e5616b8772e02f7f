/**
 * git's C-style path quoting (quote.c): a path with a control character, a
 * double quote or a backslash is written as "..." with \t \n \" \\ ... and
 * \ooo octal escapes. Reading accepts any octal escape (git quotes non-ASCII
 * bytes that way by default); writing leaves non-ASCII as UTF-8, like
 * core.quotePath=false, which git apply reads back unchanged.
 */

const UNESCAPE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

/**
 * Reads a quoted path starting at `start` (which must be a `"`) of a byte
 * string. Returns the unquoted byte string and the index after the closing
 * quote, or null when the quoting is malformed.
 */
export function unquoteCStyle(s: string, start = 0): { value: string; end: number } | null {
  if (s.charCodeAt(start) !== 34) return null;
  let out = "";
  let i = start + 1;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === '"') return { value: out, end: i + 1 };
    if (ch !== "\\") {
      out += ch;
      i++;
      continue;
    }
    const esc = s[i + 1];
    if (esc === undefined) return null;
    const simple = UNESCAPE[esc];
    if (simple !== undefined) {
      out += simple;
      i += 2;
      continue;
    }
    const octal = s.slice(i + 1, i + 4);
    if (!/^[0-3][0-7][0-7]$/.test(octal)) return null;
    out += String.fromCharCode(parseInt(octal, 8));
    i += 4;
  }
  return null;
}

const ESCAPE: Record<number, string> = {
  7: "\\a",
  8: "\\b",
  9: "\\t",
  10: "\\n",
  11: "\\v",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

/** A control character git escapes; with `unicode`, also a C1 control or a Unicode line or paragraph separator. */
function isControl(c: number, unicode: boolean): boolean {
  return c < 0x20 || c === 0x7f || (unicode && ((c >= 0x80 && c <= 0x9f) || c === 0x2028 || c === 0x2029));
}

/** What git quotes (a control character, a double quote, a backslash); with `unicode`, isControl's others too. */
const GIT_QUOTED = /[\x00-\x1f\x7f"\\]/;
const UNICODE_QUOTED = /[\x00-\x1f\x7f-\x9f"\\\u2028\u2029]/;

/** A regular expression, not a loop: a one-shot command runs this for every path of a diff before any JIT tier. */
function needsQuoting(path: string, unicode: boolean): boolean {
  return (unicode ? UNICODE_QUOTED : GIT_QUOTED).test(path);
}

/**
 * A path as git writes it in a diff header: as is, or C-quoted when it must be. `unicodeControls` quotes the
 * C1 controls and U+2028/U+2029 too (as octal bytes of their UTF-8), which git leaves as they are: for text
 * shown on a terminal (cli/shown-path.ts).
 */
export function quoteCStyle(path: string, opts: { unicodeControls?: boolean } = {}): string {
  const unicode = opts.unicodeControls === true;
  if (!needsQuoting(path, unicode)) return path;
  let out = '"';
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    const esc = ESCAPE[c];
    if (esc !== undefined) out += esc;
    else if (isControl(c, unicode)) for (const byte of Buffer.from(path[i]!, "utf8")) out += "\\" + byte.toString(8).padStart(3, "0");
    else out += path[i];
  }
  return out + '"';
}
