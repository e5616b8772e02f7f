import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { isLoopbackAddress, isLoopbackHost, isLoopbackOrigin, sameToken } from "../core/local-guard";
import { Semaphore } from "../core/semaphore";
import { type JoinedMessage, joinMessage, parseWithLongStrings } from "../repo/json-long-strings";
import { VERSION } from "../version";
import { idleCollector } from "./idle-collect";
import { JSONRPC, type WireMessage, errorReply, parseErrorReply, screenMessage } from "./jsonrpc-screen";
import { type Log, MAX_CALLS_IN_FLIGHT, type RootChoice, type ServeOptions, type WorksnapServer, createServer } from "./server";
import { MAX_MESSAGE_BYTES } from "./stdio-transport";

/**
 * MCP over Streamable HTTP (the SDK's web-standard transport, served by
 * Bun.serve), for hosts that connect to a running server and for several
 * agents on one repository. Each MCP session (an `Mcp-Session-Id`) gets a
 * server and an McpSession of its own: its own pins, leases and
 * conversations; the workspaces, the limit of calls in flight and the idle
 * collection are shared by the process.
 *
 * Who may talk to it (DESIGN decision 17; core/local-guard.ts):
 * - every request carries `Authorization: Bearer <token>` (a random 128-bit
 *   token printed on stderr at start, or WORKSNAP_HTTP_TOKEN), compared in
 *   constant time: 401 without it or with another;
 * - an `Origin`, when sent (a browser), must be the loopback at this port:
 *   403 otherwise, so no web page can drive the tools;
 * - bound to a loopback address (the default, 127.0.0.1), the `Host` must
 *   name the loopback at this port: 403 otherwise (DNS rebinding).
 *
 * What arrives passes the same JSON-RPC screen as stdio (jsonrpc-screen.ts)
 * before the SDK parses it, and the request guard of every server
 * (request-guard.ts). A session idle for `idleTimeoutMs` (no request, no call
 * running) is closed; DELETE closes one at once. A request for a closed or
 * unknown session gets 404, after which an MCP client starts a new session.
 */
export interface HttpOptions extends ServeOptions {
  hostname: string;
  /** 0: a free port. */
  port: number;
  token: string;
  idleTimeoutMs: number;
  roots: RootChoice;
}

export interface HttpServer {
  /** The endpoint, `http://host:port/mcp`. */
  url: string;
  port: number;
  /** Sessions open now. */
  sessions(): number;
  /** Closes every session and stops listening. */
  close(): Promise<void>;
}

export const MCP_PATH = "/mcp";

interface Session {
  id: string;
  server: WorksnapServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastActive: number;
  /** HTTP requests of this session being handled now. */
  inFlight: number;
}

