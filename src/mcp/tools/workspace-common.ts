import * as v from "valibot";
import type { Workspace } from "../../ops/workspace";
import type { ToolContext } from "../define-tool";
import type { Props } from "../output-schema";
import { openedConversation } from "../../ops/history/agent";
import { modeOf } from "./common";
import { historyStore } from "./history-common";

/** Arguments and answer fields the four workspace mutation tools share. */
export const writeModeArg = v.pipe(
  v.picklist(["worktree", "snapshot"]),
  v.description('Default "snapshot" (derive a new one) with snapshot_id, else "worktree" (the live files).'),
);

export const conversationArg = v.pipe(
  v.string(),
  v.description("Groups a turn's edits for review: omit on the first, then pass the id it returns."),
);

const changedSchema = {
  type: "array",
  items: {
    type: "object",
    properties: {
      path: { type: "string" },
      status: { type: "string", enum: ["created", "modified", "deleted", "renamed"] },
      from: { type: "string" },
      blob: { type: "string" },
      mode: { type: "string", enum: ["100755", "120000"] },
      requested_path: { type: "string" },
    },
    required: ["path", "status"],
  },
};

export const mutationProps: Props = {
  base_snapshot_id: { type: "string" },
  changed: changedSchema,
  changed_total: { type: "integer" },
  truncated: { type: "boolean" },
  diff: { type: "string" },
  diff_omitted: { type: "integer" },
  mcp_conversation_id: { type: "string" },
  note: { type: "string" },
};

export const mutationRequired = ["changed", "changed_total", "truncated"];

interface MutationCall {
  mcp_conversation_id?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message?: string) => void;
  onRecorded?: (recorded: { conversation_id: string; edit_ids: string[] }) => void;
}

type Mode = "worktree" | "snapshot";

/**
 * Runs a mutation op with the call's cancellation and progress, and remembers
 * on the session the conversation it wrote into: one the server started for
 * it (the call named none) is the session's own; one the call named is its
 * own when this first recorded write of the session opened it (session.ts).
 */
export async function runMutationTool<
  A extends { mode?: Mode; snapshot_id?: string; mcp_conversation_id?: string },
  R extends object & { mcp_conversation_id?: string } = { mcp_conversation_id?: string },
>(args: A, ctx: ToolContext, op: (ws: Workspace, call: A & { mode: Mode } & MutationCall) => Promise<R>): Promise<R> {
  let recorded: string[] = [];
  const out = await op(ctx.ws, { ...args, mode: modeOf(args), signal: ctx.signal, onProgress: ctx.progress, onRecorded: (r) => void (recorded = r.edit_ids) });
  const conv = out.mcp_conversation_id;
  if (conv !== undefined && recorded.length > 0) {
    if (args.mcp_conversation_id === undefined) ctx.session.conversationStarted(conv);
    else ctx.session.conversationWritten(conv, ctx.session.undecided(conv) && (await openedConversation(historyStore(ctx.ws), conv, recorded)));
  }
  return { ...out };
}
