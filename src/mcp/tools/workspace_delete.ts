import * as v from "valibot";
import { deleteOp } from "../../ops/mutate/delete";
import { defineTool } from "../define-tool";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, pathArg, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_delete.txt" with { type: "text" };

export const workspaceDelete = defineTool({
  name: "workspace_delete",
  description,
  args: v.strictObject({
    mode: writeModeArg,
    path: pathArg("File, symlink or directory to delete."),
    recursive: v.optional(v.pipe(v.boolean(), v.description("Required to delete a directory and everything in it."))),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    mcp_conversation_id: v.optional(conversationArg),
  }),
  output: hybridOutput({ ...mutationProps, path: { type: "string" }, ignored_kept: { type: "integer" } }, [...mutationRequired, "path"]),
  annotations: mutating("Delete file", true),
  branch: modeBranch,
  run: (args, ctx) => runMutationTool(args, ctx, deleteOp),
});
