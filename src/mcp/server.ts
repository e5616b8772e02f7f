import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { isDescriptorShortage, WorksnapError } from "../core/errors";
import { Semaphore } from "../core/semaphore";
import { VERSION } from "../version";
import type { Workspace } from "../ops/workspace";
import { type ToolDef, checkBranch, parseArgs } from "./define-tool";
import { TOOLS, servedSchemas } from "./registry";
import { type IdleCollector, idleCollector } from "./idle-collect";
import { type ToolGroup, groupOf } from "./tool-groups";
import { JSONRPC, JsonRpcError } from "./jsonrpc-screen";
import { GuardedServer } from "./request-guard";
import { registerResources } from "./resources";
import { type TextMode, errorResult, successResult } from "./result";
import type { PublicError } from "../core/public-error";
import { McpSession } from "./session";
import { LargeMessageStdioTransport } from "./stdio-transport";
import { type RequestContext, SessionRoot, type WorkspacePool, askWith, unservableFallback } from "./roots";

export type ToolNaming = "underscore" | "dotted";

/**
 * Tool calls that run at once per server; the rest wait in arrival order.
 * Unbounded, 5,000 calls sent without waiting started about 6,000 git
 * children and ran out of file descriptors ("too many open files") on most
 * of them. Eight keeps both cores busy with a slow call or two among them.
 */
export const MAX_CALLS_IN_FLIGHT = 8;

/** How long a read-only call that ran out of file descriptors is retried before it is answered BUSY. */
const DESCRIPTOR_WAIT_MS = 30_000;

/** `snapshot_create` -> `snapshot.create` (the spec's names; only the first underscore is the namespace), unless the tool names its own. */
export function servedName(def: Pick<ToolDef<unknown>, "name" | "dottedName">, naming: ToolNaming): string {
  if (naming !== "dotted") return def.name;
  return def.dottedName ?? def.name.replace("_", ".");
}

/** One MCP server for one session: the SDK server, and what it does around every request. */
export interface WorksnapServer {
  sdk: GuardedServer;
  /** What the server remembers for its session (pins, leases, conversations). */
  session: McpSession;
  /** Connects a transport (stdio, HTTP) through the request guard. */
  connect(transport: Transport): Promise<void>;
  /** Resolves once every tool call received so far has its answer (none runs or waits). */
  settled(): Promise<void>;
  /** Tool calls received and not answered yet. */
  pending(): number;
}

/** The server's log: stderr, which MCP hosts keep for their user; never stdout (the protocol). */
export type Log = (line: string) => void;
const stderrLog: Log = (line) => void process.stderr.write(`worksnap: ${line}\n`);

export interface ServeOptions {
  naming?: ToolNaming;
  /** content[0].text: each tool's compact rendering (default) or the JSON of structuredContent. */
  text?: TextMode;
  log?: Log;
  /** A patch over a file that changed since the session read it: applied with a warning (default) or refused. */
  staleWrites?: "warn" | "refuse";
  /** The limit of work in flight, shared by every session of a process (HTTP); a server of its own otherwise. */
  calls?: Semaphore;
  /** The idle collection, shared by every session of a process. */
  idle?: IdleCollector;
  /** The groups of tools listed and callable (default: all); a tool of another group is unknown. */
  tools?: readonly ToolGroup[];
}

/**
 * Where a server's sessions find their workspace (roots.ts): `root` (from
 * --root) wins; without it, the client's first root, else `fallback` (the
 * directory the server started in).
 */
export interface RootChoice {
  pool: WorkspacePool;
  root: string | null;
  fallback: string;
}

