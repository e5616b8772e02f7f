import * as v from "valibot";
import { listEntries } from "../../ops/snapshot/list";
import { defineTool } from "../define-tool";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeArg, modeBranch, pathArg, readOnly, snapshotIdArg, unreadableProps } from "./common";
import description from "./snapshot_list.txt" with { type: "text" };

export const snapshotList = defineTool({
  name: "snapshot_list",
  description,
  args: v.strictObject({
    mode: modeArg,
    snapshot_id: v.optional(snapshotIdArg),
    lease_id: v.optional(leaseIdArg),
    path: v.optional(pathArg("Directory (or file) to list; default the root.")),
    recursive: v.optional(v.pipe(v.boolean(), v.description("List everything below path, not only its direct children."))),
    glob: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('Only files matching this glob, at any depth under path (implies recursive, files only): "*.test.ts" matches names, "src/**/index.*" whole repo-relative paths.'),
      ),
    ),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2000), v.description("Maximum entries to return (default 200)."))),
    cursor: v.optional(v.pipe(v.string(), v.description("From a previous answer's cursor, to get the next page; repeat the same path, recursive and glob."))),
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
  run: async (args, ctx) => ({ ...(await listEntries(ctx.ws, args)) }),
});
