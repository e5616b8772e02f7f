// Benchmark: grep from the trigram index in a warm compiled server, on the release-trees repository
// (bench/gen-repo.ts --layout releases: ~90k files, ~900 MB, ~17k distinct blobs).
//
//   npm run build && node_modules/.bin/bun bench/grep-index.ts [--dir DIR] [--runs N] [--build-runs N] [--without-native]
//
// --without-native runs every worksnap process with WORKSNAP_NATIVE=0: the TypeScript paths the darwin executables
// take (the server's background build on a worker thread).
//
// 1. Building the index (`worksnap index build`, an empty index each time) against a cold `snapshot create`
//    (an empty .mcp/ each time), interleaved; and the background build of a server started on an empty index
//    (until every blob of git's index is indexed), for reference.
// 2. The index's size against the distinct bytes of the tree.
// 3. Queries in a warm compiled server (`worksnap serve`, through the MCP SDK's client): selective fixed strings
//    and regexes, worktree and snapshot mode, each beside `rg` over the same directory, `git status`, the status
//    on worksnap's copy of the index with git's untracked cache, and the same status told by git's fsmonitor hook
//    that nothing changed (what a server whose watch saw nothing pays: the floor of a worktree call, its
//    fingerprint), interleaved; the same worktree calls in a server without the
//    index; the server's resident set and high-water mark. Every answer's (path, line) pairs are checked against
//    rg's (equal when the page holds them all, a subset otherwise).

import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { ensureGenerated, readMarker } from "./gen-repo.ts";
import { processMemory, resetPeak, resultOf, startServer } from "./mcp-server.ts";
import { plainStatus, statusOnCopy, statusToldNothing } from "./status-floor.ts";
import { argValue, fmtBytes, fmtMs, fmtRatio, loadLine, machineLine, markdownTable, median, runMain, table } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "worksnap");
const TARGETS = { query: 0.2, build: 2, size: 0.3, rss: 400 };

interface Case {
  name: string;
  pattern: string;
  fixed?: boolean;
  ci?: boolean;
  /** counted against the 0.2x target */
  selective: boolean;
}

const CASES: Case[] = [
  { name: "fixed string, rare identifier", pattern: "chunkMerge", fixed: true, selective: true },
  { name: "fixed string, identifier", pattern: "fetchUser", fixed: true, selective: true },
  { name: "regex with required literals", pattern: "channelProvider\\w*\\(", selective: true },
  { name: "regex, common words", pattern: "fetch[A-Z]\\w*\\(user", selective: false },
  { name: "fixed string, common words", pattern: "handleRequest", fixed: true, selective: false },
  { name: "fixed string -i", pattern: "HANDLEREQUEST", fixed: true, ci: true, selective: false },
];

