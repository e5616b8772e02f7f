import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * JSON-RPC 2.0 conformance for what arrives, before the SDK sees it. The SDK's
 * Protocol drops anything that is not a valid message without a word (an
 * "Unknown message type" on its error hook), so a client that sent a request
 * with an id waited forever. Here every message is classified:
 * - a valid message goes on;
 * - a request that cannot be one (bad `jsonrpc`, no `method`, an id of the
 *   wrong type, a member JSON-RPC does not have) gets -32600, with its id when
 *   the id is readable, else id null (JSON-RPC 2.0 section 5);
 * - params that are not an object get -32602;
 * - a notification (a string `method`, no `id`) gets no answer whatever is
 *   wrong with it: JSON-RPC forbids answering one; it is logged and dropped;
 * - a batch (an array) is answered member by member with -32600 in one array,
 *   notifications left out: MCP 2025-06-18 removed JSON-RPC batching;
 * - a line that is not JSON gets -32700 with id null (parseErrorReply).
 */

export const JSONRPC = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603 } as const;

/** An error the server answers itself; `id` is null when the request's id could not be read. */
export interface ErrorReply {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

/** What goes out on the wire: an SDK message, an error reply with id null, or a batch of replies. */
export type WireMessage = JSONRPCMessage | ErrorReply | ErrorReply[];

export type Screened =
  | { kind: "deliver"; message: JSONRPCMessage }
  | { kind: "reply"; reply: ErrorReply | ErrorReply[]; why: string }
  | { kind: "drop"; why: string };

type RequestId = string | number;

const MEMBERS = new Set(["jsonrpc", "id", "method", "params"]);
const BATCH_REFUSED = "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send each message on its own line";

/**
 * Thrown by a request handler for a protocol error: the SDK answers with
 * `code`, `message` and `data` as they are (its McpError would prefix the
 * message with "MCP error <code>:").
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}

export function errorReply(id: RequestId | null, code: number, message: string, data?: unknown): ErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** The answer to a line that is not JSON. */
export function parseErrorReply(reason: string): ErrorReply {
  return errorReply(null, JSONRPC.parseError, "Parse error: the message is not valid JSON", { reason });
}

export function screenMessage(value: unknown): Screened {
  if (Array.isArray(value)) return screenBatch(value);
  if (!isObject(value)) return { kind: "reply", reply: errorReply(null, JSONRPC.invalidRequest, "Invalid Request: a JSON-RPC message is an object"), why: "not an object" };
  if ("result" in value || "error" in value) return screenResponse(value);

  const hasId = "id" in value;
  const id = validId(value.id) ? (value.id as RequestId) : null;
  const envelope: string[] = [];
  if (value.jsonrpc !== "2.0") envelope.push('"jsonrpc" must be "2.0"');
  if (typeof value.method !== "string") envelope.push('"method" must be a string');
  if (hasId && id === null) envelope.push('"id" must be a string or an integer');
  const unknown = Object.keys(value).filter((k) => !MEMBERS.has(k));
  if (unknown.length > 0) envelope.push(`unexpected member${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}`);
  const paramsWrong = "params" in value && !isObject(value.params);

  if (!hasId && typeof value.method === "string") {
    // A notification: never answered, even when malformed.
    if (envelope.length > 0 || paramsWrong) return { kind: "drop", why: `a malformed notification ${value.method}: ${[...envelope, ...(paramsWrong ? ['"params" must be an object'] : [])].join("; ")}` };
    return deliverOrDrop(value, `notification ${value.method}`);
  }
  if (envelope.length > 0) {
    return { kind: "reply", reply: errorReply(id, JSONRPC.invalidRequest, `Invalid Request: ${envelope.join("; ")}`, { problems: envelope }), why: envelope.join("; ") };
  }
  if (paramsWrong) {
    const problem = `"params" of ${String(value.method)} must be an object`;
    return { kind: "reply", reply: errorReply(id, JSONRPC.invalidParams, `Invalid params: ${problem}`, { problems: [problem] }), why: problem };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { kind: "deliver", message: parsed.data as JSONRPCMessage };
  const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(message)"}: ${i.message}`);
  return { kind: "reply", reply: errorReply(id, JSONRPC.invalidRequest, `Invalid Request: ${problems.join("; ")}`, { problems }), why: problems.join("; ") };
}

/** A response from the client (to a request of ours): delivered when valid; never answered. */
function screenResponse(value: Record<string, unknown>): Screened {
  if ("method" in value) {
    const id = validId(value.id) ? (value.id as RequestId) : null;
    return { kind: "reply", reply: errorReply(id, JSONRPC.invalidRequest, "Invalid Request: a message is a request or a response, not both"), why: "request and response at once" };
  }
  return deliverOrDrop(value, "response");
}

function deliverOrDrop(value: Record<string, unknown>, what: string): Screened {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { kind: "deliver", message: parsed.data as JSONRPCMessage };
  return { kind: "drop", why: `a malformed ${what}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(message)"}: ${i.message}`).join("; ")}` };
}

/** Every member that expects an answer gets -32600 in one array; a batch of notifications only gets nothing. */
function screenBatch(members: unknown[]): Screened {
  if (members.length === 0) return { kind: "reply", reply: errorReply(null, JSONRPC.invalidRequest, "Invalid Request: an empty batch"), why: "an empty batch" };
  const replies: ErrorReply[] = [];
  for (const m of members) {
    if (isObject(m) && !("id" in m) && typeof m.method === "string") continue; // a notification
    if (isObject(m) && ("result" in m || "error" in m) && !("method" in m)) continue; // a response: never answered
    replies.push(errorReply(isObject(m) && validId(m.id) ? (m.id as RequestId) : null, JSONRPC.invalidRequest, BATCH_REFUSED));
  }
  if (replies.length === 0) return { kind: "drop", why: `a batch of ${members.length} notifications (batches are not supported)` };
  return { kind: "reply", reply: replies, why: `a batch of ${members.length} messages` };
}

/** MCP ids are strings or integers (never null); JSON-RPC answers any other id with id null. */
function validId(id: unknown): boolean {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
