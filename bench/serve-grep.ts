// Benchmark: the compiled server's memory over a session of greps. `dist/worksnap serve` on the large generated
// repository, spoken to through the MCP SDK's own client, answers the same worktree grep N times with a pause
// between calls (an agent's pace); after each call the server's resident set (VmRSS) and high-water mark (VmHWM)
// are read from /proc. Anchor, in the same run: `rg` over the same directory for the same pattern, wall time and
// peak RSS, so the per-call ratio is printed as in bench/grep.ts.
//
//   npm run build && node_modules/.bin/bun bench/serve-grep.ts [--dir DIR] [--calls N] [--pause MS] [--pattern RE]
//
// The grep asks for at most 2,000 matches (the tool's limit), as an agent would.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { argValue, fmtMs, fmtRatio, loadLine, machineLine, median, table, timeCommand, runMain } from "./lib.ts";

const args = process.argv.slice(2);
const dir = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-large");
const calls = Number(argValue(args, "--calls") ?? 10);
const pause = Number(argValue(args, "--pause") ?? 300);
const pattern = argValue(args, "--pattern") ?? "fetch[A-Z]\\w*\\(user";
const binary = join(import.meta.dir, "..", "dist", "worksnap");

function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

async function main(): Promise<number> {
  const rg = Bun.which("rg");
  if (!rg) throw new Error("ripgrep (rg) is required: apt-get install ripgrep");
  const before = machineLine();
  const transport = new StdioClientTransport({ command: binary, args: ["serve", "--root", dir], stderr: "pipe" });
  const client = new Client({ name: "worksnap-bench", version: "0" });
  await client.connect(transport);
  const pid = (transport as unknown as { _process: { pid: number } })._process.pid;
  const rows: string[][] = [];
  const ours: number[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const r = (await client.callTool({ name: "snapshot_grep", arguments: { mode: "worktree", pattern, max_matches: 2000 } })) as {
        isError?: boolean;
        structuredContent?: { matches?: unknown[] };
      };
      const ms = performance.now() - t0;
      if (r.isError) throw new Error(`snapshot_grep failed: ${JSON.stringify(r).slice(0, 500)}`);
      const s = status(pid);
      ours.push(ms);
      rows.push([String(i + 1), fmtMs(ms), String(r.structuredContent?.matches?.length ?? 0), `${s.rss.toFixed(0)} MB`, `${s.hwm.toFixed(0)} MB`]);
      await Bun.sleep(pause);
      rows[rows.length - 1]!.push(`${status(pid).rss.toFixed(0)} MB`);
    }
  } finally {
    await client.close();
  }
  const rgRuns = await timeCommand([rg, "-n", "--no-heading", "-H", "--hidden", "-g", "!.git/", "-g", "!.mcp/", pattern], { cwd: dir, runs: 5, warmup: 1, okCodes: [0, 1] });
  const rgMs = median(rgRuns.ms);
  console.log(`serve on ${dir}: ${calls} worktree greps for ${JSON.stringify(pattern)}, ${pause} ms apart`);
  console.log(table(["call", "time", "matches", "RSS after", "high-water mark", `RSS ${pause} ms later`], rows));
  const warm = median(ours.slice(1));
  console.log(`median of calls 2-${calls}: ${fmtMs(warm)}; rg ${fmtMs(rgMs)} (peak RSS ${(median(rgRuns.maxRss) / 1048576).toFixed(0)} MB): ratio ${fmtRatio(warm / rgMs)}`);
  console.log(`${before}; after: ${loadLine()}`);
  return 0;
}

if (import.meta.main) await runMain(main);
