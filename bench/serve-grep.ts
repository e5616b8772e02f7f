// Benchmark: the compiled server's memory over a session of greps. `dist/worksnap serve` on the large generated
// repository, spoken to through the MCP SDK's own client, answers the same worktree grep N times with a pause
// between calls (an agent's pace); after each call the server's resident set (VmRSS) and high-water mark (VmHWM)
// are read from /proc. Anchor, in the same run: `rg` over the same directory for the same pattern, wall time and
// peak RSS, so the per-call ratio is printed as in bench/grep.ts.
//
//   npm run build && node_modules/.bin/bun bench/serve-grep.ts [--dir DIR] [--calls N] [--pause MS] [--pattern RE]
//
// The grep asks for at most 2,000 matches (the tool's limit), as an agent would.

import { join, resolve } from "node:path";
import { argValue, fmtMs, fmtRatio, loadLine, machineLine, median, table, timeCommand, runMain } from "./lib.ts";
import { processMemory, resultOf, startServer } from "./mcp-server.ts";

const args = process.argv.slice(2);
const dir = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-large");
const calls = Number(argValue(args, "--calls") ?? 10);
const pause = Number(argValue(args, "--pause") ?? 300);
const pattern = argValue(args, "--pattern") ?? "fetch[A-Z]\\w*\\(user";
const binary = join(import.meta.dir, "..", "dist", "worksnap");

async function main(): Promise<number> {
  const rg = Bun.which("rg");
  if (!rg) throw new Error("ripgrep (rg) is required: apt-get install ripgrep");
  const before = machineLine();
  const server = await startServer(binary, ["serve", "--root", dir]);
  const pid = server.pid;
  const rows: string[][] = [];
  const ours: number[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      const { ms, answer } = await server.call("snapshot_grep", { mode: "worktree", pattern, max_matches: 2000 });
      const r = { structuredContent: resultOf("snapshot_grep", answer) as { matches?: unknown[] } };
      const s = processMemory(pid);
      ours.push(ms);
      rows.push([String(i + 1), fmtMs(ms), String(r.structuredContent?.matches?.length ?? 0), `${s.rss.toFixed(0)} MB`, `${s.hwm.toFixed(0)} MB`]);
      await Bun.sleep(pause);
      rows[rows.length - 1]!.push(`${processMemory(pid).rss.toFixed(0)} MB`);
    }
  } finally {
    await server.close();
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
