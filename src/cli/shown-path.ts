/**
 * A path as the CLI's text output shows it: git's C-style quoting (ops/patch/git-quote.ts, as `git diff` and
 * `git ls-files` quote, and as worksnap's own diffs do) when it holds a control character, a double quote or a
 * backslash, with the C1 controls and U+2028/U+2029 quoted too. A name can then never break a line of the output
 * apart, pass for another line (a carriage return, an erase sequence), or reach the reader's terminal as an
 * escape sequence. UTF-8 text is shown as it is (git's `core.quotePath=false`). `--json` output carries paths
 * exactly.
 */
import { quoteCStyle } from "../ops/patch/git-quote";

export function shownPath(path: string): string {
  return quoteCStyle(path, { unicodeControls: true });
}
