import * as v from "valibot";
import { DIFF_CONTEXT_MAX, snapshotDiff } from "../../ops/snapshot/diff";
import { defineTool } from "../define-tool";
import { leaseIdArg, readOnly, unreadableProps } from "./common";
import { countsSchema, scopeArg, sideArg, sidesBranch, sidesOutput, statusSchema } from "./sides-common";
import description from "./snapshot_diff.txt" with { type: "text" };

export const snapshotDiffTool = defineTool({
  name: "snapshot_diff",
  description,
  args: v.strictObject({
    from: sideArg("Old"),
    to: sideArg("New"),
    paths: v.optional(scopeArg),
    context_lines: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(DIFF_CONTEXT_MAX), v.description("Unchanged lines around each change (default 3).")),
    ),
    lease_id: v.optional(leaseIdArg),
    cursor: v.optional(v.pipe(v.string(), v.description("From a previous answer's cursor, to get the next page; repeat the same from/to/paths/context_lines."))),
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
});
