import * as v from "valibot";
import { createSnapshot } from "../../ops/snapshot/create";
import { defineTool } from "../define-tool";
import { fingerprintSchema, immutableOutput } from "../output-schema";
import { leaseIdArg, manifestStatsSchema, mutating, unreadableProps } from "./common";
import description from "./snapshot_create.txt" with { type: "text" };

export const snapshotCreate = defineTool({
  name: "snapshot_create",
  description,
  args: v.strictObject({
    paths: v.optional(
      v.pipe(v.array(v.string()), v.description('Files or directories to capture; ["."] captures the whole tree. Omit to capture the files the lease touched.')),
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
});
