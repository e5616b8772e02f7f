import * as v from "valibot";
import type { ToolAnnotations } from "../define-tool";

export const modeArg = v.pipe(
  v.picklist(["worktree", "snapshot"]),
  v.description('"worktree" reads the live files under a lease; "snapshot" reads an immutable snapshot named by snapshot_id.'),
);
export const snapshotIdArg = v.pipe(
  v.string(),
  v.description("Snapshot id (sha256:<hex>) or a unique prefix of at least 8 hex digits. Required in snapshot mode."),
);
export const leaseIdArg = v.pipe(
  v.string(),
  v.description("Lease from an earlier worktree call. Omit to get a new lease; a stale or unknown lease fails with STALE_LEASE."),
);
export const pathArg = (what: string) => v.pipe(v.string(), v.description(`${what} Repo-relative, "/" separated; "." is the root.`));

export function readOnly(title: string): ToolAnnotations {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

export function mutating(title: string, destructive: boolean): ToolAnnotations {
  return { title, readOnlyHint: false, destructiveHint: destructive, idempotentHint: false, openWorldHint: false };
}

export const modeBranch = (a: { mode: string }) => (a.mode === "snapshot" ? "immutable" : "worktree") as "immutable" | "worktree";

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
