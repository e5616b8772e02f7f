/** Human output of `worksnap history`: the status table, coloured diffs, review summaries. */
import type { ExternalChange } from "../../ops/history/external";
import type { ShowResult, StatusResult } from "../../ops/history/query";
import type { Conflict } from "../../ops/history/reapply";
import type { ReviewResult } from "../../ops/history/review";
import type { CleanupResult } from "../../ops/history/cleanup";
import type { EditStatus, LogEntry } from "../../ops/history/types";
import { color } from "../output";

export interface Painter {
  on: boolean;
  paint(code: string, s: string): string;
}

export function painter(stream: NodeJS.WriteStream): Painter {
  const on = color.enabled(stream);
  return { on, paint: (code, s) => color.wrap(on, code, s) };
}

const STATUS_COLOUR: Record<EditStatus, string> = { pending: "33", accepted: "32", rejected: "31" };

export const shortId = (id: string) => id.slice(0, 8);

/** "2026-01-01T10:00:00.123456Z" -> "2026-01-01 10:00:00" (UTC). */
function shortTime(ts: string): string {
  return ts.slice(0, 19).replace("T", " ");
}

function pathOf(e: Pick<LogEntry, "file_path" | "source_path">): string {
  return e.source_path ? `${e.source_path} -> ${e.file_path}` : e.file_path;
}

export function renderStatus(r: StatusResult, p: Painter): string {
  const out: string[] = [];
  for (const i of r.interrupted) {
    out.push(p.paint("1;31", `interrupted ${i.action} ${shortId(i.review_id)} (${shortTime(i.timestamp)}) has not finished writing ${i.paths.join(", ")}; run \`worksnap history recover\``));
  }
  if (r.entries.length === 0) {
    out.push(r.total === 0 ? "no recorded edits" : `no edits match (${r.total} recorded)`);
    return `${out.join("\n")}\n`;
  }
  const rows = r.entries.map((e) => [shortId(e.edit_id), shortTime(e.timestamp), e.status, e.operation, e.conversation_id, pathOf(e)]);
  const head = ["EDIT", "TIME (UTC)", "STATUS", "OP", "CONVERSATION", "PATH"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[], paintCell: (i: number, s: string) => string) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? paintCell(i, c) : paintCell(i, c.padEnd(widths[i]!))))
      .join("  ")
      .trimEnd();
  out.push(line(head, (_, s) => p.paint("1", s)));
  for (const row of rows) {
    out.push(
      line(row, (i, s) => {
        if (i === 0) return p.paint("33", s);
        if (i === 1) return p.paint("2", s);
        if (i === 2) return p.paint(STATUS_COLOUR[row[2] as EditStatus], s);
        return s;
      }),
    );
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
  if (r.discarded.length > 0) out.push(`discarded outside changes to ${r.discarded.join(", ")}`);
  for (const f of r.files) out.push(`${f.action === "written" ? "wrote  " : "deleted"} ${f.path}${f.hash ? p.paint("2", `  sha256 ${f.hash.slice(0, 12)}`) : ""}`);
  if (r.changed.length > 0 && r.files.length === 0) out.push("no file changed");
  if (r.changed.length === 0 && r.unchanged.length === 0) out.push("nothing to do");
  return `${out.join("\n")}\n`;
}

export function renderExternal(changes: ExternalChange[], p: Painter): string {
  const out: string[] = [];
  for (const c of changes) {
    out.push(p.paint("1;31", `${c.path} changed outside the edit history since its last recorded edit:`));
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
