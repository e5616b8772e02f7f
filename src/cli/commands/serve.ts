import type { TextMode } from "../../mcp/result";
import { serveStdio, type ToolNaming } from "../../mcp/server";
import { FsHistoryStore } from "../../ops/history/fs-history-store";
import { completeInterruptedWritesNow } from "../../ops/history/interrupted";
import { closeWorkspace, openWorkspace, prepareForWrites } from "../../ops/workspace";
import { UsageError, parseArgv, sizeFlag } from "../args";
import { stderr } from "../output";

export const SERVE_HELP = `worksnap serve [--root DIR] [--tool-names underscore|dotted] [--text compact|json]
               [--index-budget SIZE] [--index-memory SIZE]

Serves the worksnap MCP tools over stdio for an MCP host. The root defaults to
the current directory. Logs go to stderr; the server exits when stdin ends.
  --tool-names dotted   serve the spec's dotted names (snapshot.create, ...)
  --text json           content[0].text is the JSON of structuredContent, for
                        clients that parse it (default: compact text for a model)
  --index-budget SIZE   disk for the grep index built in the background under
                        .mcp/index/ (default 1G; 0 builds none)
  --index-memory SIZE   memory the background build holds at most (default 96M)
`;

export async function cmdServe(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgv(argv, {
    root: { kind: "string" },
    "tool-names": { kind: "string" },
    text: { kind: "string" },
    "index-budget": { kind: "string" },
    "index-memory": { kind: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const naming = (flags["tool-names"] as string | undefined) ?? "underscore";
  if (naming !== "underscore" && naming !== "dotted") throw new UsageError("--tool-names must be underscore or dotted");
  const text = (flags.text as string | undefined) ?? "compact";
  if (text !== "compact" && text !== "json") throw new UsageError("--text must be compact or json");
  const diskBudget = sizeFlag(flags["index-budget"], "index-budget");
  const memoryBudget = sizeFlag(flags["index-memory"], "index-memory");
  if (memoryBudget !== undefined && memoryBudget < 1024 * 1024) throw new UsageError("--index-memory must be at least 1M");
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd(), { longLived: true, index: { diskBudget, memoryBudget } });
  prepareForWrites(ws);
  // A write a crashed process left half recorded is completed now, beside the start-up (the first tool call that
  // writes waits for it under the work-tree lock anyway).
  completeInterruptedWritesNow(ws, new FsHistoryStore(ws.repo.stateDir)).then(
    (done) => {
      for (const w of done) stderr(`worksnap: ${w.outcome} an interrupted write of ${w.conversation_id} (${w.logged.length} edits recorded)\n`);
    },
    (err) => stderr(`worksnap: completing an interrupted write failed: ${err instanceof Error ? err.message : String(err)}\n`),
  );
  try {
    await serveStdio(ws, { naming: naming as ToolNaming, text: text as TextMode });
  } finally {
    closeWorkspace(ws);
  }
  return 0;
}
