import * as v from "valibot";
import { writeFileOp } from "../../ops/mutate/write-file";
import { defineTool } from "../define-tool";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, pathArg, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_write_file.txt" with { type: "text" };

export const workspaceWriteFile = defineTool({
  name: "workspace_write_file",
  description,
  args: v.strictObject({
    mode: writeModeArg,
    path: pathArg("File to write (created with its parent directories if missing)."),
    content: v.pipe(v.string(), v.description('The whole new content: UTF-8 text, or "base64:" followed by base64 for binary bytes.')),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    expected_blob: v.optional(
      v.pipe(v.string(), v.description("Write only if the file's current blob (sha256:<hex>, from a read) is this one; otherwise REPO_CHANGED and nothing is written.")),
    ),
    create_only: v.optional(v.pipe(v.boolean(), v.description("Refuse (REPO_CHANGED) if the file already exists."))),
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
});
