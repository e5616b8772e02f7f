import * as v from "valibot";
import { applyPatchOp } from "../../ops/mutate/apply-patch";
import { defineTool } from "../define-tool";
import { renderApplyPatch } from "../render/mutation";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_apply_patch.txt" with { type: "text" };

const excerpt = { type: "object", properties: { line: { type: "integer" }, text: { type: "array", items: { type: "string" } } }, required: ["line", "text"] };

export const workspaceApplyPatch = defineTool({
  name: "workspace_apply_patch",
  description,
  args: v.strictObject({
    mode: v.optional(writeModeArg),
    patch: v.pipe(v.string(), v.description('Unified diff, or "base64:" and base64 for bytes.')),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    mcp_conversation_id: v.optional(conversationArg),
  }),
  output: hybridOutput(
    {
      ...mutationProps,
      applied: { type: "boolean" },
      rejects: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            hunks: {
              type: "array",
              items: {
                type: "object",
                properties: {
                  index: { type: "integer" },
                  reason: { type: "string", enum: ["context_mismatch", "file_not_found", "file_exists", "binary_patch_unsupported", "malformed"] },
                  message: { type: "string" },
                  expected_at: excerpt,
                  closest: excerpt,
                },
                required: ["index", "reason", "message"],
              },
            },
          },
          required: ["path", "hunks"],
        },
      },
      reject_counts: { type: "object", properties: { files: { type: "integer" }, hunks: { type: "integer" } }, required: ["files", "hunks"] },
      rejects_truncated: { type: "boolean" },
      offsets: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, index: { type: "integer" }, offset: { type: "integer" } },
          required: ["path", "index", "offset"],
        },
      },
      offsets_total: { type: "integer" },
      warnings: { type: "array", items: { type: "string" } },
      warnings_total: { type: "integer" },
    },
    [...mutationRequired, "applied", "offsets", "offsets_total", "warnings", "warnings_total"],
  ),
  annotations: mutating("Apply patch", true),
  branch: modeBranch,
  run: (args, ctx) => runMutationTool(args, ctx, applyPatchOp),
  text: (out) => renderApplyPatch(out),
});
