import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../../src/ops/task/check";
import type { CheckCommand } from "../../../src/ops/task/check-detect";
import { OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES, PIPE_GRACE_MS, runCommand } from "../../../src/ops/task/check-runner";
import { startTask } from "../../../src/ops/task/start";
import { tmpDir, tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";
import { processRunning } from "../../helpers/process";
import { wireCodeOf } from "./helpers";

const cmd = (run: string, timeoutMs = 10_000): CheckCommand => ({ name: "test", kind: "test", argv: ["sh", "-c", run], display: run, source: "test", timeoutMs });

/** A repository whose committed worksnap.json runs `test` (and records each run in a file outside the tree). */
async function repoWithTest(repo: TmpRepo, script: string, timeout = 30): Promise<void> {
  repo.write("worksnap.json", JSON.stringify({ checks: { test: { run: script, timeout } } }));
  repo.write("src/a.ts", "export const a = 1;\n");
  repo.commit();
}

describe("running a check command", () => {
  test("a timeout kills the whole process group, grandchildren included", async () => {
    await using dir = tmpDir();
    const pidFile = join(dir.path, "pids");
    const t0 = Date.now();
    const r = await runCommand(cmd(`sleep 300 & echo $! > ${pidFile}; (sleep 301 &) ; sleep 302`, 400), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    const bg = Number(readFileSync(pidFile, "utf8").trim());
    await Bun.sleep(100);
    expect(processRunning(bg)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(30_000); // not the 300 s the command asked for
  });

  test("cancellation stops it the same way", async () => {
    await using dir = tmpDir();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await runCommand(cmd("sleep 300"), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" }, signal: ac.signal });
    expect(r.cancelled).toBe(true);
  });

  test("output over the cap keeps its head and its tail, and counts what was left out", async () => {
    await using dir = tmpDir();
    const r = await runCommand(cmd("echo FIRST; head -c 2000000 /dev/zero | tr '\\0' x; echo; echo LAST"), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
    expect(r.outputBytes).toBe(2_000_000 + "FIRST\n\nLAST\n".length);
    expect(r.output.startsWith("FIRST\n")).toBe(true);
    expect(r.output.endsWith("LAST\n")).toBe(true);
    expect(r.output.length).toBeLessThan(OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES + 200);
    expect(r.output).toMatch(/\[\.\.\. \d+ bytes of output left out \.\.\.\]/);
  });
});

/** A command that starts a process in a session of its own (out of the check's group) holding its output, and records its pid. */
const daemonHoldingOutput = (pidFile: string) => `setsid sh -c 'echo $$ > ${pidFile}; echo from the daemon; exec sleep 60' & while [ ! -s ${pidFile} ]; do sleep 0.05; done; sleep 0.2; echo done`;

async function killRecorded(pidFile: string): Promise<void> {
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (pid > 0 && processRunning(pid)) process.kill(pid, "SIGKILL");
}

describe("a process that left the check's process group", () => {
  test("regression: a daemon holding the output neither holds the check open nor makes it time out", async () => {
    await using dir = tmpDir();
    const pidFile = join(dir.path, "daemon");
    try {
      const t0 = Date.now();
      const r = await runCommand(cmd(`${daemonHoldingOutput(pidFile)}; exit 3`, 20_000), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
      const elapsed = Date.now() - t0;
      expect(r).toMatchObject({ exitCode: 3, timedOut: false, cancelled: false, outputHeld: true });
      expect(r.output).toContain("from the daemon\n");
      expect(r.output).toContain("done\n");
      expect(r.output).toMatch(/\[output closed \d+ ms after the command ended: a process it started outside its process group/);
      expect(elapsed).toBeGreaterThanOrEqual(PIPE_GRACE_MS - 50);
      expect(elapsed).toBeLessThan(10_000); // not the daemon's 60 s, nor the 20 s timeout
      expect(processRunning(Number(readFileSync(pidFile, "utf8").trim()))).toBe(true); // out of reach, and left alone
    } finally {
      await killRecorded(pidFile);
    }
  });

  test("a command that times out while such a daemon holds its output is answered after the timeout", async () => {
    await using dir = tmpDir();
    const pidFile = join(dir.path, "daemon");
    try {
      const t0 = Date.now();
      const r = await runCommand(cmd(`${daemonHoldingOutput(pidFile)}; sleep 300`, 1_500), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
      expect(r).toMatchObject({ exitCode: null, timedOut: true, outputHeld: true });
      expect(Date.now() - t0).toBeLessThan(15_000);
    } finally {
      await killRecorded(pidFile);
    }
  });

  test("output the command's own processes write before they end is read whole (no grace cut)", async () => {
    await using dir = tmpDir();
    const r = await runCommand(cmd("(sleep 0.3; echo late) & echo early"), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
    // the background writer is in the group, killed when the command exits: its output is never waited for
    expect(r).toMatchObject({ exitCode: 0, outputHeld: false, output: "early\n" });
    const whole = await runCommand(cmd("head -c 300000 /dev/zero | tr '\\0' y; echo"), { cwd: dir.path, env: { PATH: process.env.PATH ?? "" } });
    expect(whole.outputBytes).toBe(300_001);
    expect(whole.outputHeld).toBe(false);
  });

  test("through task check: the check passes and its result is cached", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const pidFile = join(dir.path, "daemon");
    try {
      await repoWithTest(repo, daemonHoldingOutput(pidFile), 20);
      using ws = wsOf(repo);
      await startTask(ws, { task: "t" });
      const t0 = Date.now();
      const r = await runCheck(ws, { mode: "test" });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r.status).toBe("pass");
      expect(r.commands[0]).toMatchObject({ passed: true, exitCode: 0 });
      expect((await runCheck(ws, { mode: "test" })).commands[0]?.cached).toBe(true);
    } finally {
      await killRecorded(pidFile);
    }
  });
});

describe("check results", () => {
  test("the same tree answers from the cache; a changed tree runs again", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const runs = join(dir.path, "runs");
    await repoWithTest(repo, `echo run >> ${runs}; exit 0`);
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    const first = await runCheck(ws, { mode: "test" });
    expect(first.commands[0]).toMatchObject({ passed: true });
    expect(first.commands[0]?.cached).toBeUndefined();
    const second = await runCheck(ws, { mode: "test" });
    expect(second.commands[0]?.cached).toBe(true);
    expect(second.tree).toBe(first.tree);
    expect(readFileSync(runs, "utf8")).toBe("run\n");
    repo.write("src/a.ts", "export const a = 2;\n");
    const third = await runCheck(ws, { mode: "test" });
    expect(third.commands[0]?.cached).toBeUndefined();
    expect(readFileSync(runs, "utf8")).toBe("run\nrun\n");
    // A workspace opened later (a restarted server) finds the result too.
    using again = wsOf(repo);
    expect((await runCheck(again, { mode: "test" })).commands[0]?.cached).toBe(true);
  });

  test("two checks of the same tree at once run the command once", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const runs = join(dir.path, "runs");
    await repoWithTest(repo, `echo run >> ${runs}; sleep 1; exit 0`);
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    const [a, b] = await Promise.all([runCheck(ws, { mode: "test" }), runCheck(ws, { mode: "test" })]);
    expect(a.status).toBe("pass");
    expect(b.status).toBe("pass");
    expect(readFileSync(runs, "utf8")).toBe("run\n");
  });

  test("a check that writes into the tree is not cached (its result describes another tree)", async () => {
    await using repo = await tmpRepo();
    await repoWithTest(repo, "date +%N > out.txt; exit 0");
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    const r = await runCheck(ws, { mode: "test" });
    expect(r.commands[0]?.notCached).toBeDefined();
    expect(existsSync(join(repo.root, ".mcp", "cache", "checks"))).toBe(false);
  });

  test("a failing command counts its diagnostics; one that cannot start or hangs is a wire error", async () => {
    await using repo = await tmpRepo();
    await repoWithTest(repo, "echo 'src/a.ts:1:14: error: expected a string'; echo 'src/a.ts:1:1: warning: prefer const'; exit 1");
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    const r = await runCheck(ws, { mode: "test" });
    expect(r.status).toBe("fail");
    expect(r.commands[0]).toMatchObject({ errors: 1, warnings: 1, exitCode: 1 });
    expect(r.commands[0]?.diagnostics.map((d) => [d.path, d.line, d.severity])).toEqual([["src/a.ts", 1, "error"], ["src/a.ts", 1, "warning"]]);

    await using missing = await tmpRepo();
    await repoWithTest(missing, "no-such-tool-anywhere --check");
    using ws2 = wsOf(missing);
    await startTask(ws2, { task: "t" });
    expect(await wireCodeOf(runCheck(ws2, { mode: "test" }))).toBe("CHECK_COMMAND_NOT_FOUND");

    await using hangs = await tmpRepo();
    await repoWithTest(hangs, "sleep 600", 1);
    using ws3 = wsOf(hangs);
    await startTask(ws3, { task: "t" });
    expect(await wireCodeOf(runCheck(ws3, { mode: "test" }))).toBe("CHECK_TIMEOUT");
  });

  test("without a task, analysis modes are NO_TASK; project commands and named files still work", async () => {
    await using repo = await tmpRepo();
    await repoWithTest(repo, "exit 0");
    using ws = wsOf(repo);
    expect(await wireCodeOf(runCheck(ws, { mode: "quick" }))).toBe("NO_TASK");
    expect(await wireCodeOf(runCheck(ws, { mode: "quick", taskId: "task_1" }))).toBe("NO_TASK");
    expect((await runCheck(ws, { mode: "test" })).status).toBe("pass");
    const files = await runCheck(ws, { mode: "quick", files: ["src/a.ts"] });
    expect(files.scope).toEqual({ files: ["src/a.ts"], from: "files" });
    expect(await wireCodeOf(runCheck(ws, { mode: "quick", files: ["src/nope.ts"] }))).toBe("NOT_FOUND");
  });
});
