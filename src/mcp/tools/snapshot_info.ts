import * as v from "valibot";
import { snapshotInfo } from "../../ops/snapshot/info";
import { defineTool } from "../define-tool";
import { renderInfo } from "../render/snapshot";
import { fingerprintSchema, immutableOutput } from "../output-schema";
import { manifestStatsSchema, readOnly, snapshotIdArg } from "./common";
import description from "./snapshot_info.txt" with { type: "text" };

export const snapshotInfoTool = defineTool({
  name: "snapshot_info",
  description,
  args: v.strictObject({ snapshot_id: snapshotIdArg }),
  output: immutableOutput(
    {
      snapshot_id: { type: "string" },
      fingerprint: fingerprintSchema,
      created_at: { type: "string" },
      manifest_stats: manifestStatsSchema,
      paths: { type: "array", items: { type: "string" } },
    },
    ["snapshot_id", "fingerprint", "created_at", "manifest_stats"],
  ),
  annotations: readOnly("Snapshot info"),
  branch: () => "immutable",
  run: async (args, ctx) => ({ ...snapshotInfo(ctx.ws, args) }),
  text: (out) => renderInfo(out),
});
