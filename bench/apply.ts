// Benchmark: workspace_apply_patch through the op (what the MCP server runs per call), beside `git apply` on the
// same patch and the same files, in the same run.
//
//   node_modules/.bin/bun bench/apply.ts [--runs N] [--small] [--dir DIR] [--only files|big] [--git-runs-big N]
//                                        [--drop-history] [--dirty-tree] [--without-native] [--write]
//
// --without-native runs everything with WORKSNAP_NATIVE=0, this process's op and every worksnap process: the
// TypeScript paths the darwin executables take (git apply stays the anchor).
//
// Inputs (deterministic, seeded, TypeScript-like text from gen-repo.ts), each a committed git repository:
//   1. 5,000 hunks over 500 files (10 hunks per 16 KB file), as `git diff` writes them;
//   2. one 50 MB file with 1,000 hunks.
// Measured in interleaved rounds (one run of every column per round, so machine load lands on all of them alike);
// before every run the repository is reset to the committed files and its file system flushed (untimed: the files
// a patch changes are on disk, as a session finds files it did not write in the last seconds; --dirty-tree leaves
// the reset's writes in the page cache instead, see `reset`); the edit history of earlier runs stays, each run
// records under a new conversation (--drop-history removes it before every run instead):
//   - git apply: `git apply --whitespace=nowarn patch.diff`, a process, spawn to exit (it writes without fsync);
//   - git apply, flushed: the same, then `sync -f .` (syncfs(2) of the repository's file system, the flush worksnap
//     makes of its staged files): the anchor with the durability a recorded write has, by standard tools;
//   - git apply, old files kept: `tar -cf` of the patched files' old bytes and `sync -f` of it, then git apply
//     flushed: the anchor with worksnap's first-write record too (the old bytes made durable before anything is
//     written: the history's checkpoints), one step after the other as standard tools must do it;
//   - op, worktree: applyPatchOp in process with a warm long-lived workspace, as the server does: lock, live
//     fingerprint, plan against the files, validation, staged writes made durable, publishing (exchanges and
//     renames), the edit history's record, the new fingerprint and lease. After each call the bench waits, untimed,
//     for the work a server does between calls (removing the replaced files, making spares: tmp-reserve.ts);
//   - op, first call: a long-lived workspace as `worksnap serve` opens it (spares made or taken at start-up,
//     untimed: the server waits for its host's first call), timed over its first call only, in this process (whose
//     code the rounds before have warmed up);
//   - server's first write: the same through the compiled server, `dist/worksnap serve --root REPO` started and
//     connected to with the MCP SDK's client, its first workspace_apply_patch call timed from request to answer
//     (the patch sent as JSON-RPC; the server's code as cold as a host's new session finds it), 1.5 s after the
//     client connected (untimed);
//   - git apply after the same pause: git apply run SERVER_IDLE_MS after the reset, as the server's first write is
//     (on a machine that takes back memory left idle, the pause alone makes a write slower: bench/idle-memory.ts);
//     the server's first write is also given over it;
//   - server, the request alone: a new server's first call with the same patch and an unknown mode, refused at
//     once: what getting the 1.4 MB request to the server and an answer back costs (the client's serialisation,
//     the pipe, JSON.parse), which the first write's time includes;
//   - op, one-shot: the same call in a workspace as a one-shot CLI command opens it (spares from the pool the
//     previous process left; what the call replaced is handed off and removed after it, untimed), in process;
//   - CLI: `dist/worksnap apply patch.diff` as a user runs it, a process, spawn to exit (start-up included), as git
//     apply is timed; its detached step after the answer is waited for, untimed;
//   - CLI, first write: the same with no pool of spares in the repository (the first write there ever: it creates
//     its inodes while the caller waits);
//   - op, worktree, fsync per file: the same with syncfs(2) switched off (the fallback where it is unavailable);
//   - op, worktree, history off: the same with no edit-history recorder (the write path's own cost);
//   - op, snapshot: applyPatchOp against a snapshot of the base (plan + new blobs + manifest; nothing on disk).
// The op's result is checked against git apply's (same tree id) before timing. --write replaces
// bench/apply-README-figures.md with the figures and the load average before and after.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { splitLines } from "../src/ops/diff/line-diff";
import { createSnapshot } from "../src/ops/snapshot/create";
import { applyPatchOp } from "../src/ops/mutate/apply-patch";
import { closeWorkspace, openWorkspace, prepareForWrites, type Workspace } from "../src/ops/workspace";
import { finishHandOff, POOL_PREFIX } from "../src/repo/tmp-reserve";
import { Rng, renderFile } from "./gen-repo.ts";
import { hunksFor } from "./hunks.ts";
import { configureDurability, syncFileSystem } from "../src/repo/durable";
import { nativeModule } from "../src/repo/native";
import { resultOf, startServer, type ToolAnswer } from "./mcp-server.ts";
import { argValue, fileSystemLine, fmtMs, fmtRatio, loadLine, machineLine, markdownTable, median, table, timeCommand, runMain } from "./lib.ts";

