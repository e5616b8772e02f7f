// Benchmark: what changed between a commit and the work tree, the question a reviewer asks first, on the generated
// repository (bench/gen-repo.ts; the large one by default, left dirty as a working session leaves it: 50 modified,
// 10 deleted, 200 untracked files).
//
//   npm run build && node_modules/.bin/bun bench/changes.ts [--dir DIR] [--small] [--runs N] [--baseline BIN]
//
// Rows, interleaved in rounds after an untimed warm-up round (CLI: a process each, as a reviewer or a CI step runs
// it; server: `snapshot_changes` through the compiled server and the MCP SDK's client: the first call, the next
// ones, and more after a pause, once the server's watch of the work tree is in place):
// - `snapshot changes HEAD worktree` against `git diff HEAD --name-status` (the anchor) and `git status`;
// - the same against an older commit (made here, beside HEAD: 200 files changed, 50 deleted, 50 added, from a
//   temporary index; the work tree and the index are not touched) against `git diff <commit> --name-status`;
// - scoped to one top directory, against `git diff HEAD --name-status -- <dir>`.
// `--baseline BIN`: the same CLI rows for another build, in the same rounds. Every worksnap answer names the files
// git names, plus the untracked ones (checked once before timing).

import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateRepo, GENERATOR_VERSION, readMarker } from "./gen-repo.ts";
import { type Contender, argValue, fmtMs, fmtRatio, loadLine, machineLine, markdownTable, median, runMain, timeRounds } from "./lib.ts";
import { startServer } from "./mcp-server.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist", "worksnap");
const OLDER_REF = "refs/worksnap-bench/older";
/** The pause after which a server's calls are timed again. */
const SETTLE_MS = 3000;

async function ensureRepo(dir: string, files: number): Promise<void> {
  const m = readMarker(dir);
  if (m?.complete && m.version === GENERATOR_VERSION && m.files === files && m.seed === "1") return;
  console.error(`generating ${files} files into ${dir} ...`);
  await generateRepo({ out: dir, files, seed: "1", force: true, log: (x) => console.error(`  ${x}`) });
}

