import * as v from "valibot";
import { errorBranch, immutableBranch, worktreeBranch, type JsonSchema, type Props } from "../output-schema";
import type { Branch } from "../define-tool";

/** A side of a comparison: a snapshot id (or unique prefix of 8+ hex digits) or "worktree". */
export const sideArg = (which: string) =>
  v.pipe(v.string(), v.minLength(1), v.description(`${which} side: a snapshot id (sha256:<hex> or a unique prefix of 8+ hex digits), or "worktree" for the live files.`));

export const scopeArg = v.pipe(
  v.array(v.string()),
  v.description('Files or directories to compare (repo-relative, "/" separated). Omit for the whole tree.'),
);

/**
 * The output of a tool comparing two sides: the immutable branch when both
 * sides are snapshots, the worktree branch (lease_id + fingerprint) when
 * either is "worktree", or an error.
 */
export function sidesOutput(props: Props, required: string[]): JsonSchema {
  return { type: "object", oneOf: [immutableBranch(props, required), worktreeBranch(props, required), errorBranch] };
}

export const sidesBranch = (a: { from: string; to: string }): Branch => (a.from === "worktree" || a.to === "worktree" ? "worktree" : "immutable");

export const statusSchema: JsonSchema = { type: "string", enum: ["added", "modified", "deleted", "mode_changed"] };

export const countsSchema: JsonSchema = {
  type: "object",
  properties: {
    added: { type: "integer" },
    modified: { type: "integer" },
    deleted: { type: "integer" },
    mode_changed: { type: "integer" },
    total: { type: "integer" },
  },
  required: ["added", "modified", "deleted", "mode_changed", "total"],
};
