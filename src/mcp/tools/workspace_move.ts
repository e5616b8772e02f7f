import * as v from "valibot";
import { moveOp } from "../../ops/mutate/move";
import { defineTool } from "../define-tool";
import { renderMove } from "../render/mutation";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeBranch, mutating, pathArg, snapshotIdArg } from "./common";
import { conversationArg, mutationProps, mutationRequired, runMutationTool, writeModeArg } from "./workspace-common";
import description from "./workspace_move.txt" with { type: "text" };

export const workspaceMove = defineTool({
  name: "workspace_move",
  description,
  args: v.strictObject({
    mode: v.optional(writeModeArg),
    from: v.string(),
    to: pathArg("The full new path."),
    overwrite: v.optional(v.boolean()),
    lease_id: v.optional(leaseIdArg),
    snapshot_id: v.optional(snapshotIdArg),
    mcp_conversation_id: v.optional(conversationArg),
  }),
  output: hybridOutput({ ...mutationProps, from: { type: "string" }, to: { type: "string" }, ignored_kept: { type: "integer" } }, [...mutationRequired, "from", "to"]),
  annotations: mutating("Move file", true),
  branch: modeBranch,
  run: (args, ctx) => runMutationTool(args, ctx, moveOp),
  text: (out) => renderMove(out),
});