const GIT_ENV = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
};

function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, ...GIT_ENV }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

interface Scenario {
  name: string;
  repo: string;
  patchFile: string;
  files: number;
  hunks: number;
}

function ensureScenario(base: string, name: string, files: number, hunksPerFile: number, fileBytes: number): Scenario {
  const dir = join(base, name);
  const repo = join(dir, "repo");
  const patchFile = join(dir, "patch.diff");
  const marker = join(dir, "ready.json");
  const spec = JSON.stringify({ version: 1, files, hunksPerFile, fileBytes });
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== spec) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    const r = new Rng(files * 7919 + fileBytes);
    let patch = "";
    for (let f = 0; f < files; f++) {
      const path = files === 1 ? "bundle/big.ts" : `src/m${Math.floor(f / 50)}/file${f}.ts`;
      const text = Buffer.from(renderFile({ path, ext: "ts", size: fileBytes, seed: 1000 + f, exec: false, crlf: false, noEol: false })).toString("latin1");
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), Buffer.from(text, "latin1"));
      patch += `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n${hunksFor(r, splitLines(text), hunksPerFile, () => 0)}`;
    }
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "base");
    writeFileSync(patchFile, Buffer.from(patch, "latin1"));
    writeFileSync(marker, spec);
  }
  return { name, repo, patchFile, files, hunks: files * hunksPerFile };
}

/**
 * Back to the committed files, on disk. `git reset --hard` rewrites the patched files; left in the page cache,
 * their data is not yet given blocks (delayed allocation), and a contender that unlinks them (git apply removes
 * each file and creates it anew) drops them for free, while one that flushes the file system (a worksnap write's
 * syncfs) writes them out first: a state in which no session finds the files of a 500-file patch, measured to
 * take git apply from about 145 to about 100 ms on this bench's files. So the reset is flushed (`syncfs`,
 * untimed) before every run; --dirty-tree keeps the reset's writes pending instead. The edit history of earlier runs stays (each run records under a conversation of
 * its own, so it takes every checkpoint afresh), as in a working session; with --drop-history it is removed
 * before every run instead. On a file system that delays reusing freed inodes (ext4 without a journal checks
 * every recently deleted inode of the group before allocating one), removing thousands of history files just
 * before a timed run makes that run's file creations several times slower than a session would see them.
 */
function reset(s: Scenario): void {
  git(s.repo, "reset", "-q", "--hard");
  git(s.repo, "clean", "-fdq");
  if (dropHistory) removeHistory(s);
  if (!dirtyTree && !syncFileSystem(s.repo)) throw new Error("bench/apply.ts: syncfs is not available here; run with --dirty-tree");
}

function removeHistory(s: Scenario): void {
  rmSync(join(s.repo, ".mcp", "edit_history"), { recursive: true, force: true });
}

let dropHistory = false;
let dirtyTree = false;
let conversations = 0;

type Contender = "git" | "gitFlushed" | "gitKept" | "gitPaused" | "op" | "serverFirst" | "serverProcess" | "serverMessage" | "opOneShot" | "cli" | "cliFirst" | "opNoHistory" | "opFsync" | "snapshot";
const CONTENDERS: Contender[] = ["git", "gitFlushed", "gitKept", "op", "serverFirst", "gitPaused", "serverProcess", "serverMessage", "opOneShot", "cli", "cliFirst", "opFsync", "opNoHistory", "snapshot"];
const GIT_CONTENDERS: Contender[] = ["git", "gitFlushed", "gitKept", "gitPaused"];
/**
 * The columns that run in a process of their own. They run first in every round, while this process has no workspace
 * open: a long-lived workspace watches the tree (its status watch reads the events of every file the contender writes)
 * and does work between calls, all on this machine's two cores. Measured: `git apply` 139 ms alone, 149 ms beside an
 * open workspace; the CLI 152 and 153 ms.
 */
