import * as v from "valibot";
import type { ToolAnnotations } from "../define-tool";

export const modeArg = v.pipe(
  v.picklist(["worktree", "snapshot"]),
  v.description('"worktree": live files; "snapshot": snapshot_id.'),
);
export const snapshotIdArg = v.pipe(
  v.string(),
  v.description("Snapshot id or a prefix of 8+ hex digits."),
);
export const leaseIdArg = v.pipe(
  v.string(),
  v.description("From your last answer; STALE_LEASE if the tree changed since."),
);
export const pathArg = (what: string) => v.pipe(v.string(), v.description(what));

export function readOnly(title: string): ToolAnnotations {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

export function mutating(title: string, destructive: boolean): ToolAnnotations {
  return { title, readOnlyHint: false, destructiveHint: destructive, idempotentHint: false, openWorldHint: false };
}

export const modeBranch = (a: { mode: string }) => (a.mode === "snapshot" ? "immutable" : "worktree") as "immutable" | "worktree";
