import * as v from "valibot";
import { deleteOp } from "../../ops/mutate/delete";
import { defineTool } from "../define-tool";
import { renderDelete } from "../render/mutation";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_delete.txt" with { type: "text" };

export const workspaceDelete = defineTool({
  name: "workspace_delete",
  description,
  args: v.strictObject({
    mode: v.optional(writeModeArg),
    path: v.string(),
    recursive: v.optional(v.boolean()),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    mcp_conversation_id: v.optional(conversationArg),
  }),
  output: hybridOutput({ ...mutationProps, path: { type: "string" }, ignored_kept: { type: "integer" } }, [...mutationRequired, "path"]),
  annotations: mutating("Delete file", true),
  branch: modeBranch,
  run: (args, ctx) => runMutationTool(args, ctx, deleteOp),
  text: (out) => renderDelete(out),
});
