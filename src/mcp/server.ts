import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { invalidArgument } from "../core/errors";
import { VERSION } from "../version";
import type { Workspace } from "../ops/workspace";
import { type ToolDef, checkBranch, parseArgs } from "./define-tool";
import { TOOLS, servedSchemas } from "./registry";
import { IdleCollector } from "./idle-collect";
import { type TextMode, errorResult, successResult } from "./result";
import { registerResources } from "./resources";
import { McpSession } from "./session";
import { LargeMessageStdioTransport } from "./stdio-transport";

export type ToolNaming = "underscore" | "dotted";

/** `snapshot_create` -> `snapshot.create` (the spec's names; only the first underscore is the namespace). */
export function servedName(name: string, naming: ToolNaming): string {
  return naming === "dotted" ? name.replace("_", ".") : name;
}

export interface ServeOptions {
  naming?: ToolNaming;
  /** content[0].text: each tool's compact rendering (default) or the JSON of structuredContent. */
  text?: TextMode;
}

export function createServer(ws: Workspace, opts: ServeOptions = {}): Server {
  const naming = opts.naming ?? "underscore";
  const textMode = opts.text ?? "compact";
  const server = new Server({ name: "worksnap", version: VERSION }, { capabilities: { tools: {}, resources: {} } });
  const session = new McpSession();
  const byName = new Map<string, ToolDef<unknown>>();
  const idle = new IdleCollector();
  for (const t of TOOLS) byName.set(servedName(t.name, naming), t as ToolDef<unknown>);
  registerResources(server, ws);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => {
      const s = servedSchemas(t.name);
      return {
        name: servedName(t.name, naming),
        description: t.description,
        inputSchema: s.inputSchema,
        outputSchema: s.outputSchema,
        annotations: t.annotations,
      };
    }),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const def = byName.get(req.params.name);
    if (!def) return errorResult(invalidArgument(`unknown tool ${req.params.name}`, { tool: req.params.name }), textMode);
    const token = req.params._meta?.progressToken;
    const progress = (done: number, total: number, message?: string) => {
      if (token === undefined) return;
      void extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, ...(message ? { message } : {}) } })
        .catch(() => undefined);
    };
    idle.begin();
    try {
      const args = parseArgs(def, req.params.arguments);
      const out = (await def.run(args, { ws, signal: extra.signal, progress, session })) as Record<string, unknown>;
      checkBranch(def, def.branch(args), out);
      const text = def.text;
      return successResult(out, text && ((o) => text(o, args)), textMode);
    } catch (err) {
      return errorResult(err, textMode);
    } finally {
      idle.end();
    }
  });
  return server;
}

/** Serves MCP over stdio until stdin ends. Logs go to stderr only. */
export async function serveStdio(ws: Workspace, opts: ServeOptions): Promise<void> {
  const server = createServer(ws, opts);
  // The SDK's stdio transport drops messages over 10 MB; patches and writes can be larger.
  const transport = new LargeMessageStdioTransport(process.stdin, process.stdout, undefined, opts.text);
  const done = new Promise<void>((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.on("close", resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stderr.write(`worksnap ${VERSION} serving ${ws.repo.root}\n`);
  await done;
  await server.close().catch(() => undefined);
}