const PROCESS_CONTENDERS = new Set<Contender>(["git", "gitFlushed", "gitKept", "gitPaused", "serverProcess", "serverMessage", "cli", "cliFirst"]);
/** Untimed wait between a compiled server's start and its first call (its start-up spares and watch are made meanwhile, as while a host's user types). */
const SERVER_IDLE_MS = 1500;
const BINARY = join(import.meta.dir, "..", "dist", "worksnap");

/** `.mcp/tmp` of the scenario's repository: entries, and the pools of spares among them. */
function temps(s: Scenario): string[] {
  const dir = join(s.repo, ".mcp", "tmp");
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Waits (untimed) for the CLI's detached step: until only pools are left in `.mcp/tmp` (at most 10 s). */
async function handOffDone(s: Scenario): Promise<void> {
  const until = Date.now() + 10_000;
  while (temps(s).some((n) => !n.startsWith(POOL_PREFIX)) && Date.now() < until) await Bun.sleep(5);
}

/** Each contender's times; serverSend: the client's send within each "server's first write" (BenchServer.call). */
type Result = Record<Contender, number[]> & { serverSend: number[] };

/** Waits (untimed, at most 10 s) until process `pid` is gone, so that it takes no CPU from the next column. */
async function exited(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await Bun.sleep(5);
  }
}

/** A new compiled server's first workspace_apply_patch call, on a freshly reset repository, after it has waited for its host. */
async function firstCallOfNewServer(s: Scenario, args: Record<string, unknown>): Promise<{ ms: number; sendMs: number; answer: ToolAnswer }> {
  reset(s);
  // the SDK gives its server a minimal environment: the setting is passed on by name
  const env = process.env.WORKSNAP_NATIVE === "0" ? { WORKSNAP_NATIVE: "0" } : undefined;
  const server = await startServer(BINARY, ["serve", "--root", s.repo], { stderr: "ignore", env });
  try {
    await Bun.sleep(SERVER_IDLE_MS);
    return await server.call("workspace_apply_patch", args);
  } finally {
    await server.close();
    await exited(server.pid);
  }
}

/** One timed run of the op in worktree mode on a freshly reset repository. */
async function runOp(s: Scenario, ws: Workspace, patch: string): Promise<number> {
  reset(s);
  const t0 = Bun.nanoseconds();
  const r = await applyPatchOp(ws, { mode: "worktree", patch, mcp_conversation_id: `bench-${process.pid}-${conversations++}` });
  const took = (Bun.nanoseconds() - t0) / 1e6;
  await ws.reserve?.idle(); // the time between two calls of an agent
  if (!r.applied) throw new Error(`${s.name}: the op rejected the patch: ${JSON.stringify(r.rejects).slice(0, 1000)}`);
  return took;
}

/**
 * Interleaved rounds: every round runs each contender once, in the same order, so a change in machine load lands
 * on every column alike. git apply runs in the first `gitRuns` rounds only (on the 50 MB file one run takes over
 * a minute).
 */
