import * as v from "valibot";
import { UNDO_MAX, undoOwnEdits } from "../../ops/history/agent";
import { WorksnapError } from "../../core/errors";
import { defineTool } from "../define-tool";
import { renderHistoryUndo } from "../render/history";
import { plainOutput } from "../output-schema";
import { mutating } from "./common";
import { historyStore } from "./history-common";
import description from "./history_undo.txt" with { type: "text" };

/** How an agent resolves a refusal, by the resolution the history offers. */
const RESOLUTION_WORDS: Record<string, string> = {
  undo_together: "Undo them together: pass all of them in edit_ids",
  ask_person: "This is a person's decision: ask the user to review it with `worksnap history review`",
};

export const historyUndo = defineTool({
  name: "history_undo",
  description,
  args: v.strictObject({
    edit_ids: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(UNDO_MAX), v.description("Your edits to undo (ids from history_list or a unique 8+ character prefix)."))),
    last: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(UNDO_MAX), v.description("Undo your last N pending edits instead."))),
    mcp_conversation_id: v.optional(v.pipe(v.string(), v.description("For last: which of your conversations; default: the one you wrote last."))),
  }),
  output: plainOutput(
    {
      undone: {
        type: "array",
        items: {
          type: "object",
          properties: { edit_id: { type: "string" }, mcp_conversation_id: { type: "string" }, operation: { type: "string" }, path: { type: "string" }, from: { type: "string" } },
          required: ["edit_id", "mcp_conversation_id", "operation", "path"],
        },
      },
      already_undone: { type: "array", items: { type: "string" } },
      files: {
        type: "array",
        items: {
          type: "object",
          properties: { path: { type: "string" }, action: { type: "string", enum: ["written", "deleted"] }, hash: { type: ["string", "null"] } },
          required: ["path", "action", "hash"],
        },
      },
    },
    ["undone", "already_undone", "files"],
  ),
  annotations: mutating("Undo own edits", true),
  branch: () => "none",
  run: async (args, ctx) => {
    try {
      return { ...(await undoOwnEdits(ctx.ws, historyStore(ctx.ws), ctx.session.conversations(), args)) };
    } catch (err) {
      const words = err instanceof WorksnapError ? RESOLUTION_WORDS[String(err.details.resolution)] : undefined;
      throw words ? new WorksnapError((err as WorksnapError).code, `${(err as WorksnapError).message}. ${words}`, (err as WorksnapError).details) : err;
    }
  },
  text: (out) => renderHistoryUndo(out),
});
