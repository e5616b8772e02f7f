import * as v from "valibot";
import type { ToolAnnotations } from "../define-tool";

export const modeArg = v.pipe(
  v.picklist(["worktree", "snapshot"]),
  v.description('Default "snapshot" with snapshot_id, else "worktree" (the live files).'),
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

type Mode = "worktree" | "snapshot";

/** The mode a call means: as given, else "snapshot" when it names a snapshot_id, else the live work tree. */
export function modeOf(a: { mode?: Mode; snapshot_id?: string }): Mode {
  return a.mode ?? (a.snapshot_id !== undefined ? "snapshot" : "worktree");
}

/** The arguments with their mode filled in, as the ops take them. */
export function withMode<A extends { mode?: Mode; snapshot_id?: string }>(a: A): A & { mode: Mode } {
  return { ...a, mode: modeOf(a) };
}

export const modeBranch = (a: { mode?: Mode; snapshot_id?: string }) => (modeOf(a) === "snapshot" ? "immutable" : "worktree") as "immutable" | "worktree";

/** What whole-tree work skipped because it could not read it (ops/snapshot/unreadable.ts); absent when nothing was. */
export const unreadableProps = {
  unreadable: { type: "array", items: { type: "string" } },
  unreadable_total: { type: "integer" },
};

/** A snapshot's counts; `unreadable` when the capture skipped files it could not read. */
export const manifestStatsSchema = {
  type: "object",
  properties: { files: { type: "integer" }, bytes: { type: "integer" }, unreadable: { type: "integer" } },
  required: ["files", "bytes"],
};
