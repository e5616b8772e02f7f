import { randomId128 } from "../../core/hash";

/** A new conversation id in spec 002's shape: conv_<epoch_ms>_<hex>. */
export function newConversationId(now = Date.now()): string {
  return `conv_${now}_${randomId128().slice(0, 12)}`;
}

/** Conversation ids become file names under .mcp/edit_history: keep them to a safe alphabet. */
export const CONVERSATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
