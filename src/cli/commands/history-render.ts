/** Human output of `worksnap history`: the status table, coloured diffs, review summaries. */
import type { ExternalChange } from "../../ops/history/external";
import type { ShowResult, StatusResult } from "../../ops/history/query";
import type { Conflict } from "../../ops/history/reapply";
import type { ReviewPreview, ReviewResult } from "../../ops/history/review";
import type { CleanupResult } from "../../ops/history/cleanup";
import type { EditStatus, LogEntry } from "../../ops/history/types";
import { color } from "../output";
import type { CompletedWrite } from "../../ops/history/interrupted";
import { shownPath } from "../shown-path";

export interface Painter {
  on: boolean;
  paint(code: string, s: string): string;
}

/** Colours for what goes to fd 1 (stdout) or 2 (stderr): only on a terminal, and never with NO_COLOR. */
export function painter(fd: 1 | 2): Painter {
  const on = color.enabled(fd);
  return { on, paint: (code, s) => color.wrap(on, code, s) };
}

const STATUS_COLOUR: Record<EditStatus, string> = { pending: "33", accepted: "32", rejected: "31" };

export const shortId = (id: string) => id.slice(0, 8);

/** "2026-01-01T10:00:00.123456Z" -> "2026-01-01 10:00:00" (UTC). */
function shortTime(ts: string): string {
  return ts.slice(0, 19).replace("T", " ");
}

function pathOf(e: Pick<LogEntry, "file_path" | "source_path">): string {
  return e.source_path ? `${shownPath(e.source_path)} -> ${shownPath(e.file_path)}` : shownPath(e.file_path);
}

export function renderStatus(r: StatusResult, p: Painter): string {
  const out: string[] = [];
  for (const i of r.interrupted) {
    out.push(p.paint("1;31", `interrupted ${i.action} ${shortId(i.review_id)} (${shortTime(i.timestamp)}) has not finished writing ${i.paths.map(shownPath).join(", ")}; run \`worksnap history recover\``));
  }
  if (r.entries.length === 0) {
    out.push(r.total === 0 ? "no recorded edits" : `no edits match (${r.total} recorded)`);
    return `${out.join("\n")}\n`;
  }
  const head = ["EDIT", "TIME (UTC)", "STATUS", "OP", "CONVERSATION", "PATH"];
  const widths = [8, 19, 8, 7, head[4]!.length];
  for (const e of r.entries) if (e.conversation_id.length > widths[4]!) widths[4] = e.conversation_id.length;
  const cells = (c: string[], style: (i: number) => string | null): string => {
    let line = "";
    for (let i = 0; i < 5; i++) {
      const code = style(i);
      const cell = c[i]!.padEnd(widths[i]!);
      line += `${code && p.on ? p.paint(code, cell) : cell}  `;
    }
    return line + c[5]!;
  };
  out.push(cells(head, () => "1"));
  const styles = [null, "33", "2"];
  for (const e of r.entries) {
    const row = [shortId(e.edit_id), shortTime(e.timestamp), e.status, e.operation, e.conversation_id, pathOf(e)];
    out.push(cells(row, (i) => (i === 2 ? STATUS_COLOUR[e.status] : i < 2 ? styles[i + 1]! : null)));
  }
  const counts = { pending: 0, accepted: 0, rejected: 0 };
  for (const e of r.entries) counts[e.status]++;
  out.push(`${r.entries.length} edit${r.entries.length === 1 ? "" : "s"}: ${counts.pending} pending, ${counts.accepted} accepted, ${counts.rejected} rejected`);
  return `${out.join("\n")}\n`;
}

export function colourDiff(diff: string, p: Painter): string {
  if (!p.on) return diff;
  return diff
    .split("\n")
    .map((l) => {
      if (l.startsWith("diff --git") || l.startsWith("--- ") || l.startsWith("+++ ")) return p.paint("1", l);
      if (l.startsWith("@@")) return p.paint("36", l);
      if (l.startsWith("+")) return p.paint("32", l);
      if (l.startsWith("-")) return p.paint("31", l);
      return l;
    })
    .join("\n");
}

export function renderShow(r: ShowResult, p: Painter): string {
  const out: string[] = [];
  for (const { entry: e, diff } of r.edits) {
    out.push(
      p.paint("33", `edit ${e.edit_id}`) +
        `  ${p.paint(STATUS_COLOUR[e.status], e.status)}  ${e.operation} ${pathOf(e)}\n` +
        p.paint("2", `conversation ${e.conversation_id}  call #${e.tool_call_index}  ${e.tool_name}  ${e.timestamp}`),
    );
    out.push(colourDiff(diff.endsWith("\n") ? diff : `${diff}\n`, p));
  }
  return out.join("\n");
}

