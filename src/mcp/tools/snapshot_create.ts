import * as v from "valibot";
import { createSnapshot } from "../../ops/snapshot/create";
import { defineTool } from "../define-tool";
import { renderCreate } from "../render/snapshot";
import { fingerprintSchema, immutableOutput } from "../output-schema";
import { leaseIdArg, manifestStatsSchema, mutating, unreadableProps } from "./common";
import description from "./snapshot_create.txt" with { type: "text" };

export const snapshotCreate = defineTool({
  name: "snapshot_create",
  description,
  args: v.strictObject({
    paths: v.optional(
      v.pipe(v.array(v.string()), v.description('["."] for all; omit to capture what lease_id read.')),
    ),
    lease_id: v.optional(leaseIdArg),
  }),
  output: immutableOutput(
    {
      snapshot_id: { type: "string" },
      fingerprint: fingerprintSchema,
      created_at: { type: "string" },
      manifest_stats: manifestStatsSchema,
      skipped: { type: "object" },
      ...unreadableProps,
    },
    ["snapshot_id", "fingerprint", "manifest_stats"],
  ),
  annotations: { ...mutating("Create snapshot", false), idempotentHint: true },
  branch: () => "immutable",
  run: async (args, ctx) => ({
    ...(await createSnapshot(ctx.ws, { ...args, signal: ctx.signal, onProgress: (d, t) => ctx.progress(d, t, "hashing files") })),
  }),
  text: (out) => renderCreate(out),
});
