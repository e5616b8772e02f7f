import * as v from "valibot";
import { listEntries } from "../../ops/snapshot/list";
import { defineTool } from "../define-tool";
import { renderList } from "../render/list";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeArg, modeBranch, withMode, pathArg, readOnly, snapshotIdArg, unreadableProps } from "./common";
import { cursorArg } from "./sides-common";
import description from "./snapshot_list.txt" with { type: "text" };

export const snapshotList = defineTool({
  name: "snapshot_list",
  description,
  args: v.strictObject({
    mode: v.optional(modeArg),
    snapshot_id: v.optional(snapshotIdArg),
    lease_id: v.optional(leaseIdArg),
    path: v.optional(pathArg('Default "." (the root).')),
    recursive: v.optional(v.boolean()),
    glob: v.optional(v.pipe(v.string(), v.minLength(1))),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2000), v.description("Default 200."))),
    cursor: v.optional(cursorArg),
  }),
  output: hybridOutput(
    {
      path: { type: "string" },
      entries: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            type: { type: "string", enum: ["file", "dir", "symlink"] },
            size: { type: "integer" },
            blob: { type: "string" },
            mode: { type: "string" },
          },
          required: ["path", "type"],
        },
      },
      total: { type: "integer" },
      truncated: { type: "boolean" },
      cursor: { type: "string" },
      ...unreadableProps,
    },
    ["path", "entries", "total", "truncated"],
  ),
  annotations: readOnly("List files"),
  branch: modeBranch,
  run: async (args, ctx) => ({ ...(await listEntries(ctx.ws, withMode(args))) }),
  text: (out, args) => renderList(out, args),
});