export function createServer(roots: RootChoice, opts: ServeOptions = {}): WorksnapServer {
  const naming = opts.naming ?? "underscore";
  const textMode = opts.text ?? "compact";
  const log = opts.log ?? stderrLog;
  const sdk = new GuardedServer({ name: "worksnap", version: VERSION }, { capabilities: { tools: {}, resources: {} } });
  sdk.onerror = (err) => log(err.message);
  const session = new McpSession({ staleWrites: opts.staleWrites });
  const sessionRoot = new SessionRoot(sdk, roots.pool, roots.root, roots.fallback, log);
  /** The session's view of its workspace for a request (it may ask the client for its roots first). */
  const workspaceFor = async (extra: RequestContext): Promise<Workspace> => session.view(await sessionRoot.workspace(askWith(extra)));
  const byName = new Map<string, ToolDef<unknown>>();
  // once idle: the heap collected, and the grep indexes brought up to date in the background
  const idle = opts.idle ?? idleCollector(roots.pool);
  const calls = opts.calls ?? new Semaphore(MAX_CALLS_IN_FLIGHT);
  let unanswered = 0;
  let settledWaiters: (() => void)[] = [];
  const served = opts.tools ? TOOLS.filter((t) => opts.tools!.includes(groupOf(t.name))) : TOOLS;
  for (const t of served) byName.set(servedName(t, naming), t as ToolDef<unknown>);

  /** Work that reads the repository on a client's behalf: in a slot of `calls`, run again while descriptors are short. */
  const bounded = <T>(name: string, signal: AbortSignal, run: () => Promise<T>): Promise<T> =>
    calls.run(() => retryOnDescriptorShortage(name, true, signal, run), signal);
  registerResources(sdk, workspaceFor, bounded);

  sdk.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: served.map((t) => {
      const s = servedSchemas(t.name);
      return {
        name: servedName(t, naming),
        description: t.description,
        inputSchema: s.inputSchema,
        ...(s.outputSchema ? { outputSchema: s.outputSchema } : {}),
        annotations: t.annotations,
      };
    }),
  }));

  sdk.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const def = byName.get(req.params.name);
    // MCP: an unknown tool is a protocol error (-32602), not a tool result
    if (!def) throw new JsonRpcError(JSONRPC.invalidParams, `Unknown tool: ${req.params.name}`, { tool: req.params.name });
    const token = req.params._meta?.progressToken;
    const progress = (done: number, total: number, message?: string) => {
      if (token === undefined) return;
      void extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, ...(message ? { message } : {}) } })
        .catch(() => undefined);
    };
    unanswered++;
    // A text-only tool (the task tools: the wire text is the answer) has no structuredContent and its own error text.
    const raw = req.params.arguments;
    const own = def.output === null ? { errorText: def.errorText && ((e: PublicError) => (def.errorText as NonNullable<typeof def.errorText>)(e, raw)) } : undefined;
    let ws: Workspace | null = null;
    try {
      ws = await workspaceFor(extra);
      const inWs = ws;
      const { args, answer } = await calls.run(async () => {
        idle.begin();
        try {
          const args = parseArgs(def, raw);
          const answer = await retryOnDescriptorShortage(def.name, def.annotations.readOnlyHint, extra.signal, () => def.run(args, { ws: inWs, signal: extra.signal, progress, session }));
          checkBranch(def, def.branch(args), answer);
          return { args, answer };
        } finally {
          idle.end();
        }
      }, extra.signal);
      const text = def.text;
      return successResult(answer, text && ((o) => text(o, args)), textMode, own);
    } catch (err) {
      // cancelled (while queued or running): the SDK sends nothing, as MCP asks
      if (extra.signal.aborted) throw err;
      logFailure(def.name, err);
      return errorResult(err, ws?.repo.root ?? null, textMode, own);
    } finally {
      unanswered--;
      if (unanswered === 0) for (const w of settledWaiters.splice(0)) w();
    }
  });

  /**
   * Out of descriptors is a passing state: a read-only call runs again once
   * another call or git child has finished (freeing what it held), until
   * DESCRIPTOR_WAIT_MS pass; then, and for a write at once (it was undone),
   * the answer is BUSY (asWorksnapError), never INTERNAL.
   */
  async function retryOnDescriptorShortage<T>(name: string, readOnly: boolean, signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + DESCRIPTOR_WAIT_MS;
    for (let backoff = 10; ; backoff = Math.min(backoff * 2, 500)) {
      try {
        return await run();
      } catch (err) {
        if (!isDescriptorShortage(err) || !readOnly || signal.aborted || Date.now() >= deadline) throw err;
        log(`${name}: out of file descriptors; running it again once some are free`);
        await Promise.race([calls.nextRelease(), Bun.sleep(backoff)]);
      }
    }
  }

  /** The operator's view of a failure: everything (stack included) for an INTERNAL error, one line for BUSY. */
  function logFailure(tool: string, err: unknown): void {
    if (isDescriptorShortage(err)) log(`${tool}: answered BUSY (out of file descriptors)`);
    else if (!(err instanceof WorksnapError) || err.code === "INTERNAL") log(`${tool} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }

  return {
    sdk,
    session,
    connect: (transport) => sdk.connect(transport),
    settled: () => (unanswered === 0 ? Promise.resolve() : new Promise<void>((resolve) => settledWaiters.push(resolve))),
    pending: () => unanswered,
  };
}

/** What a server without --root serves, as its start-up line says. */
function fallbackText(fallback: string): string {
  const why = unservableFallback(fallback);
  return why === null ? `the client's root (or ${fallback})` : `the client's root only (it started in ${why}, which it does not serve: pass --root)`;
}

/**
 * Serves MCP over stdio until stdin ends. Logs go to stderr only. When the
 * client closes stdin, the calls it already sent are still answered, and the
 * answers written, before the server exits (`worksnap serve < requests`
 * answers every line); when stdout fails, nobody can be answered: in-flight
 * calls are abandoned.
 */
export async function serveStdio(roots: RootChoice, opts: ServeOptions = {}): Promise<void> {
  const server = createServer(roots, opts);
  // The SDK's stdio transport drops messages over 10 MB; patches and writes can be larger.
  const transport = new LargeMessageStdioTransport(process.stdin, process.stdout, undefined, opts.text);
  const closed = new Promise<void>((resolve) => {
    server.sdk.onclose = resolve;
  });
  await server.connect(transport);
  stderrLog(`${VERSION} serving ${roots.root !== null ? roots.pool.get(roots.root).repo.root : fallbackText(roots.fallback)}`);
  await Promise.race([transport.inputEnded, closed]);
  await Promise.race([answered(server), closed]);
  await transport.drained();
  await server.sdk.close().catch(() => undefined);
}

/** Every call answered, and the SDK's sends of those answers started (they follow the handler on later ticks). */
async function answered(server: WorksnapServer): Promise<void> {
  await server.settled();
  await new Promise((resolve) => setTimeout(resolve, 0));
}
