import type { GrepMatch } from "../../ops/grep";
import type { GrepAnswer } from "../../ops/snapshot/grep";
import { count, leaseTag, line, lines, pathText, unreadableLine } from "./text";

/**
 * snapshot_grep the way `rg --heading --line-number --column` prints it: a
 * file's path once, then `line:col:text` for each match and `line-text` for
 * context lines, `--` between groups that are not adjacent. A line cut around
 * its match shows `…` where bytes were left out. The header counts matches
 * and files; the tail says how to continue when the answer was capped.
 */
export function renderGrep(out: GrepAnswer): string {
  const head = line(
    out.matches.length === 0 ? "no matches" : `${count(out.matches.length, "match", "matches")} in ${count(distinctPaths(out.matches), "file")}`,
    out.matches.length === 0 && `${count(out.files_searched, "file")} searched`,
    out.binary_skipped > 0 && `${out.binary_skipped} binary skipped`,
    leaseTag(out),
  );
  const body: string[] = [];
  const withContext = out.matches.some((m) => m.before !== undefined || m.after !== undefined);
  let path: string | null = null;
  let lastLine = 0;
  for (let i = 0; i < out.matches.length; i++) {
    const m = out.matches[i] as GrepMatch;
    if (m.path !== path) {
      path = m.path;
      lastLine = 0;
      body.push(pathText(m.path));
    }
    // Later matches on the same line, when the line is shown whole, only add their columns.
    const cols = [m.col];
    while (!m.trimmed && sameLine(m, out.matches[i + 1])) cols.push((out.matches[++i] as GrepMatch).col);
    const first = m.line - (m.before?.length ?? 0);
    if (withContext && lastLine > 0 && first > lastLine + 1) body.push("--");
    m.before?.forEach((t, k) => body.push(`${first + k}-${t}`));
    body.push(`${m.line}:${cols.join(",")}:${m.trimmed?.before ? "…" : ""}${m.text}${m.trimmed?.after ? "…" : ""}`);
    m.after?.forEach((t, k) => body.push(`${m.line + 1 + k}-${t}`));
    lastLine = Math.max(lastLine, m.line + (m.after?.length ?? 0));
  }
  const more = out.matches_omitted > 0 ? `${out.matches_omitted} more matches not shown` : null;
  const tail = out.truncated ? line(more ?? "more remains", out.cursor && `cursor ${out.cursor}`) : more;
  return lines(head, ...body, tail, out.truncated && out.note, unreadableLine(out));
}

function sameLine(m: GrepMatch, next: GrepMatch | undefined): boolean {
  return next !== undefined && next.path === m.path && next.line === m.line && !next.trimmed;
}

function distinctPaths(matches: GrepMatch[]): number {
  let n = 0;
  let last: string | null = null;
  for (const m of matches) {
    if (m.path !== last) n++;
    last = m.path;
  }
  return n;
}
