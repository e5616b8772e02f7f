// Benchmark: the task layer.
//
//   npm run build && node_modules/.bin/bun bench/task.ts [--dir DIR] [--small] [--runs N] [--calls N]
//
// 1. `snap start` on the generated repository (bench/gen-repo.ts; the large one by default, left dirty as a working
//    session leaves it) against its anchor, a warm `snapshot_create` of the same files (the named files plus every
//    file git status names), through the same in-process ops a server runs, interleaved in rounds after a warm-up.
//    Target: at most 1.2x.
// 2. A cached `check` through the compiled server (the MCP SDK's client over stdio), on a TypeScript project made
//    here (the repository's own tsc and bun test) and on the small generated repository (3,000 files) with a
//    committed worksnap.json: the first run, then N calls answered from the cache. Anchor: `git status` on the same
//    tree, which a check must at least match. Target: under 50 ms.
// 3. The size of every wire response of a typical session (bytes of content[0].text). Target: typical under 300 bytes.

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readGitState } from "../src/repo/fingerprint";
import { createSnapshot } from "../src/ops/snapshot/create";
import { statusPaths } from "../src/ops/task/git-status";
import { startTask } from "../src/ops/task/start";
import { closeWorkspace, openWorkspace } from "../src/ops/workspace";
import { generateRepo, readMarker, GENERATOR_VERSION } from "./gen-repo.ts";
import { argValue, fmtMs, fmtRatio, machineLine, markdownTable, median, runMain, timeCommand } from "./lib.ts";
import { startServer } from "./mcp-server.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist", "worksnap");

async function ensureRepo(dir: string, files: number): Promise<void> {
  const m = readMarker(dir);
  if (m?.complete && m.version === GENERATOR_VERSION && m.files === files && m.seed === "1") return;
  console.error(`generating ${files} files into ${dir} ...`);
  await generateRepo({ out: dir, files, seed: "1", force: true, log: (x) => console.error(`  ${x}`) });
}

function git(cwd: string, args: string[]): string {
  const r = Bun.spawnSync(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

// ---------------------------------------------------------------- 1. snap start vs snapshot_create

async function startVsCreate(dir: string, runs: number): Promise<string[][]> {
  const ws = openWorkspace(dir, { longLived: true });
  try {
    const tracked = git(dir, ["ls-files", "-z", "--", "*.ts"]).split("\0").filter(Boolean).slice(0, 5);
    const status = statusPaths((await readGitState(ws.repo)).status);
    const same = [...new Set([...tracked, ...status.present])];
    console.error(`snap start vs snapshot_create of ${same.length} paths (${tracked.length} named + ${status.present.length} dirty), ${runs} rounds`);
    const create = async () => createSnapshot(ws, { paths: same });
    const start = async (i: number) => startTask(ws, { task: `bench task ${i}`, files: tracked, keywords: ["bench"] });
    await create();
    await start(0);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 1; i <= runs; i++) {
      let t0 = performance.now();
      const c = await create();
      a.push(performance.now() - t0);
      t0 = performance.now();
      const s = await start(i);
      b.push(performance.now() - t0);
      if (s.task.snapshot.id !== c.snapshot_id) throw new Error("snap start captured another tree than snapshot_create");
    }
    return [
      ["snapshot_create, warm (anchor)", fmtMs(median(a)), fmtMs(Math.min(...a)), fmtMs(Math.max(...a)), "1.00x"],
      ["snap start", fmtMs(median(b)), fmtMs(Math.min(...b)), fmtMs(Math.max(...b)), fmtRatio(median(b) / median(a))],
    ];
  } finally {
    closeWorkspace(ws);
  }
}

// ---------------------------------------------------------------- 2. cached check through the server, 3. sizes

async function server(root: string) {
  const s = await startServer(BINARY, ["serve", "--root", root]);
  return {
    ...s,
    async call(name: string, args: Record<string, unknown>): Promise<{ text: string; ms: number }> {
      const { ms, answer } = await s.call(name, args);
      return { text: answer.content?.[0]?.text ?? "", ms };
    },
  };
}

function tsProject(dir: string): void {
  const w = (p: string, text: string) => {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), text);
  };
  git(dir, ["init", "-q", "-b", "main"]);
  w(".gitignore", "node_modules\n");
  w("tsconfig.json", JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "bundler", skipLibCheck: true, types: [] }, include: ["src"], exclude: ["src/**/*.test.ts"] }));
  w("package.json", JSON.stringify({ private: true, scripts: { typecheck: "tsc --noEmit -p tsconfig.json", test: "bun test" } }));
  for (let i = 0; i < 40; i++) w(`src/m${i}.ts`, `export function f${i}(a: number): number {\n  return a + ${i};\n}\n`);
  w("src/index.ts", Array.from({ length: 40 }, (_, i) => `export { f${i} } from "./m${i}";`).join("\n"));
  w("src/m.test.ts", 'import { expect, test } from "bun:test";\nimport { f1 } from "./index";\ntest("f1", () => expect(f1(1)).toBe(2));\n');
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "typescript"), join(dir, "node_modules", "typescript"));
  symlinkSync(join(ROOT, "node_modules", "typescript", "bin", "tsc"), join(dir, "node_modules", ".bin", "tsc"));
  symlinkSync(join(ROOT, "node_modules", ".bin", "bun"), join(dir, "node_modules", ".bin", "bun"));
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-qm", "project"]);
}

