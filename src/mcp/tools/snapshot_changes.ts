import * as v from "valibot";
import { CHANGES_MAX_LIMIT, snapshotChanges } from "../../ops/snapshot/changes";
import { defineTool } from "../define-tool";
import { renderChanges } from "../render/compare";
import { leaseIdArg, readOnly, unreadableProps } from "./common";
import { countsSchema, cursorArg, scopeArg, sideArg, sidesBranch, sidesOutput, statusSchema } from "./sides-common";
import description from "./snapshot_changes.txt" with { type: "text" };

const modeSchema = { type: "string", enum: ["100644", "100755", "120000"] };

export const snapshotChangesTool = defineTool({
  name: "snapshot_changes",
  description,
  args: v.strictObject({
    from: sideArg('Snapshot id, "worktree", or a git revision.'),
    to: sideArg("Same kinds as from."),
    paths: v.optional(scopeArg),
    lease_id: v.optional(leaseIdArg),
    limit: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(CHANGES_MAX_LIMIT), v.description("Default 1000.")),
    ),
    cursor: v.optional(cursorArg),
  }),
  output: sidesOutput(
    {
      from: { type: "string" },
      to: { type: "string" },
      changes: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, status: statusSchema, old_mode: modeSchema, new_mode: modeSchema },
          required: ["path", "status"],
        },
      },
      counts: countsSchema,
      truncated: { type: "boolean" },
      cursor: { type: "string" },
      ...unreadableProps,
    },
    ["from", "to", "changes", "counts", "truncated"],
  ),
  annotations: readOnly("Changed files"),
  branch: sidesBranch,
  run: async (args, ctx) => ({
    ...(await snapshotChanges(ctx.ws, { ...args, signal: ctx.signal, onProgress: (d, t) => ctx.progress(d, t, "hashing work tree files") })),
  }),
  text: (out, args) => renderChanges(out, args),
});
