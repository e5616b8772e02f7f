/**
 * A path as the CLI's text output shows it: as it is, unless it holds a control character (C0, DEL, C1, or a
 * Unicode line or paragraph separator), a double quote or a backslash; then in double quotes with git's C-style
 * escapes (`\n`, `\t`, `\"`, `\\`, other bytes as `\ooo` octal of their UTF-8), as `git diff` and `git ls-files`
 * quote such a name (and as worksnap's own diffs do). A name can then never break a line of the output apart, pass for another line (a carriage
 * return, an erase sequence), or reach the reader's terminal as an escape sequence. UTF-8 text is shown as it is
 * (git's `core.quotePath=false`). `--json` output carries paths exactly.
 */
const NEEDS_QUOTES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/u;
const SHORT: Record<string, string> = { "\u0007": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\u000b": "\\v", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\" };

export function shownPath(path: string): string {
  if (!NEEDS_QUOTES.test(path)) return path;
  let out = '"';
  for (const ch of path) {
    const short = SHORT[ch];
    if (short !== undefined) out += short;
    else if (NEEDS_QUOTES.test(ch)) for (const byte of Buffer.from(ch, "utf8")) out += `\\${byte.toString(8).padStart(3, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}
