import type { ApplyPatchResult } from "../../ops/mutate/apply-patch";
import type { DeleteResult } from "../../ops/mutate/delete";
import type { ChangedEntry, MutationResult } from "../../ops/mutate/mutation";
import type { MoveResult } from "../../ops/mutate/move";
import type { WriteFileResult } from "../../ops/mutate/write-file";
import type { HunkReject, LineExcerpt } from "../../ops/patch/types";
import { count, line, lines, pathText, raw, short, size } from "./text";

type Mutation = MutationResult<object>;

/** Where the write landed: the new lease (worktree) or the derived snapshot and its base. */
function landed(out: Mutation): string {
  if (out.cache_hint === "until_dirty") return out.lease_id !== undefined ? short(out.lease_id) : "no lease";
  return out.snapshot_id === out.base_snapshot_id ? `snapshot ${short(out.snapshot_id)} unchanged` : `snapshot ${short(out.snapshot_id)} (from ${short(out.base_snapshot_id)})`;
}

/** A conversation the server just started: the id to pass on, in the argument's name. */
function conversation(out: Mutation): string | null {
  return out.note !== undefined && out.mcp_conversation_id !== undefined ? `new conversation: pass mcp_conversation_id ${out.mcp_conversation_id} on this turn's next edits` : null;
}

/** "2 modified, 1 created" over the changed list. */
function statusCounts(out: Mutation): string {
  if (out.changed_total === 0) return "no change";
  const n = new Map<string, number>();
  for (const c of out.changed) n.set(c.status, (n.get(c.status) ?? 0) + 1);
  const listed = [...n].map(([status, k]) => `${k} ${status}`).join(", ");
  return out.changed_total > out.changed.length ? `${out.changed_total} changed (${listed} listed)` : listed;
}

const LETTER: Record<ChangedEntry["status"], string> = { created: "A", modified: "M", deleted: "D", renamed: "R" };

function changedLine(c: ChangedEntry): string {
  const path = c.from !== undefined ? `${pathText(c.from)} → ${pathText(c.path)}` : pathText(c.path);
  return line(`${LETTER[c.status]} ${path}`, c.mode === "100755" && "executable", c.mode === "120000" && "symlink", c.requested_path !== undefined && `via ${pathText(c.requested_path)}`);
}

/** The changed paths, listed when no diff shows them all; the diff with what it leaves out otherwise. */
function changeBody(out: Mutation): string[] {
  const listAll = out.diff === undefined || (out.diff_omitted ?? 0) > 0;
  const listed = listAll ? out.changed.map(changedLine) : [];
  const cut = out.truncated ? [`… ${out.changed_total - out.changed.length} more changed paths`] : [];
  const diff = out.diff ? [raw(out.diff)] : [];
  const omitted = out.diff_omitted ? [`… diff of ${count(out.diff_omitted, "file")} not shown (size cap)`] : [];
  return [...listed, ...cut, ...diff, ...omitted];
}

/**
 * workspace_apply_patch: "applied" with the diff of what changed, moved hunks
 * and warnings; or "not applied" with every reject and the current text the
 * patch must match (raw lines under `text at N:`), so it can be fixed without
 * another read.
 */
export function renderApplyPatch(out: ApplyPatchResult): string {
  const warnings = out.warnings.map((w) => `warning: ${w}`);
  if (out.warnings_total > out.warnings.length) warnings.push(`… ${out.warnings_total - out.warnings.length} more warnings`);
  if (!out.applied) {
    const counts = out.reject_counts ?? { files: out.rejects?.length ?? 0, hunks: 0 };
    const rejects = (out.rejects ?? []).flatMap((f) => [pathText(f.path), ...f.hunks.flatMap(rejectLines)]);
    if (out.rejects_truncated) rejects.push("… more rejects not shown");
    return lines(line(`not applied: ${count(counts.hunks, "hunk")} rejected in ${count(counts.files, "file")}, nothing written`, landed(out)), ...rejects, ...warnings);
  }
  const stale = (out.stale_reads ?? []).flatMap((f) => (f.diff ? [`what had changed in ${pathText(f.path)} since it was read:`, raw(f.diff)] : []));
  const offsets = out.offsets.map((o) => `hunk ${o.index} of ${pathText(o.path)} applied ${Math.abs(o.offset)} lines ${o.offset > 0 ? "below" : "above"} its stated line`);
  if (out.offsets_total > out.offsets.length) offsets.push(`… ${out.offsets_total - out.offsets.length} more moved hunks`);
  return lines(line("applied", statusCounts(out), landed(out)), conversation(out), ...offsets, ...warnings, ...stale, ...changeBody(out));
}

function rejectLines(h: HunkReject): string[] {
  return [`hunk ${h.index} ${h.reason}: ${h.message}`, ...excerpt("text at", h.expected_at), ...excerpt("closest match at", h.closest)];
}

function excerpt(label: string, e: LineExcerpt | undefined): string[] {
  if (!e) return [];
  if (e.text.length === 0) return [`${label} ${e.line}: (end of file)`];
  return [`${label} ${e.line}-${e.line + e.text.length - 1}:`, ...e.text];
}

/** workspace_write_file: created or modified, the size and blob written, and the diff. */
export function renderWriteFile(out: WriteFileResult): string {
  const target = out.resolved_path !== undefined ? `${pathText(out.path)} → ${pathText(out.resolved_path)}` : pathText(out.path);
  const what = out.created ? "created" : out.changed_total === 0 || out.diff === "" ? "unchanged (same content)" : "modified";
  return lines(line(`${what} ${target}`, size(out.size), `blob ${short(out.blob)}`, landed(out)), conversation(out), out.changed_total > 0 && out.diff ? raw(out.diff) : null);
}

/** workspace_delete: what went, and the ignored files a directory kept. */
export function renderDelete(out: DeleteResult): string {
  const single = out.changed_total === 1 && out.changed[0]?.path === out.path;
  const head = line(
    `deleted ${pathText(out.path)}${single ? "" : ` (${count(out.changed_total, "file")})`}`,
    (out.ignored_kept ?? 0) > 0 && `${count(out.ignored_kept ?? 0, "ignored file")} kept`,
    landed(out),
  );
  return lines(head, conversation(out), ...(single ? [] : changeBody(out)));
}

/** workspace_move: from → to, and each file when a directory moved. */
export function renderMove(out: MoveResult): string {
  const single = out.changed_total === 1 && out.changed[0]?.path === out.to;
  const head = line(
    `moved ${pathText(out.from)} → ${pathText(out.to)}${single ? "" : ` (${count(out.changed_total, "file")})`}`,
    (out.ignored_kept ?? 0) > 0 && `${count(out.ignored_kept ?? 0, "ignored file")} kept`,
    landed(out),
  );
  return lines(head, conversation(out), ...(single ? [] : changeBody(out)));
}
