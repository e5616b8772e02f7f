import * as v from "valibot";
import { writeFileOp } from "../../ops/mutate/write-file";
import { defineTool } from "../define-tool";
import { renderWriteFile } from "../render/mutation";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_write_file.txt" with { type: "text" };

export const workspaceWriteFile = defineTool({
  name: "workspace_write_file",
  description,
  args: v.strictObject({
    mode: v.optional(writeModeArg),
    path: v.string(),
    content: v.pipe(v.string(), v.description('Text, or "base64:" and base64 for bytes.')),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    expected_blob: v.optional(
      v.pipe(v.string(), v.description("Blob id or 12+ hex prefix from a read.")),
    ),
    create_only: v.optional(v.boolean()),
    mcp_conversation_id: v.optional(conversationArg),
  }),
  output: hybridOutput(
    {
      ...mutationProps,
      path: { type: "string" },
      resolved_path: { type: "string" },
      blob: { type: "string" },
      size: { type: "integer" },
      created: { type: "boolean" },
    },
    [...mutationRequired, "path", "blob", "size", "created"],
  ),
  annotations: mutating("Write file", true),
  branch: modeBranch,
  run: (args, ctx) => runMutationTool(args, ctx, writeFileOp),
  text: (out) => renderWriteFile(out),
});