async function measure(s: Scenario, runs: number, gitRuns: number): Promise<Result> {
  const patch = await Bun.file(s.patchFile).text();
  // The op must produce exactly git apply's result.
  reset(s);
  git(s.repo, "apply", "--whitespace=nowarn", s.patchFile);
  git(s.repo, "add", "-A");
  const expected = git(s.repo, "write-tree").trim();
  let ws = openWorkspace(s.repo, { longLived: true });
  let wsOpen = true;
  const out: Result = { git: [], gitFlushed: [], gitKept: [], gitPaused: [], op: [], serverFirst: [], serverProcess: [], serverMessage: [], opOneShot: [], cli: [], cliFirst: [], opNoHistory: [], opFsync: [], snapshot: [], serverSend: [] };
  let lastSendMs = 0;
  // the patched paths, for the anchor that keeps their old bytes (outside the repository: a reset cleans it)
  const listFile = join(dirname(s.repo), "patched-files.txt");
  const keptTar = join(dirname(s.repo), "old-files.tar");
  writeFileSync(listFile, [...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]).join("\n") + "\n");
  const applyFlushed = `git apply --whitespace=nowarn '${s.patchFile}' && sync -f .`;
  /** One timed `git apply` of the patch, after `prepare` (untimed). */
  const gitApply = async (prepare: () => void | Promise<void>) =>
    (await timeCommand(["git", "apply", "--whitespace=nowarn", s.patchFile], { cwd: s.repo, env: GIT_ENV, runs: 1, prepare })).ms[0]!;
  const cli = async () => {
    const ms = (await timeCommand([BINARY, "apply", s.patchFile], { cwd: s.repo, runs: 1, prepare: () => reset(s) })).ms[0]!;
    await handOffDone(s);
    return ms;
  };
  try {
    removeHistory(s);
    reset(s);
    await applyPatchOp(ws, { mode: "worktree", patch });
    git(s.repo, "add", "-A");
    if (git(s.repo, "write-tree").trim() !== expected) throw new Error(`${s.name}: the op's result differs from git apply's`);
    reset(s);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const one: Record<Contender, () => Promise<number>> = {
      git: () => gitApply(() => reset(s)),
      gitFlushed: async () => (await timeCommand(["bash", "-c", applyFlushed], { cwd: s.repo, env: GIT_ENV, runs: 1, prepare: () => reset(s) })).ms[0]!,
      gitKept: async () => {
        const cmd = `tar -cf '${keptTar}' -T '${listFile}' && sync -f '${keptTar}' && ${applyFlushed}`;
        return (await timeCommand(["bash", "-c", cmd], { cwd: s.repo, env: GIT_ENV, runs: 1, prepare: () => (reset(s), rmSync(keptTar, { force: true })) })).ms[0]!;
      },
      // git apply after the pause a server's first write waits before its call (the reset, then SERVER_IDLE_MS):
      // what a pause costs a write on this machine, whoever writes (docs/decisions.md "A server's first write is
      // compared with git apply after the same pause")
      gitPaused: () =>
        gitApply(async () => {
          reset(s);
          await Bun.sleep(SERVER_IDLE_MS);
        }),
      op: () => runOp(s, ws, patch),
      serverFirst: async () => {
        const server = openWorkspace(s.repo, { longLived: true });
        try {
          prepareForWrites(server);
          await server.reserve?.idle(); // the server waits for its host's first call
          return await runOp(s, server, patch);
        } finally {
          closeWorkspace(server);
        }
      },
      serverProcess: async () => {
        const { ms, sendMs, answer } = await firstCallOfNewServer(s, { patch });
        lastSendMs = sendMs;
        const r = resultOf("workspace_apply_patch", answer);
        if (!r.applied) throw new Error(`${s.name}: the compiled server rejected the patch: ${JSON.stringify(r.rejects).slice(0, 1000)}`);
        return ms;
      },
      serverMessage: async () => {
        // the same request, refused at once (an unknown mode): the cost of getting the message to a new server and its
        // answer back (the client's serialisation, the pipe, JSON.parse of 1.4 MB), which a write's answer includes
        const { ms, answer } = await firstCallOfNewServer(s, { patch, mode: "none" });
        if (!answer.isError) throw new Error(`${s.name}: the compiled server took a patch with mode "none"`);
        return ms;
      },
      opOneShot: async () => {
        const ws1 = openWorkspace(s.repo, { handOff: true });
        try {
          return await runOp(s, ws1, patch);
        } finally {
          const h = ws1.reserve?.handOff();
          closeWorkspace(ws1);
          if (h) await finishHandOff(s.repo, h); // the CLI's detached step, untimed
        }
      },
      cli,
      cliFirst: async () => {
        for (const n of temps(s)) if (n.startsWith(POOL_PREFIX)) rmSync(join(s.repo, ".mcp", "tmp", n), { recursive: true, force: true });
        return cli();
      },
      opNoHistory: async () => {
        const recorder = ws.recorder;
        ws.recorder = null;
        try {
          return await runOp(s, ws, patch);
        } finally {
          ws.recorder = recorder;
        }
      },
      opFsync: async () => {
        configureDurability({ syncfs: false });
        try {
          return await runOp(s, ws, patch);
        } finally {
          configureDurability({ syncfs: true });
        }
      },
      snapshot: async () => {
        const t0 = Bun.nanoseconds();
        const r = await applyPatchOp(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, patch });
        if (!r.applied) throw new Error(`${s.name}: snapshot mode rejected the patch`);
        return (Bun.nanoseconds() - t0) / 1e6;
      },
    };
    const order = [...CONTENDERS.filter((c) => PROCESS_CONTENDERS.has(c)), ...CONTENDERS.filter((c) => !PROCESS_CONTENDERS.has(c))];
    for (let round = 0; round <= runs; round++) {
      closeWorkspace(ws);
      wsOpen = false;
      for (const c of order) {
        if (GIT_CONTENDERS.includes(c) && round > gitRuns) continue;
        if (!wsOpen && !PROCESS_CONTENDERS.has(c)) {
          // the long-lived workspace again, warmed by one untimed call (its watch started, its spares made)
          ws = openWorkspace(s.repo, { longLived: true });
          wsOpen = true;
          await runOp(s, ws, patch);
        }
        const ms = await one[c]();
        if (round > 0) {
          out[c].push(ms); // round 0 warms every contender up
          if (c === "serverProcess") out.serverSend.push(lastSendMs);
        }
      }
      if (!wsOpen) ws = openWorkspace(s.repo, { longLived: true });
      wsOpen = true;
      process.stderr.write(`${s.name}: round ${round}/${runs} (${loadLine()})\n`);
    }
    return out;
  } finally {
    if (wsOpen) closeWorkspace(ws);
    reset(s);
    removeHistory(s);
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const small = args.includes("--small");
  const runs = Number(argValue(args, "--runs") ?? 5);
  const base = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-apply");
  const only = argValue(args, "--only");
  dropHistory = args.includes("--drop-history");
  dirtyTree = args.includes("--dirty-tree");
  // before anything asks for the module: the in-process op and the processes started inherit it
  const withoutNative = args.includes("--without-native");
  if (withoutNative) process.env.WORKSNAP_NATIVE = "0";
  if (nativeModule() !== null && withoutNative) throw new Error("the native module loaded before --without-native took effect");
  const scale = small ? 10 : 1;
  const all = [
    { s: ensureScenario(base, `files-${500 / scale}`, 500 / scale, 10, 16 * 1024), label: `${5000 / scale} hunks / ${500 / scale} files` },
    { s: ensureScenario(base, `big-${50 / scale}mb`, 1, 1000 / scale, (50 * 1024 * 1024) / scale), label: `${1000 / scale} hunks / one ${50 / scale} MB file` },
  ];
  const scenarios = all.filter((x) => only === undefined || x.s.name.startsWith(only));
  const loadBefore = `${machineLine()}; ${fileSystemLine(base)}`;
  const results: Result[] = [];
  for (const { s } of scenarios) {
    // git apply moves the rest of the file for every hunk: on the 50 MB file one run takes over a minute.
    const gitRuns = s.files === 1 && !small ? Math.min(runs, Number(argValue(args, "--git-runs-big") ?? 2)) : runs;
    results.push(await measure(s, runs, gitRuns));
  }
  const loadAfter = loadLine();
  const headers = ["input", "git apply", "git apply, flushed", "ratio", "git apply, old files kept", "ratio", "op, worktree", "ratio", "op, first call", "ratio", "server's first write", "ratio", "git apply after the same pause", "server's first write / it", "the client's send in it", "server's first write less the client's send / git apply after the pause", "server, the request alone", "ratio", "op, one-shot", "ratio", "CLI", "ratio", "CLI, first write", "ratio", "op, worktree, fsync per file", "ratio", "op, worktree, history off", "ratio", "op, snapshot", "ratio"];
  const rows = results.map((r, i) => {
    const g = median(r.git);
    const cell = (xs: number[]) => [fmtMs(median(xs)), fmtRatio(median(xs) / g)];
    return [scenarios[i]!.label, fmtMs(g), ...cell(r.gitFlushed), ...cell(r.gitKept), ...cell(r.op), ...cell(r.serverFirst), ...cell(r.serverProcess), fmtMs(median(r.gitPaused)), fmtRatio(median(r.serverProcess) / median(r.gitPaused)), fmtMs(median(r.serverSend)), fmtRatio(median(r.serverProcess.map((ms, k) => ms - (r.serverSend[k] ?? 0))) / median(r.gitPaused)), ...cell(r.serverMessage), ...cell(r.opOneShot), ...cell(r.cli), ...cell(r.cliFirst), ...cell(r.opFsync), ...cell(r.opNoHistory), ...cell(r.snapshot)];
  });
  if (withoutNative) console.log("WORKSNAP_NATIVE=0: the TypeScript paths (the darwin executables'), in this process and every worksnap process");
  console.log(table(headers, rows));
  console.log(`${loadBefore}; after: ${loadAfter}`);
  if (args.includes("--write")) {
    const cmd = `node_modules/.bin/bun bench/apply.ts --runs ${runs}${small ? " --small" : ""}${only ? ` --only ${only}` : ""}${dropHistory ? " --drop-history" : ""}${dirtyTree ? " --dirty-tree" : ""}${withoutNative ? " --without-native" : ""} --write`;
    const md = [
      "# workspace_apply_patch benchmark figures",
      "",
      `Measured by \`${cmd}\` on ${loadBefore}; after the run: ${loadAfter}.`,
      "",
      `Medians of ${runs} interleaved rounds after one untimed warm-up round: every round runs each column once, so load`,
      "from other work on the machine lands on every column alike (git apply on the 50 MB file runs in the first rounds",
      "only: one run takes over a minute); the columns that run a process of their own (git, the CLI, the compiled",
      "server) come first, while the bench's process has no workspace open (no status watch reading their writes' events,",
      "no work between calls), then the in-process ones. Before every run the repository is reset to",
      "its committed files " + (dirtyTree ? "(untimed), the reset's writes left pending in the page cache (--dirty-tree)." : "and its file system flushed (untimed), so the patched files are on disk.") + " The edit history of earlier runs stays, as in a working session, and each run",
      "records under a new conversation, so it writes every checkpoint afresh" + (dropHistory ? "; this run removed the history before every run (--drop-history)." : "."),
      "",
      "Ratios are op / git apply: below 1 we are faster. \"op, worktree\" is the whole call as the MCP server runs it:",
      "work-tree lock, live fingerprint, the plan against the live files, validation, staged writes made durable",
      "before publishing, exchanges and renames, the edit-history record (checkpoints, diffs and log entries, all",
      "durable), the new fingerprint and lease; between calls (untimed) the server removes the files the call replaced",
      "and makes spare files for the next one. \"op, first call\" is the first call of a workspace just opened as a server",
      "opens it (its start-up spares made or taken from a pool, untimed: a server waits for its host), in this process,",
      "whose code the earlier rounds have warmed. \"server's first write\" is the same through the compiled server:",
      "`dist/worksnap serve` started, its first `workspace_apply_patch` call timed through the MCP SDK's client from",
      "request to answer (the patch sent as JSON-RPC, code not yet compiled by the JIT), 1.5 s after the client",
      "connected (untimed); \"git apply after the same pause\" is git apply run 1.5 s after the reset, as that call is,",
      "and the next column the server's first write over it (on a machine that takes back memory left idle, the pause",
      "alone makes any write slower). \"the client's send in it\" is the part of that time the MCP SDK's client spends in its",
      "transport's send before the request can reach the server (JSON.stringify of the 1.4 MB message, the write of its",
      "first bytes): the host's cost, which any server's answer includes; the column after it is the first write without",
      "it, over git apply after the same pause. \"server, the request alone\" is a new server's first call with the same patch and an unknown",
      "mode, refused at once: what the request's transport and parsing cost, which that time includes. \"op, one-shot\" is the call",
      "in a workspace as a one-shot CLI command opens it, in process: spares from the pool the previous process left,",
      "the replaced files handed off and removed after it (untimed). \"CLI\" is `dist/worksnap apply patch.diff` as a",
      "process, spawn to exit, as git apply is timed (start-up included; its detached step waited for, untimed);",
      "\"CLI, first write\" the same with no pool in the repository. git apply does none",
      "of the fingerprinting or recording and does not fsync. \"git apply, flushed\" adds `sync -f .` (syncfs(2), the",
      "flush worksnap makes of its staged files); \"git apply, old files kept\" first makes the patched files' old",
      "bytes durable (`tar -cf` of them, `sync -f`), as the history's checkpoints are before anything is written. \"fsync per",
      "file\" is the same call with `syncfs(2)` switched off (the fallback where it is unavailable: one fsync per",
      "file, issued in parallel). \"history off\" is the call without the edit-history recorder. \"op, snapshot\"",
      "applies the patch to a stored snapshot (after the first run its blobs and manifest already exist). Every op",
      "result was checked against git apply's (same tree id).",
      "",
      markdownTable(headers, rows),
      "",
    ].join("\n");
    writeFileSync(join(import.meta.dir, "apply-README-figures.md"), md);
  }
  return 0;
}

if (import.meta.main) await runMain(main);
