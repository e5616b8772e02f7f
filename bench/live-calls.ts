// Benchmark: an agent's everyday worktree calls on a large repository, in a warm compiled server through the MCP
// SDK's client: one file read, one file written, one hunk patched, one file written under a lease.
//
//   npm run build && node_modules/.bin/bun bench/live-calls.ts [--dir DIR] [--runs N] [--baseline BIN] [--pause MS]
//
// The repository is the release trees (bench/gen-repo.ts --layout releases: ~90k files), where every worktree call
// pays for its fingerprint (spec 2.2: HEAD, the index and `git status`). Anchors in the same rounds: `git status` as a
// user runs it, the status on worksnap's copy of the index with git's untracked cache (what a call without the
// watch runs), and the same status told by git's fsmonitor hook that nothing changed (what a server whose watch saw
// nothing pays: the floor of one fingerprint). Each round, in order: write_file without lease_id (the file's bytes change), a
// one-hunk apply_patch without lease_id, snapshot_file in worktree mode (its answer's lease kept), write_file with
// that lease (validated against the live fingerprint before the write). --baseline BIN runs the same calls on another
// file through a server of another build, interleaved in the same rounds. --pause MS waits that long, untimed, before
// every call and every anchor: an agent's calls come after the model's turn, and a machine whose host takes back
// idle memory (bench/README.md, "The machine") makes everything touched after a pause slower. Files are restored at
// the end.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureGenerated } from "./gen-repo.ts";
import { resultOf, startServer } from "./mcp-server.ts";
import { plainStatus, statusOnCopy, statusToldNothing } from "./status-floor.ts";
import { argValue, fmtMs, fmtRatio, machineLine, markdownTable, median, runMain, table } from "./lib.ts";

const BIN = join(import.meta.dir, "..", "dist", "worksnap");
const CALLS = ["write_file, no lease", "apply_patch, one hunk, no lease", "snapshot_file (worktree)", "write_file with a lease"] as const;
type Call = (typeof CALLS)[number];

function gitLines(dir: string, args: string[]): string[] {
  const r = Bun.spawnSync(["git", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().split("\n").filter((l) => l !== "");
}

/** A server of `bin` and the four calls on `path`, each timed from the request to its answer. */
async function contender(bin: string, dir: string, path: string, pauseMs: number) {
  const server = await startServer(bin, ["serve", "--root", dir]);
  const original = readFileSync(join(dir, path), "latin1");
  let round = 0;
  const call = async (name: string, args: Record<string, unknown>) => {
    if (pauseMs > 0) await Bun.sleep(pauseMs);
    const { ms, answer } = await server.call(name, args);
    return { ms, result: resultOf(name, answer) };
  };
  return {
    server,
    async round(): Promise<Record<Call, number>> {
      const i = round++;
      const written = `${original}// write ${i}\n`;
      const w = await call("workspace_write_file", { path, content: written });
      const tail = written.split("\n").slice(-4, -1);
      const patch = `--- a/${path}\n+++ b/${path}\n@@ -${written.split("\n").length - 3},3 +${written.split("\n").length - 3},3 @@\n ${tail[0]}\n ${tail[1]}\n-${tail[2]}\n+// patched ${i}\n`;
      const p = await call("workspace_apply_patch", { patch });
      if (!p.result.applied) throw new Error(`the patch was rejected: ${JSON.stringify(p.result.rejects).slice(0, 500)}`);
      const r = await call("snapshot_file", { path });
      const l = await call("workspace_write_file", { path, content: `${original}// leased ${i}\n`, lease_id: r.result.lease_id });
      return { "write_file, no lease": w.ms, "apply_patch, one hunk, no lease": p.ms, "snapshot_file (worktree)": r.ms, "write_file with a lease": l.ms };
    },
  };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const dir = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-releases");
  const runs = Number(argValue(args, "--runs") ?? 9);
  const baseline = argValue(args, "--baseline");
  const pauseMs = Number(argValue(args, "--pause") ?? 0);
  if (!Number.isFinite(pauseMs) || pauseMs < 0) throw new Error("--pause takes milliseconds");
  const paused = <T>(run: () => T): T => {
    if (pauseMs > 0) Bun.sleepSync(pauseMs);
    return run();
  };
  await ensureGenerated(dir, { files: 90_000, seed: "1", layout: "releases", explicit: argValue(args, "--dir") !== undefined, log: (m) => console.error(m) });
  const files = gitLines(dir, ["ls-files", "--", "*.ts"]);
  const paths = [files[0]!, files[1]!];
  const machine = machineLine();
  const ours = await contender(BIN, dir, paths[0]!, pauseMs);
  const base = baseline ? await contender(resolve(baseline), dir, paths[1]!, pauseMs) : null;
  const times = new Map<string, number[]>();
  const add = (k: string, ms: number) => (times.get(k) ?? times.set(k, []).get(k)!).push(ms);
  try {
    for (let i = 0; i <= runs; i++) {
      const a = await ours.round();
      const b = base ? await base.round() : null;
      const status = paused(() => plainStatus(dir));
      const copy = paused(() => statusOnCopy(dir));
      const floor = paused(() => statusToldNothing(dir));
      if (i === 0) continue; // the first round warms both servers and the page cache
      for (const c of CALLS) {
        add(c, a[c]);
        if (b) add(`baseline: ${c}`, b[c]);
      }
      add("git status", status);
      add("status on the copy", copy);
      add("status told nothing (floor)", floor);
    }
  } finally {
    await ours.server.close();
    await base?.server.close();
    gitLines(dir, ["checkout", "-q", "--", ...paths]);
  }
  const status = median(times.get("git status")!);
  const copy = median(times.get("status on the copy")!);
  const floor = median(times.get("status told nothing (floor)")!);
  const rows = [...times].map(([k, v]) => [k, fmtMs(median(v)), fmtMs(Math.min(...v)), fmtMs(Math.max(...v)), fmtRatio(median(v) / status), fmtRatio(median(v) / copy), fmtRatio(median(v) / floor)]);
  const headers = ["call", "median", "min", "max", "vs git status", "vs status on the copy", "vs status told nothing"];
  console.log(table(headers, rows));
  console.log(`\n${runs} rounds${pauseMs > 0 ? `, ${pauseMs} ms before every call and anchor` : ""}; ${machine}; after: ${machineLine().split(", ").pop()}\n`);
  console.log(markdownTable(headers, rows));
  return 0;
}

await runMain(main);
