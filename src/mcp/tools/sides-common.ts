import * as v from "valibot";
import { errorBranch, immutableBranch, worktreeBranch, type JsonSchema, type Props } from "../output-schema";
import type { Branch } from "../define-tool";

/** A side of a comparison: a snapshot id (or unique prefix of 8+ hex digits) or "worktree". */
export const sideArg = (which: string) =>
  v.pipe(v.string(), v.minLength(1), v.description(which));

/** A cut answer's cursor, passed back with otherwise the same arguments. */
export const cursorArg = v.pipe(v.string(), v.description("From a cut answer; repeat the call with it."));

export const scopeArg = v.pipe(
  v.array(v.string()),
  v.description("Files, directories or globs; default all."),
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
