import { serveHttp } from "../../mcp/http";
import { listenError } from "../listen-error";
import type { TextMode } from "../../mcp/result";
import { WorkspacePool } from "../../mcp/roots";
import { type RootChoice, type ServeOptions, serveStdio, type ToolNaming } from "../../mcp/server";
import { TOOL_GROUPS, type ToolGroup } from "../../mcp/tool-groups";
import { parseDuration } from "../../ops/history/cleanup";
import { FsHistoryStore } from "../../ops/history/fs-history-store";
import { completeInterruptedWritesNow } from "../../ops/history/interrupted";
import { prepareForWrites, type Workspace } from "../../ops/workspace";
import { UsageError, parseArgv, sizeFlag } from "../args";
import { stderr } from "../output";

export const SERVE_HELP = `worksnap serve [--root DIR] [--http [HOST:]PORT] [--stale-writes warn|refuse]
               [--idle-timeout DUR] [--tools GROUPS] [--tool-names underscore|dotted]
               [--text compact|json] [--index-budget SIZE] [--index-memory SIZE]

Serves the worksnap MCP tools for an MCP host: over stdio (the default; the
server exits when stdin ends), or over Streamable HTTP with --http. Logs go to
stderr.
  --root DIR            the repository; without it, the client's first root
                        when it advertises roots, else the current directory
  --http [HOST:]PORT    serve http://HOST:PORT/mcp (HOST 127.0.0.1 unless
                        given; PORT 0 picks a free one). Every request needs
                        Authorization: Bearer <token>: the token is printed on
                        stderr, or taken from WORKSNAP_HTTP_TOKEN. Each MCP
                        session has its own pins, leases and conversations
  --idle-timeout DUR    close an HTTP session idle this long (default 30m)
  --stale-writes refuse a patch over a file that changed since the session
                        read it is refused (default: applied with a warning)
  --tools GROUPS        the tools to offer, comma-separated groups of snapshot,
                        workspace, history, task (default: all). Each listed
                        tool costs the model its description on every turn
  --tool-names dotted   serve the spec's dotted names (snapshot.create, ...)
  --text json           content[0].text is the JSON of structuredContent, for
                        clients that parse it (default: compact text for a model)
  --index-budget SIZE   disk for the grep index built in the background under
                        .mcp/index/ (default 1G; 0 builds none)
  --index-memory SIZE   memory the background build holds at most (default 96M)
`;

/** `--tools snapshot,workspace`: known group names, at least one, each once. */
function toolGroups(text: string): ToolGroup[] {
  const names = text.split(",").map((n) => n.trim()).filter((n) => n !== "");
  const unknown = names.find((n) => !(TOOL_GROUPS as readonly string[]).includes(n));
  if (unknown !== undefined || names.length === 0) {
    throw new UsageError(`--tools takes groups among ${TOOL_GROUPS.join(", ")}${unknown !== undefined ? `, not ${JSON.stringify(unknown)}` : ""}`);
  }
  return [...new Set(names)] as ToolGroup[];
}

/** How long an HTTP session may sit idle before it is closed. */
const DEFAULT_IDLE = "30m";

export async function cmdServe(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgv(argv, {
    root: { kind: "string" },
    "tool-names": { kind: "string" },
    text: { kind: "string" },
    "index-budget": { kind: "string" },
    "index-memory": { kind: "string" },
    http: { kind: "string" },
    "stale-writes": { kind: "string" },
    "idle-timeout": { kind: "string" },
    tools: { kind: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const naming = (flags["tool-names"] as string | undefined) ?? "underscore";
  if (naming !== "underscore" && naming !== "dotted") throw new UsageError("--tool-names must be underscore or dotted");
  const text = (flags.text as string | undefined) ?? "compact";
  if (text !== "compact" && text !== "json") throw new UsageError("--text must be compact or json");
  const diskBudget = sizeFlag(flags["index-budget"], "index-budget");
  const memoryBudget = sizeFlag(flags["index-memory"], "index-memory");
  if (memoryBudget !== undefined && memoryBudget < 1024 * 1024) throw new UsageError("--index-memory must be at least 1M");
  const staleWrites = (flags["stale-writes"] as string | undefined) ?? "warn";
  if (staleWrites !== "warn" && staleWrites !== "refuse") throw new UsageError("--stale-writes must be warn or refuse");
  const http = flags.http as string | undefined;
  if (http === undefined && flags["idle-timeout"] !== undefined) throw new UsageError("--idle-timeout applies to --http only");
  const tools = flags.tools === undefined ? undefined : toolGroups(flags.tools as string);
  const opts: ServeOptions = { naming: naming as ToolNaming, text: text as TextMode, staleWrites, tools };
  const pool = new WorkspacePool(completeInterrupted, { diskBudget, memoryBudget });
  const roots: RootChoice = { pool, root: (flags.root as string | undefined) ?? null, fallback: process.cwd() };
  // a --root that cannot be opened is an error now, not at the first call
  if (roots.root !== null) pool.get(roots.root);
  try {
    if (http === undefined) await serveStdio(roots, opts);
    else await serveOverHttp(roots, opts, http, (flags["idle-timeout"] as string | undefined) ?? DEFAULT_IDLE);
  } finally {
    pool.closeAll();
  }
  return 0;
}

async function serveOverHttp(roots: RootChoice, opts: ServeOptions, listen: string, idle: string): Promise<void> {
  const { hostname, port } = parseListen(listen);
  const idleTimeoutMs = parseDuration(idle);
  if (idleTimeoutMs === null || idleTimeoutMs <= 0) throw new UsageError("--idle-timeout takes a duration such as 30m, 90s, 2h");
  const fromEnv = process.env.WORKSNAP_HTTP_TOKEN;
  if (fromEnv !== undefined && fromEnv.length < 16) throw new UsageError("WORKSNAP_HTTP_TOKEN must be at least 16 characters");
  const token = fromEnv ?? Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  let server: ReturnType<typeof serveHttp>;
  try {
    server = serveHttp({ ...opts, hostname, port, token, idleTimeoutMs, roots });
  } catch (err) {
    throw listenError(err, hostname, port, "pick another in --http, or --http 0 for any free port") ?? err;
  }
  stderr(fromEnv !== undefined ? "worksnap: token: from WORKSNAP_HTTP_TOKEN\n" : `worksnap: token: ${token}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
}

/**
 * A workspace of the server opening: spare files for its first write are made
 * (or taken from a pool), and a write a crashed process left half recorded is
 * completed, beside the start-up (the first tool call that writes waits for
 * it under the work-tree lock anyway).
 */
function completeInterrupted(ws: Workspace): void {
  prepareForWrites(ws);
  completeInterruptedWritesNow(ws, new FsHistoryStore(ws.repo.stateDir)).then(
    (done) => {
      for (const w of done) stderr(`worksnap: ${w.outcome} an interrupted write of ${w.conversation_id} (${w.logged.length} edits recorded)\n`);
    },
    (err) => stderr(`worksnap: completing an interrupted write failed: ${err instanceof Error ? err.message : String(err)}\n`),
  );
}

/** `PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to 127.0.0.1. */
export function parseListen(text: string): { hostname: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535) throw new UsageError(`--http takes [HOST:]PORT (for example 8765 or 127.0.0.1:8765), not ${JSON.stringify(text)}`);
  const host = m[1] ?? "127.0.0.1";
  return { hostname: host.startsWith("[") ? host.slice(1, -1) : host, port };
}