function git(cwd: string, args: string[], env: Record<string, string> = {}, input?: string): string {
  const r = Bun.spawnSync(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdin: input === undefined ? "ignore" : new Blob([input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A commit beside HEAD that differs from it in 300 files, made from a temporary index (nothing else touched). */
function olderCommit(dir: string): string {
  const scratch = mkdtempSync(join(tmpdir(), "wsbench-changes-"));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, "index") };
    git(dir, ["read-tree", "HEAD"], env);
    const files = git(dir, ["ls-files", "-z"], env).split("\0").filter((f) => f !== "");
    const blob = git(dir, ["hash-object", "-w", "--stdin"], {}, "an older version\n").trim();
    const step = Math.floor(files.length / 260);
    const changed = files.filter((_, i) => i % step === 0).slice(0, 250);
    const info = changed.slice(0, 200).map((f) => `100644 ${blob}\t${f}`);
    const added = Array.from({ length: 50 }, (_, i) => `100644 ${blob}\tbench-older/only-in-older-${i}.txt`);
    git(dir, ["update-index", "--index-info"], env, `${[...info, ...added].join("\n")}\n`);
    git(dir, ["update-index", "--force-remove", "-z", "--stdin"], env, `${changed.slice(200).join("\0")}\0`);
    const tree = git(dir, ["write-tree"], env).trim();
    const commit = git(dir, ["commit-tree", tree, "-m", "older"]).trim();
    git(dir, ["update-ref", OLDER_REF, commit]);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The paths of `snapshot changes` output ("<status> <path>" lines) and of `git diff --name-status` output. */
const worksnapPaths = (out: string) => out.split("\n").filter(Boolean).map((l) => l.replace(/^\S+\s+/, "")).sort();
const gitPaths = (out: string) => out.split("\n").filter(Boolean).map((l) => l.split("\t").slice(1).join("\t")).sort();

function run(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** worksnap names what git names, and the untracked files besides. */
function checkSame(bin: string, dir: string, from: string, scope: string[], untracked: string[]): number {
  const ours = worksnapPaths(run([bin, "snapshot", "changes", from, "worktree", ...scope], dir));
  const theirs = gitPaths(run(["git", "diff", from, "--name-status", "--no-renames", "--", ...scope], dir));
  const inScope = untracked.filter((u) => scope.length === 0 || scope.some((s) => u.startsWith(`${s}/`)));
  const expected = [...theirs, ...inScope].sort();
  if (JSON.stringify(ours) !== JSON.stringify(expected)) {
    throw new Error(`${bin} snapshot changes ${from} worktree ${scope.join(" ")}: ${ours.length} paths, git and the untracked files ${expected.length}`);
  }
  return ours.length;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const small = args.includes("--small");
  const runs = Number(argValue(args, "--runs") ?? 7);
  const baseline = argValue(args, "--baseline");
  const dir = resolve(argValue(args, "--dir") ?? (small ? "/tmp/wsbench-small" : "/tmp/wsbench-large"));
  if (!existsSync(BINARY)) throw new Error("dist/worksnap is missing: npm run build");
  const before = machineLine();
  await ensureRepo(dir, small ? 3_000 : 100_000);
  const older = olderCommit(dir);
  try {
    const top = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith(".")).map((d) => d.name).sort()[0] as string;
    const untracked = run(["git", "ls-files", "-z", "--others", "--exclude-standard"], dir).split("\0").filter(Boolean);
    const cases = [
      { name: "HEAD", from: "HEAD", scope: [] as string[] },
      { name: "older commit", from: older, scope: [] as string[] },
      { name: `HEAD, scoped to ${top}/`, from: "HEAD", scope: [top] },
    ];
    const counts = cases.map((c) => checkSame(BINARY, dir, c.from, c.scope, untracked));
    const contenders: Contender[] = [{ name: "git status --porcelain", cmd: ["git", "status", "--porcelain=v1", "-z"], opts: { cwd: dir } }];
    for (const c of cases) {
      contenders.push({ name: `${c.name}: git diff --name-status (anchor)`, cmd: ["git", "diff", c.from, "--name-status", "--", ...c.scope], opts: { cwd: dir } });
      contenders.push({ name: `${c.name}: worksnap snapshot changes`, cmd: [BINARY, "snapshot", "changes", c.from, "worktree", ...c.scope], opts: { cwd: dir } });
      if (baseline) contenders.push({ name: `${c.name}: baseline`, cmd: [baseline, "snapshot", "changes", c.from, "worktree", ...c.scope], opts: { cwd: dir } });
    }
    const timings = await timeRounds(contenders, { runs, warmup: 1, onRun: (n) => process.stderr.write(`\r${n.padEnd(60)}`) });
    process.stderr.write("\n");
    const ms = (name: string) => {
      const t = timings.get(name);
      if (!t || t instanceof Error) throw t ?? new Error(`${name}: no timing`);
      return median(t.ms);
    };
    const cliRows: string[][] = [["git status --porcelain", fmtMs(ms("git status --porcelain")), "", ""]];
    cases.forEach((c, i) => {
      const anchor = ms(`${c.name}: git diff --name-status (anchor)`);
      cliRows.push([`${c.name}: git diff --name-status (anchor)`, fmtMs(anchor), "1.00x", `${counts[i]}`]);
      cliRows.push([`${c.name}: worksnap snapshot changes`, fmtMs(ms(`${c.name}: worksnap snapshot changes`)), fmtRatio(ms(`${c.name}: worksnap snapshot changes`) / anchor), `${counts[i]}`]);
      if (baseline) cliRows.push([`${c.name}: baseline`, fmtMs(ms(`${c.name}: baseline`)), fmtRatio(ms(`${c.name}: baseline`) / anchor), ""]);
    });

    // in a server: the first call, then calls on an unchanged tree
    const server = await startServer(BINARY, ["serve", "--root", dir]);
    const serverRows: string[][] = [];
    try {
      for (const c of cases) {
        const call = async () => {
          const { ms: t, answer } = await server.call("snapshot_changes", { from: c.from, to: "worktree", ...(c.scope.length > 0 ? { paths: c.scope } : {}) });
          if (answer.isError) throw new Error(`snapshot_changes ${c.from}: ${JSON.stringify(answer).slice(0, 300)}`);
          return t;
        };
        const first = await call();
        const early: number[] = [];
        for (let i = 0; i < runs; i++) early.push(await call());
        // the server's watch of the work tree (status-watch.ts) is in place once its first walk of the tree ends
        await Bun.sleep(SETTLE_MS);
        const settled: number[] = [];
        for (let i = 0; i < runs; i++) settled.push(await call());
        const anchor = ms(`${c.name}: git diff --name-status (anchor)`);
        serverRows.push([`${c.name}: snapshot_changes, first call`, fmtMs(first), fmtRatio(first / anchor)]);
        serverRows.push([`${c.name}: snapshot_changes, the next ${runs} calls`, fmtMs(median(early)), fmtRatio(median(early) / anchor)]);
        serverRows.push([`${c.name}: snapshot_changes, after a ${SETTLE_MS / 1000} s pause`, fmtMs(median(settled)), fmtRatio(median(settled) / anchor)]);
      }
    } finally {
      await server.close();
    }
    console.log(
      [
        `changes bench on ${dir}; ${runs} rounds; ${before} (start), ${machineLine()} (end); ${loadLine()}`,
        "",
        markdownTable(["CLI (a process each)", "median", "vs git diff", "paths"], cliRows),
        "",
        markdownTable(["server (MCP client over stdio)", "median", "vs git diff"], serverRows),
      ].join("\n"),
    );
  } finally {
    git(dir, ["update-ref", "-d", OLDER_REF]);
  }
  return 0;
}

await runMain(main);
