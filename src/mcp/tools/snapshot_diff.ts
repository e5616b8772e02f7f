import * as v from "valibot";
import { DIFF_CONTEXT_MAX, snapshotDiff } from "../../ops/snapshot/diff";
import { defineTool } from "../define-tool";
import { renderDiff } from "../render/compare";
import { leaseIdArg, readOnly, unreadableProps } from "./common";
import { countsSchema, cursorArg, scopeArg, sideArg, sidesBranch, sidesOutput, statusSchema } from "./sides-common";
import description from "./snapshot_diff.txt" with { type: "text" };

export const snapshotDiffTool = defineTool({
  name: "snapshot_diff",
  description,
  args: v.strictObject({
    from: sideArg('Snapshot id, "worktree", or a git revision.'),
    to: sideArg("Same kinds as from."),
    paths: v.optional(scopeArg),
    context_lines: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(DIFF_CONTEXT_MAX), v.description("Default 3.")),
    ),
    binary: v.optional(v.pipe(v.boolean(), v.description("Binary files as git binary patches, which apply."))),
    lease_id: v.optional(leaseIdArg),
    cursor: v.optional(cursorArg),
  }),
  output: sidesOutput(
    {
      from: { type: "string" },
      to: { type: "string" },
      diff: { type: "string" },
      files: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, status: statusSchema, partial: { type: "boolean" } },
          required: ["path", "status"],
        },
      },
      omitted: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, status: statusSchema, reason: { type: "string" }, bytes: { type: "integer" } },
          required: ["path", "status", "reason"],
        },
      },
      counts: countsSchema,
      truncated: { type: "boolean" },
      cursor: { type: "string" },
      ...unreadableProps,
    },
    ["from", "to", "diff", "files", "omitted", "counts", "truncated"],
  ),
  annotations: readOnly("Diff"),
  branch: sidesBranch,
  run: async (args, ctx) => ({
    ...(await snapshotDiff(ctx.ws, { ...args, signal: ctx.signal, onProgress: (d, t) => ctx.progress(d, t, "hashing work tree files") })),
  }),
  text: (out, args) => renderDiff(out, args),
});