export function renderReview(r: ReviewResult, p: Painter): string {
  const out: string[] = [];
  if (r.recovered.length > 0) out.push(`completed interrupted review${r.recovered.length === 1 ? "" : "s"} ${r.recovered.map(shortId).join(", ")}`);
  const cascaded = new Set(r.cascaded);
  for (const c of r.changed) {
    const verb = c.to === "accepted" ? "accepted" : "rejected";
    out.push(`${p.paint(STATUS_COLOUR[c.to], verb.padEnd(8))} ${p.paint("33", shortId(c.edit_id))}  ${c.operation} ${pathOf(c)}${c.from !== "pending" ? `  (was ${c.from})` : ""}${cascaded.has(c.edit_id) ? "  (depends on a rejected edit: --cascade)" : ""}`);
  }
  if (r.unchanged.length > 0) out.push(`already ${r.action === "accept" ? "accepted" : "rejected"}: ${r.unchanged.map(shortId).join(", ")}`);
  if (r.still_rejected.length > 0) {
    const shown = r.still_rejected.slice(0, 10).map(shortId).join(", ");
    out.push(`still rejected (name an edit to accept it): ${shown}${r.still_rejected.length > 10 ? ` and ${r.still_rejected.length - 10} more` : ""}`);
  }
  if (r.discarded.length > 0) out.push(`discarded outside changes to ${r.discarded.map(shownPath).join(", ")}`);
  for (const f of r.files) out.push(`${f.action === "written" ? "wrote  " : "deleted"} ${shownPath(f.path)}${f.hash ? p.paint("2", `  sha256 ${f.hash.slice(0, 12)}`) : ""}`);
  if (r.changed.length > 0 && r.files.length === 0) out.push("no file changed");
  if (r.changed.length === 0 && r.unchanged.length === 0 && r.still_rejected.length === 0) out.push("nothing to do");
  return `${out.join("\n")}\n`;
}

/** `accept|reject --dry-run`: what the review would do, and whether it would be refused as asked. */
export function renderPreview(r: ReviewPreview, p: Painter): string {
  const out: string[] = [];
  if (r.interrupted.length > 0) out.push(`an interrupted review would be completed first: ${r.interrupted.map(shortId).join(", ")}`);
  for (const c of r.changed) out.push(`would ${r.action === "accept" ? "accept" : "reject"}  ${p.paint("33", shortId(c.edit_id))}  ${c.operation} ${pathOf(c)}${c.from !== "pending" ? `  (now ${c.from})` : ""}`);
  for (const c of r.dependents) out.push(`depends   ${p.paint("33", shortId(c.edit_id))}  ${c.operation} ${pathOf(c)}  (rejected too with --cascade)`);
  if (r.unchanged.length > 0) out.push(`already ${r.action === "accept" ? "accepted" : "rejected"}: ${r.unchanged.map(shortId).join(", ")}`);
  if (r.conflicts.length > 0) out.push(renderConflicts(r.conflicts, p).trimEnd());
  if (r.external.length > 0) out.push(renderExternal(r.external, p).trimEnd());
  for (const f of r.files) out.push(`would ${f.action === "written" ? "write " : "delete"} ${shownPath(f.path)}`);
  if (r.refusal) out.push(p.paint("1;31", `as asked it would be refused: ${r.refusal.message}`));
  out.push("dry run: nothing was written");
  return `${out.join("\n")}\n`;
}

export function renderExternal(changes: ExternalChange[], p: Painter): string {
  const out: string[] = [];
  for (const c of changes) {
    out.push(p.paint("1;31", `${shownPath(c.path)} changed outside the edit history since its last recorded edit:`));
    out.push(colourDiff(c.diff.endsWith("\n") ? c.diff : `${c.diff}\n`, p));
  }
  return out.join("\n");
}

export function renderConflicts(conflicts: Conflict[], p: Painter): string {
  return `${conflicts.map((c) => `  ${p.paint("33", shortId(c.edit_id))}  ${c.reason}${c.cascadable ? "" : " (--cascade cannot resolve this)"}: ${c.message}`).join("\n")}\n`;
}

export function renderCleanup(r: CleanupResult): string {
  const out: string[] = [];
  for (const c of r.removed) out.push(`removed ${c.conversation_id} (${c.edits} edit${c.edits === 1 ? "" : "s"})`);
  for (const c of r.kept) out.push(`kept    ${c.conversation_id}: ${c.reason}`);
  if (r.removed.length === 0 && r.kept.length === 0) out.push("the history is empty");
  return `${out.join("\n")}\n`;
}

const ENTRY_KEYS_SORTED: (keyof LogEntry)[] = [
  "checkpoint_file",
  "conversation_id",
  "diff_file",
  "edit_id",
  "file_path",
  "hash_after",
  "hash_before",
  "operation",
  "source_path",
  "status",
  "timestamp",
  "tool_call_index",
  "tool_name",
];

/**
 * `status --json`: byte for byte what canonicalJson prints (keys in byte order), built with JSON.stringify on
 * objects whose keys are inserted in that order, which is several times faster on large histories.
 */
export function statusJson(r: StatusResult): string {
  const entries = r.entries.map((e) => {
    const o: Record<string, unknown> = {};
    for (const k of ENTRY_KEYS_SORTED) o[k] = e[k];
    return o;
  });
  const interrupted = r.interrupted.map((i) => ({ action: i.action, paths: i.paths, review_id: i.review_id, timestamp: i.timestamp }));
  return `${JSON.stringify({ entries, interrupted, total: r.total })}\n`;
}

/** What completing interrupted recorded writes did (a crash while a tool call published its files). */
export function renderCompletedWrites(writes: CompletedWrite[]): string {
  return writes
    .map((w) => {
      if (w.outcome === "dropped") return `interrupted write of ${w.conversation_id}: it had changed no file; dropped\n`;
      const left = w.left.length > 0 ? `; changed since, left as they are: ${w.left.join(", ")}` : "";
      return `completed an interrupted write of ${w.conversation_id}: ${w.logged.length} edit${w.logged.length === 1 ? "" : "s"} recorded${w.written.length > 0 ? `, ${w.written.length} file${w.written.length === 1 ? "" : "s"} finished` : ""}${left}\n`;
    })
    .join("");
}
