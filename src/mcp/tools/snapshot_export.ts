import * as v from "valibot";
import { exportSnapshot } from "../../ops/snapshot/export";
import { defineTool } from "../define-tool";
import { renderExport } from "../render/snapshot";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, mutating, snapshotIdArg, unreadableProps } from "./common";
import description from "./snapshot_export.txt" with { type: "text" };

export const snapshotExportTool = defineTool({
  name: "snapshot_export",
  description,
  args: v.strictObject({
    snapshot_id: v.optional(snapshotIdArg),
    mode: v.optional(
      v.pipe(v.picklist(["snapshot", "worktree"]), v.description('Default "snapshot".')),
    ),
    lease_id: v.optional(leaseIdArg),
    paths: v.optional(v.pipe(v.array(v.string()), v.description("Files or directories; default all."))),
  }),
  output: hybridOutput(
    {
      snapshot_id: { type: "string" },
      source_snapshot_id: { type: "string" },
      path: { type: "string" },
      bytes: { type: "integer" },
      sha256: { type: "string" },
      files: { type: "integer" },
      ...unreadableProps,
    },
    ["path", "bytes", "sha256", "files"],
  ),
  annotations: { ...mutating("Export snapshot bundle", false), idempotentHint: true },
  branch: (a) => (a.mode === "worktree" ? "worktree" : "immutable"),
  run: async (args, ctx) => ({
    ...(await exportSnapshot(ctx.ws, { ...args, signal: ctx.signal, onProgress: (d, t) => ctx.progress(d, t, "writing bundle") })),
  }),
  text: (out) => renderExport(out),
});