export function serveHttp(opts: HttpOptions): HttpServer {
  const log: Log = opts.log ?? ((line) => void process.stderr.write(`worksnap: ${line}\n`));
  const shared: ServeOptions = { ...opts, log, calls: opts.calls ?? new Semaphore(MAX_CALLS_IN_FLIGHT), idle: opts.idle ?? idleCollector(opts.roots.pool) };
  const sessions = new Map<string, Session>();
  const loopback = isLoopbackAddress(opts.hostname);

  const bun = Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // SSE streams stay open while a call runs; the transport writes a keep-alive comment every 15 s
    idleTimeout: 60,
    // Never Bun's development error page (the stack, source lines and directory of the process) in an answer.
    development: false,
    // Bun shares a port between servers when development is off; a port in use must stay a refusal.
    reusePort: false,
    error: (err) => {
      log(`a request failed: ${(err as Error)?.stack ?? String(err)}`);
      return plain(500, "internal error: the server could not answer this request (its log has the details)");
    },
    fetch: (req) => handle(req),
  });
  const port = bun.port as number;
  const host = opts.hostname.includes(":") && !opts.hostname.startsWith("[") ? `[${opts.hostname}]` : opts.hostname;

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname !== MCP_PATH) return plain(404, `not found: the MCP endpoint is ${MCP_PATH}`);
    if (loopback && !isLoopbackHost(req.headers.get("host"), port)) return plain(403, "this server answers only at its loopback address and port");
    const origin = req.headers.get("origin");
    if (origin !== null && !isLoopbackOrigin(origin, port)) return plain(403, "cross-origin requests are refused");
    const auth = req.headers.get("authorization") ?? "";
    const given = /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
    if (given === undefined || !sameToken(given, opts.token)) {
      return plain(401, "this server needs the token it printed at start: send Authorization: Bearer <token>", { "www-authenticate": 'Bearer realm="worksnap"' });
    }

    let parsedBody: JSONRPCMessage | undefined;
    if (req.method === "POST") {
      const body = await readScreened(req);
      if (body instanceof Response) return body;
      parsedBody = body;
    }
    const id = req.headers.get("mcp-session-id");
    const session = id !== null ? sessions.get(id) : undefined;
    if (id !== null && !session) return rpcError(404, null, -32001, "Session not found: it ended or expired; start a new session");
    if (session) return track(session, () => session.transport.handleRequest(req, parsedBody === undefined ? undefined : { parsedBody }));
    if (parsedBody === undefined || !isInitialize(parsedBody)) {
      return rpcError(400, idOf(parsedBody), -32000, "Bad Request: Mcp-Session-Id header is required (send initialize first to start a session)");
    }
    return open(req, parsedBody);
  }

  /** A new session: its own server over its own transport, registered once the transport names it. */
  async function open(req: Request, initialize: JSONRPCMessage): Promise<Response> {
    const server = createServer(opts.roots, shared);
    let entry: Session | null = null;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => {
        if (!entry) return;
        entry.id = sid;
        sessions.set(sid, entry);
        log(`session ${sid.slice(0, 8)} opened (${sessions.size} open)`);
      },
      onsessionclosed: (sid) => void drop(sid, "closed by the client"),
      maxRequestBodySize: MAX_MESSAGE_BYTES,
    });
    const opened: Session = { id: "", server, transport, lastActive: Date.now(), inFlight: 0 };
    entry = opened;
    server.sdk.onclose = () => void drop(opened.id, "closed");
    await server.connect(transport);
    return track(opened, () => transport.handleRequest(req, { parsedBody: initialize }));
  }

  async function track(s: Session, run: () => Promise<Response>): Promise<Response> {
    s.inFlight++;
    s.lastActive = Date.now();
    try {
      return await run();
    } finally {
      s.inFlight--;
      s.lastActive = Date.now();
    }
  }

  async function drop(id: string, why: string): Promise<void> {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    log(`session ${id.slice(0, 8)} ${why} (${sessions.size} open)`);
    await s.transport.close().catch(() => undefined);
    await s.server.sdk.close().catch(() => undefined);
  }

  /** Sessions with nothing running for idleTimeoutMs are closed (a running call counts as activity until it ends). */
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const s of [...sessions.values()]) {
        if (s.inFlight > 0 || s.server.pending() > 0) {
          s.lastActive = now;
          continue;
        }
        if (now - s.lastActive >= opts.idleTimeoutMs) void drop(s.id, `expired after ${Math.round(opts.idleTimeoutMs / 1000)} s idle`);
      }
    },
    Math.max(50, Math.min(opts.idleTimeoutMs / 4, 30_000)),
  );
  sweep.unref?.();

  log(`${VERSION} serving MCP at http://${host}:${port}${MCP_PATH}`);
  if (!loopback) log(`listening beyond this machine (${opts.hostname}): anyone who can reach port ${port} with the token can use the tools`);

  return {
    url: `http://${host}:${port}${MCP_PATH}`,
    port,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.keys()].map((id) => drop(id, "closed: the server stops")));
      bun.stop(true);
    },
  };
}

/**
 * The body of a POST, read up to MAX_MESSAGE_BYTES and screened the way stdio
 * screens a line: a valid message to deliver, or the answer JSON-RPC asks for
 * (not JSON: -32700; an invalid request: -32600/-32602 with its id; a
 * malformed notification or a response: 202 and nothing).
 */
async function readScreened(req: Request): Promise<JSONRPCMessage | Response> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > MAX_MESSAGE_BYTES) return tooLarge(declared);
  let value: unknown;
  try {
    const joined = await readLimited(req, MAX_MESSAGE_BYTES);
    if (joined === null) return tooLarge(null);
    // a long patch's or file's string decoded natively (json-long-strings.ts), or the whole text parsed
    const quick = parseWithLongStrings(joined.bytes, joined.block);
    value = quick ? quick.value : JSON.parse(new TextDecoder().decode(joined.bytes));
  } catch (err) {
    return json(400, parseErrorReply((err as Error).message));
  }
  const screened = screenMessage(value);
  if (screened.kind === "deliver") return screened.message;
  if (screened.kind === "reply") return json(400, screened.reply);
  return new Response(null, { status: 202 });
}

/** The body's bytes, or null once it passes `limit` (nothing more is read). */
async function readLimited(req: Request, limit: number): Promise<JoinedMessage | null> {
  if (!req.body) return joinMessage([]);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return joinMessage(chunks);
}

function tooLarge(bytes: number | null): Response {
  const what = bytes === null ? "the request is larger" : `the request is ${bytes} bytes`;
  return json(413, errorReply(null, JSONRPC.invalidRequest, `${what} than this server accepts (${MAX_MESSAGE_BYTES} bytes per message)`, { code: "TOO_LARGE", limit: MAX_MESSAGE_BYTES }));
}

function isInitialize(m: JSONRPCMessage): boolean {
  return (m as { method?: unknown }).method === "initialize" && (m as { id?: unknown }).id !== undefined;
}

function idOf(m: JSONRPCMessage | undefined): string | number | null {
  const id = (m as { id?: unknown } | undefined)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function rpcError(status: number, id: string | number | null, code: number, message: string): Response {
  return json(status, errorReply(id, code, message));
}

function json(status: number, body: WireMessage): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

function plain(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers } });
}