function run(cmd: string[], cwd: string, env?: Record<string, string>): number {
  const t = Bun.nanoseconds();
  const r = Bun.spawnSync(cmd, { cwd, stdout: "ignore", stderr: "pipe", env: env ? { ...process.env, ...env } : undefined });
  if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().slice(0, 500)}`);
  return (Bun.nanoseconds() - t) / 1e6;
}

function rgPairs(dir: string, c: Case): { ms: number; pairs: Set<string> } {
  const args = ["rg", "-n", "--no-heading", "-H", "--hidden", "-g", "!.git/", "-g", "!.mcp/", ...(c.fixed ? ["-F"] : []), ...(c.ci ? ["-i"] : []), "-e", c.pattern];
  const t = Bun.nanoseconds();
  const r = Bun.spawnSync(args, { cwd: dir, stdout: "pipe", stderr: "ignore" });
  const ms = (Bun.nanoseconds() - t) / 1e6;
  const pairs = new Set<string>();
  for (const line of r.stdout.toString().split("\n")) {
    const m = /^(.*?):(\d+):/.exec(line);
    if (m) pairs.add(`${m[1]}:${m[2]}`);
  }
  return { ms, pairs };
}

/** Moves `path` aside (same file system) instead of deleting it: see bench/snapshot.ts setAside. */
function setAside(path: string, trash: string): void {
  if (!existsSync(path)) return;
  mkdirSync(trash, { recursive: true });
  renameSync(path, join(trash, `${Date.now()}-${Math.random().toString(36).slice(2)}`));
}

/** The environment of every worksnap process: WORKSNAP_NATIVE=0 with --without-native. */
const OURS: Record<string, string> | undefined = process.argv.includes("--without-native") ? { WORKSNAP_NATIVE: "0" } : undefined;

async function serve(dir: string, extra: string[] = []) {
  const server = await startServer(BIN, ["serve", "--root", dir, ...extra], OURS ? { env: OURS } : {});
  return {
    ...server,
    async call(name: string, args: Record<string, unknown>): Promise<{ ms: number; result: any }> {
      const { ms, answer } = await server.call(name, args);
      return { ms, result: resultOf(name, answer) };
    },
  };
}

function indexStatus(dir: string): { disk_bytes: number; index_blobs: number; index_blobs_covered: number; segments_total: number } {
  const r = Bun.spawnSync([BIN, "index", "status", "--root", dir, "--json"], { stdout: "pipe", env: OURS ? { ...process.env, ...OURS } : undefined });
  return JSON.parse(r.stdout.toString());
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const dir = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-releases");
  const runs = Number(argValue(args, "--runs") ?? 5);
  const buildRuns = Number(argValue(args, "--build-runs") ?? 3);
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: npm run build`);
  if (!Bun.which("rg")) throw new Error("ripgrep (rg) is required");
  await ensureGenerated(dir, { files: 90_000, seed: "1", layout: "releases", explicit: argValue(args, "--dir") !== undefined, log: (m) => console.error(m) });
  const marker = readMarker(dir);
  const trash = join(dir, "..", `${basename(dir)}.trash-${process.pid}`);
  const machineBefore = machineLine();
  const mcp = join(dir, ".mcp");
  const indexDir = join(mcp, "index");

  // 1. build time against a cold capture, interleaved
  console.error("building: cold capture and index build, interleaved ...");
  const cold: number[] = [];
  const build: number[] = [];
  for (let i = 0; i < buildRuns + 1; i++) {
    setAside(mcp, trash);
    const c = run([BIN, "snapshot", "create", "--root", dir], dir, OURS);
    setAside(indexDir, trash);
    const b = run([BIN, "index", "build", "--root", dir], dir, OURS);
    if (i > 0) (cold.push(c), build.push(b)); // the first round warms the page cache
  }
  const size = indexStatus(dir);

  // the background build of a server started on an empty index
  setAside(indexDir, trash);
  const t0 = performance.now();
  const server = await serve(dir);
  // The server's peak resident set per phase: the high-water mark is read, then started again, after each one.
  const peaks = new Map<string, number>();
  const traced = resetPeak(server.pid);
  const phase = (name: string) => {
    const { hwm } = processMemory(server.pid);
    peaks.set(name, Math.max(peaks.get(name) ?? 0, hwm));
    resetPeak(server.pid);
  };
  let background = NaN;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await Bun.sleep(50)) {
    const s = indexStatus(dir);
    if (s.index_blobs_covered >= s.index_blobs - 10) {
      background = performance.now() - t0;
      break;
    }
  }
  phase("start and the background index build");
  const snapshot = (await server.call("snapshot_create", { paths: ["."] })).result.snapshot_id as string;
  phase("snapshot_create of the whole tree");

  // 3. queries, interleaved with rg and git status
  console.error("querying ...");
  interface Row { rg: number[]; live: number[]; stored: number[]; status: number[]; cached: number[]; told: number[]; off: number[]; matches: number; truncated: boolean; equal: string }
  const rows = new Map<Case, Row>();
  const ask = (c: Case) => ({ pattern: c.pattern, fixed_strings: c.fixed, case_insensitive: c.ci, max_matches: 2000 });
  for (const c of CASES) {
    await server.call("snapshot_grep", ask(c)); // warm-up
    phase(`worktree grep, first call: ${c.name}`);
    rows.set(c, { rg: [], live: [], stored: [], status: [], cached: [], told: [], off: [], matches: 0, truncated: false, equal: "" });
  }
  // a pause as between an agent's calls: the idle collection and the index's background work run here
  await Bun.sleep(1500);
  phase("idle after the first calls (collection, background indexing)");
  for (let i = 0; i < runs; i++) {
    for (const c of CASES) {
      const row = rows.get(c)!;
      const rg = rgPairs(dir, c);
      row.rg.push(rg.ms);
      const live = await server.call("snapshot_grep", ask(c));
      row.live.push(live.ms);
      phase(`worktree grep: ${c.name}`);
      row.stored.push((await server.call("snapshot_grep", { ...ask(c), snapshot_id: snapshot })).ms);
      phase(`snapshot grep: ${c.name}`);
      row.status.push(plainStatus(dir));
      row.cached.push(statusOnCopy(dir));
      row.told.push(statusToldNothing(dir));
      const ours = new Set<string>(live.result.matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`));
      const subset = [...ours].every((p) => rg.pairs.has(p));
      row.matches = live.result.matches.length;
      row.truncated = live.result.truncated;
      row.equal = !subset ? "DIFFERENT" : live.result.truncated ? `first page ⊆ rg (${ours.size} of ${rg.pairs.size})` : ours.size === rg.pairs.size ? "equal" : "DIFFERENT";
    }
  }
  const memory = processMemory(server.pid);
  const peakRows = [...peaks].map(([name, mb]) => [name, `${mb.toFixed(0)} MB`]);
  await server.close();

  // the same worktree calls in a server without the index
  setAside(indexDir, trash);
  const bare = await serve(dir, ["--index-budget", "0"]);
  for (const c of CASES) await bare.call("snapshot_grep", ask(c));
  for (let i = 0; i < runs; i++) for (const c of CASES) rows.get(c)!.off.push((await bare.call("snapshot_grep", ask(c))).ms);
  await bare.close();
  rmSync(trash, { recursive: true, force: true });

  // report
  const med = median;
  const distinct = marker?.distinctBytes ?? NaN;
  const buildRows = [
    ["cold `snapshot create` (empty .mcp/)", fmtMs(med(cold))],
    ["`index build` (foreground, empty index)", fmtMs(med(build))],
    [`server's background build (from start until indexed; ${OURS ? "a worker thread" : "the native module's low-priority threads"})`, fmtMs(background)],
    ["index on disk", `${fmtBytes(size.disk_bytes)} in ${size.segments_total} segments`],
    ["distinct bytes of the tree", fmtBytes(distinct)],
  ];
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const buildRatio = med(build) / med(cold);
  const sizeRatio = size.disk_bytes / distinct;
  const targetRows = [
    ["index build vs cold capture (time ratio)", fmtRatio(buildRatio), `≤ ${TARGETS.build}x`, verdict(buildRatio <= TARGETS.build)],
    ["index size vs distinct bytes", `${(sizeRatio * 100).toFixed(1)} %`, `≤ ${TARGETS.size * 100} %`, verdict(sizeRatio <= TARGETS.size)],
    ...(traced
      ? [["server peak RSS over every phase below (RSS after the queries)", `${Math.max(...peaks.values()).toFixed(0)} MB (${memory.rss.toFixed(0)} MB)`, `< ${TARGETS.rss} MB`, verdict(Math.max(...peaks.values()) < TARGETS.rss)]]
      : [["server RSS after the queries (high-water mark)", `${memory.rss.toFixed(0)} MB (${memory.hwm.toFixed(0)} MB)`, `< ${TARGETS.rss} MB`, verdict(memory.hwm < TARGETS.rss)]]),
  ];
  const queryHeaders = ["case", "rg", "worktree", "ratio", "snapshot", "ratio", "git status", "ratio", "status on the copy", "ratio", "status told nothing (floor)", "ratio", "worktree, no index", "ratio", "matches", "pairs vs rg"];
  const queryRows = CASES.map((c) => {
    const r = rows.get(c)!;
    const rg = med(r.rg);
    const mark = (x: number) => `${fmtRatio(x / rg)}${c.selective ? (x / rg <= TARGETS.query ? " met" : " MISSED") : ""}`;
    return [`${c.name}: \`${c.pattern}\`${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""}`, fmtMs(rg), fmtMs(med(r.live)), mark(med(r.live)), fmtMs(med(r.stored)), mark(med(r.stored)), fmtMs(med(r.status)), fmtRatio(med(r.status) / rg), fmtMs(med(r.cached)), fmtRatio(med(r.cached) / rg), fmtMs(med(r.told)), fmtRatio(med(r.told) / rg), fmtMs(med(r.off)), fmtRatio(med(r.off) / rg), String(r.matches), r.equal];
  });
  const where = `${dir}: ${marker?.files?.toLocaleString("en-US") ?? "?"} files, ${fmtBytes(marker?.bytes ?? NaN)} (${marker?.distinctBlobs?.toLocaleString("en-US") ?? "?"} distinct blobs, ${fmtBytes(distinct)}); ${buildRuns} build rounds, ${runs} query rounds (medians)`;
  const machine = `${machineBefore} (at start); ${loadLine()} (at end)`;
  console.log(`\ngrep index${OURS ? " (WORKSNAP_NATIVE=0: the TypeScript paths)" : ""} — ${where}\n${machine}\n`);
  console.log(table(["build", "median"], buildRows));
  console.log("");
  console.log(table(["target", "value", "target", "verdict"], targetRows));
  console.log("");
  console.log(table(queryHeaders, queryRows));
  if (traced) console.log(`\n${table(["server phase", "peak RSS"], peakRows)}`);
  console.log(`\nserver RSS after the queries ${memory.rss.toFixed(0)} MB, of which ${memory.file.toFixed(0)} MB pages of mapped files (the executable, index segments)`);
  console.log("\n---- markdown for bench/README.md ----\n");
  console.log([`${where}.  `, `Machine: ${machine}.`, "", markdownTable(["build", "median"], buildRows), "", markdownTable(["target", "value", "target", "verdict"], targetRows), "", markdownTable(queryHeaders, queryRows), ...(traced ? ["", markdownTable(["server phase", "peak RSS"], peakRows)] : [])].join("\n"));
  return 0;
}

if (import.meta.main) await runMain(main);
