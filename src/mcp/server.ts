import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { invalidArgument } from "../core/errors";
import { VERSION } from "../version";
import type { Workspace } from "../ops/workspace";
import { type ToolDef, checkBranch, parseArgs } from "./define-tool";
import { TOOLS, servedSchemas } from "./registry";
import { IdleCollector } from "./idle-collect";
import { type ResultShape, errorResult, successResult } from "./result";
import { registerResources } from "./resources";
import { McpSession } from "./session";
import { LargeMessageStdioTransport } from "./stdio-transport";

export type ToolNaming = "underscore" | "dotted";

/** `snapshot_create` -> `snapshot.create` (the spec's names; only the first underscore is the namespace), unless the tool names its own. */
export function servedName(def: Pick<ToolDef<unknown>, "name" | "dottedName">, naming: ToolNaming): string {
  if (naming !== "dotted") return def.name;
  return def.dottedName ?? def.name.replace("_", ".");
}

export function createServer(ws: Workspace, naming: ToolNaming = "underscore"): Server {
  const server = new Server({ name: "worksnap", version: VERSION }, { capabilities: { tools: {}, resources: {} } });
  const session = new McpSession();
  const byName = new Map<string, ToolDef<unknown>>();
  const idle = new IdleCollector();
  for (const t of TOOLS) byName.set(servedName(t, naming), t as ToolDef<unknown>);
  registerResources(server, ws);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => {
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

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const def = byName.get(req.params.name);
    if (!def) return errorResult(invalidArgument(`unknown tool ${req.params.name}`, { tool: req.params.name }));
    const token = req.params._meta?.progressToken;
    const progress = (done: number, total: number, message?: string) => {
      if (token === undefined) return;
      void extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, ...(message ? { message } : {}) } })
        .catch(() => undefined);
    };
    idle.begin();
    const raw = req.params.arguments;
    const shape: ResultShape = {
      structured: def.output !== null,
      errorText: def.errorText ? (e) => (def.errorText as NonNullable<typeof def.errorText>)(e, raw) : undefined,
    };
    try {
      const args = parseArgs(def, raw);
      const out = await def.run(args, { ws, signal: extra.signal, progress, session });
      checkBranch(def, def.branch(args), out);
      return successResult(out, { ...shape, text: def.text ? (o) => (def.text as NonNullable<typeof def.text>)(o, args) : undefined });
    } catch (err) {
      return errorResult(err, shape);
    } finally {
      idle.end();
    }
  });
  return server;
}

/** Serves MCP over stdio until stdin ends. Logs go to stderr only. */
export async function serveStdio(ws: Workspace, naming: ToolNaming): Promise<void> {
  const server = createServer(ws, naming);
  // The SDK's stdio transport drops messages over 10 MB; patches and writes can be larger.
  const transport = new LargeMessageStdioTransport();
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
