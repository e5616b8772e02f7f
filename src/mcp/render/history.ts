import type { OwnEdit, OwnListResult, OwnUndoResult } from "../../ops/history/agent";
import { count, line, lines, pathText, raw } from "./text";

/** Edit ids as the history CLI shows them: 8 characters, a prefix history_undo takes back. */
const editId = (id: string) => id.slice(0, 8);

function editLine(e: { edit_id: string; operation: string; path: string; from?: string }): string {
  return `${editId(e.edit_id)} ${e.operation} ${e.from !== undefined ? `${pathText(e.from)} → ` : ""}${pathText(e.path)}`;
}

/**
 * history_list: one line per conversation (edits, pending), then one per edit,
 * newest first, `id status operation path +added -removed`, each followed by
 * its diff when asked for.
 */
export function renderHistoryList(out: OwnListResult): string {
  if (out.total === 0) return "no edits of yours in the history";
  const convs = out.conversations.map((c) => line(`conversation ${c.mcp_conversation_id}`, count(c.edits, "edit"), c.pending > 0 && `${c.pending} pending`));
  const edits = out.edits.flatMap((e: OwnEdit) => [
    line(`${editLine(e).replace(" ", ` ${e.status} `)}`, (e.added > 0 || e.removed > 0) && `+${e.added} -${e.removed}`),
    ...(e.diff ? [raw(e.diff)] : []),
    ...(e.diff_truncated ? ["… diff cut"] : []),
  ]);
  return lines(...convs, ...edits, out.truncated && `… ${out.total - out.edits.length} older edits not shown (raise limit)`);
}

/** history_undo: what was undone, what already was, and the files rebuilt. */
export function renderHistoryUndo(out: OwnUndoResult): string {
  return lines(
    out.undone.length === 0 ? "nothing undone" : `undone ${count(out.undone.length, "edit")}`,
    ...out.undone.map(editLine),
    out.already_undone.length > 0 && `already undone: ${out.already_undone.map(editId).join(" ")}`,
    ...out.files.map((f) => (f.action === "deleted" ? `deleted ${pathText(f.path)}` : `wrote ${pathText(f.path)}`)),
  );
}
