import * as v from "valibot";
import { listOwnEdits, OWN_LIST_MAX } from "../../ops/history/agent";
import { defineTool } from "../define-tool";
import { renderHistoryList } from "../render/history";
import { plainOutput } from "../output-schema";
import { readOnly } from "./common";
import { historyStore } from "./history-common";
import description from "./history_list.txt" with { type: "text" };

export const ownEditSchema = {
  type: "object",
  properties: {
    edit_id: { type: "string" },
    mcp_conversation_id: { type: "string" },
    tool_call_index: { type: "integer" },
    timestamp: { type: "string" },
    operation: { type: "string", enum: ["create", "replace", "edit", "delete", "move"] },
    path: { type: "string" },
    from: { type: "string" },
    status: { type: "string", enum: ["pending", "accepted", "rejected"] },
    added: { type: "integer" },
    removed: { type: "integer" },
    diff: { type: "string" },
    diff_truncated: { type: "boolean" },
  },
  required: ["edit_id", "mcp_conversation_id", "tool_call_index", "timestamp", "operation", "path", "status", "added", "removed"],
};

export const historyList = defineTool({
  name: "history_list",
  description,
  args: v.strictObject({
    mcp_conversation_id: v.optional(v.pipe(v.string(), v.description("One of your conversations; default: all of them."))),
    include_diff: v.optional(v.pipe(v.boolean(), v.description("Include each edit's unified diff (capped)."))),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(OWN_LIST_MAX), v.description("Most edits to return (default 50)."))),
  }),
  output: plainOutput(
    {
      conversations: {
        type: "array",
        items: {
          type: "object",
          properties: { mcp_conversation_id: { type: "string" }, edits: { type: "integer" }, pending: { type: "integer" } },
          required: ["mcp_conversation_id", "edits", "pending"],
        },
      },
      edits: { type: "array", items: ownEditSchema },
      total: { type: "integer" },
      truncated: { type: "boolean" },
    },
    ["conversations", "edits", "total", "truncated"],
  ),
  annotations: readOnly("List own edits"),
  branch: () => "none",
  run: async (args, ctx) => ({ ...(await listOwnEdits(historyStore(ctx.ws), ctx.session.conversations(), args)) }),
  text: (out) => renderHistoryList(out),
});
