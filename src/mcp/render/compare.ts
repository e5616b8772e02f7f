import type { Change, ChangeCounts, ChangesResult } from "../../ops/snapshot/changes";
import type { DiffResult } from "../../ops/snapshot/diff";
import { count, leaseTag, line, lines, pathText, raw, short, size, unreadableLine } from "./text";

export interface SidesView {
  from: string;
  to: string;
}

/**
 * A side as the model named it and as it resolved: `worktree`, a snapshot or
 * commit prefix, or a revision with the commit it names (`HEAD~1 (1a2b3c4d5e6f)`).
 */
export function sideText(given: string, resolved: string): string {
  if (resolved === "worktree") return "worktree";
  const id = short(resolved);
  const hex = resolved.startsWith("sha256:") ? resolved.slice(7) : resolved;
  const bare = given.startsWith("sha256:") ? given.slice(7) : given;
  return bare !== "" && hex.startsWith(bare) ? id : `${given} (${id})`;
}

function sidesLine(out: { from: string; to: string }, args: SidesView): string {
  return `${sideText(args.from, out.from)} → ${sideText(args.to, out.to)}`;
}

/** "3 changed: 1 added, 2 modified"; statuses with no file are left out. */
function countsText(c: ChangeCounts): string {
  if (c.total === 0) return "no changes";
  const parts = (["added", "modified", "deleted", "mode_changed"] as const).filter((k) => c[k] > 0).map((k) => `${c[k]} ${k.replace("_", " ")}`);
  return `${c.total} changed: ${parts.join(", ")}`;
}

const LETTER: Record<Change["status"], string> = { added: "A", modified: "M", deleted: "D", mode_changed: "M" };

/** snapshot_changes as `git diff --name-status` prints it: a letter and the path, mode changes noted. */
export function renderChanges(out: ChangesResult, args: SidesView): string {
  const body = out.changes.map((c) => {
    const mode = c.old_mode !== undefined ? ` (mode ${c.old_mode}→${c.new_mode}${c.status === "mode_changed" ? " only" : ""})` : "";
    return `${LETTER[c.status]} ${pathText(c.path)}${mode}`;
  });
  const missing = out.counts.total - out.changes.length;
  const tail = out.truncated ? line(`… ${missing > 0 ? `${missing} more` : "more"}`, out.cursor && `cursor ${out.cursor}`) : null;
  return lines(line(sidesLine(out, args), countsText(out.counts), leaseTag(out)), ...body, tail, unreadableLine(out));
}

/**
 * snapshot_diff: the git diff text as it is under one header line; files too
 * large to show and the cursor of a cut answer follow it.
 */
export function renderDiff(out: DiffResult, args: SidesView): string {
  const shown = out.files.length + out.omitted.length;
  const head = line(
    sidesLine(out, args),
    out.counts.total === 0 ? "no changes" : shown < out.counts.total || out.cursor ? `${count(shown, "file")} of ${out.counts.total} shown` : count(out.counts.total, "file"),
    leaseTag(out),
  );
  const omitted = out.omitted.map((o) => `omitted ${pathText(o.path)} (${o.status}, ${size(o.bytes)}: too large to show)`);
  const tail = out.truncated ? line(out.files[out.files.length - 1]?.partial ? "… the last file continues" : "… more files", out.cursor && `cursor ${out.cursor}`) : null;
  return lines(head, out.diff !== "" && raw(out.diff), ...omitted, tail, unreadableLine(out));
}