async function cachedCheck(name: string, root: string, calls: number, edit: () => void, sizes: Map<string, number[]>): Promise<string[][]> {
  const s = await server(root);
  const size = (label: string, text: string) => sizes.set(label, [...(sizes.get(label) ?? []), Buffer.byteLength(text)]);
  try {
    const start = await s.call("snap", { mode: "start", task: "bench: change one function", files: ["src/m1.ts"].filter((f) => existsSync(join(root, f))) });
    size("S (snap start)", start.text);
    edit();
    const first = await s.call("check", { mode: "full" });
    size("C (check full)", first.text);
    const full: number[] = [];
    const test: number[] = [];
    for (let i = 0; i < calls; i++) {
      const f = await s.call("check", { mode: "full" });
      if (!f.text.includes("cached")) throw new Error(`not answered from the cache: ${f.text}`);
      full.push(f.ms);
      test.push((await s.call("check", { mode: "test" })).ms);
    }
    size("C (check full, cached)", (await s.call("check", { mode: "full" })).text);
    size("C (check quick)", (await s.call("check", { mode: "quick" })).text);
    size("X (snap context)", (await s.call("snap", { mode: "context" })).text);
    size("L (snap_learn)", (await s.call("snap_learn", { trigger: "changing a function", action: "run check full before ending", type: "workflow" })).text);
    size("V (snap_violation)", (await s.call("snap_violation", { type: "silent_catch", file: "src/m1.ts", description: "swallowed an error" })).text);
    size("R (snap_fix list)", (await s.call("snap_fix", { action: "list" })).text);
    const snap = /snap:([0-9a-f]+)/.exec(start.text)?.[1] ?? "";
    size("D (snap_fix diff)", (await s.call("snap_fix", { action: "diff", id: snap })).text);
    size("R (snap_fix restore, dry run)", (await s.call("snap_fix", { action: "restore", id: snap, dryRun: true })).text);
    size("! (error)", (await s.call("check", { mode: "quick", taskId: "task_999" })).text);
    size("E (snap_end)", (await s.call("snap_end", { taskId: "task_1", learnings: ["check full is cached per tree"], survey: { helpfulness: 5 } })).text);
    const status = await timeCommand(["git", "status", "--porcelain=v1", "-z"], { cwd: root, runs: calls, warmup: 1 });
    const st = median(status.ms);
    return [
      [`${name}: git status (anchor)`, fmtMs(st), "1.00x"],
      [`${name}: first check full`, fmtMs(first.ms), fmtRatio(first.ms / st)],
      [`${name}: cached check full`, fmtMs(median(full)), fmtRatio(median(full) / st)],
      [`${name}: cached check test`, fmtMs(median(test)), fmtRatio(median(test) / st)],
    ];
  } finally {
    await s.close();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const small = args.includes("--small");
  const runs = Number(argValue(args, "--runs") ?? 5);
  const calls = Number(argValue(args, "--calls") ?? 15);
  const dir = resolve(argValue(args, "--dir") ?? (small ? "/tmp/wsbench-small" : "/tmp/wsbench-large"));
  if (!existsSync(BINARY)) throw new Error("dist/worksnap is missing: npm run build");
  const before = machineLine();
  await ensureRepo(dir, small ? 3_000 : 100_000);
  const startRows = await startVsCreate(dir, runs);

  const sizes = new Map<string, number[]>();
  const scratch = mkdtempSync(join(tmpdir(), "wsbench-task-"));
  const checkRows: string[][] = [];
  try {
    const ts = join(scratch, "ts-project");
    mkdirSync(ts);
    tsProject(ts);
    checkRows.push(...(await cachedCheck("TS project (42 files)", ts, calls, () => writeFileSync(join(ts, "src/m1.ts"), "export function f1(a: number): number {\n  return a + 1;\n}\n// edited\n"), sizes)));
    const gen = join(scratch, "generated-3k");
    await generateRepo({ out: gen, files: 3_000, seed: "1", force: true, log: () => undefined });
    writeFileSync(join(gen, "worksnap.json"), JSON.stringify({ checks: { lint: "true", test: "true" } }));
    git(gen, ["add", "worksnap.json"]);
    git(gen, ["commit", "-qm", "checks"]);
    checkRows.push(...(await cachedCheck("generated repo (3,000 files, 260 dirty)", gen, calls, () => writeFileSync(join(gen, "bench-edit.txt"), "edit\n"), new Map())));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const sizeRows = [...sizes.entries()].map(([k, v]) => [k, `${median(v)} B`, median(v) < 300 ? "yes" : "no"]);
  const out = [
    `task layer bench on ${dir}; ${before} (start), ${machineLine()} (end)`,
    "",
    markdownTable(["snap start vs warm snapshot_create (in process)", "median", "min", "max", "ratio"], startRows),
    "",
    markdownTable(["check through the compiled server", "median", "vs git status"], checkRows),
    "",
    markdownTable(["wire response (TS project session)", "bytes", "under 300"], sizeRows),
  ].join("\n");
  console.log(out);
  return 0;
}

await runMain(main);
