/**
 * The task tools through the compiled binary and the MCP SDK's own Client,
 * on real projects made here: a TypeScript project checked with its own tsc
 * and bun test (failing, then passing, then from the cache), a project with
 * an import cycle, a directory that is no git repository; every tool in both
 * modes, every error code, a restore taken back with `worksnap history reject`.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ParsedWire, parseWire } from "../../src/ops/task/wire";
import { cli, mcpSession, type McpSession } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";
import { processRunning } from "../helpers/process";
import { treeText } from "../helpers/workspace";

const ROOT = join(import.meta.dir, "..", "..");
const TASK_TOOLS = ["snap", "check", "snap_end", "snap_learn", "snap_violation", "snap_fix", "snap_help"];

interface Wire extends ParsedWire {
  text: string;
  isError: boolean;
}

/** Calls a task tool: one text content, no structuredContent; the text parses as a wire response. */
async function wire(s: McpSession, name: string, args: Record<string, unknown>): Promise<Wire> {
  const r: any = await s.raw(name, args);
  expect(r.structuredContent).toBeUndefined();
  expect(r.content).toHaveLength(1);
  const text = r.content[0].text as string;
  const parsed = parseWire(text);
  expect(parsed.compact).toBe(args.compact === true);
  expect(parsed.summary.length).toBeGreaterThan(10);
  return { ...parsed, text, isError: r.isError === true };
}

async function wireError(s: McpSession, name: string, args: Record<string, unknown>): Promise<Wire> {
  const w = await wire(s, name, args);
  expect(w.isError).toBe(true);
  expect(w.type).toBe("!");
  return w;
}

/** A TypeScript project using the repository's own typescript and bun (linked, as an installed node_modules would be). */
function tsProject(repo: TmpRepo): void {
  repo.write(".gitignore", "node_modules\n");
  repo.write(
    "tsconfig.json",
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "bundler", skipLibCheck: true, types: [] }, include: ["src"], exclude: ["src/**/*.test.ts"] }),
  );
  repo.write("package.json", JSON.stringify({ name: "demo", private: true, scripts: { typecheck: "tsc --noEmit -p tsconfig.json", test: "bun test" } }));
  repo.write("src/math.ts", "export function add(a: number, b: number): number {\n  return a + b;\n}\n");
  repo.write("src/math.test.ts", 'import { expect, test } from "bun:test";\nimport { add } from "./math";\n\ntest("adds", () => {\n  expect(add(2, 2)).toBe(4);\n});\n');
  repo.write("src/app.ts", 'import { add } from "./math";\n\nexport const total = add(1, 2);\n');
  mkdirSync(join(repo.root, "node_modules", ".bin"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "typescript"), join(repo.root, "node_modules", "typescript"));
  symlinkSync(join(ROOT, "node_modules", "typescript", "bin", "tsc"), join(repo.root, "node_modules", ".bin", "tsc"));
  symlinkSync(join(ROOT, "node_modules", ".bin", "bun"), join(repo.root, "node_modules", ".bin", "bun"));
  repo.commit("project");
}

describe("task tools end to end", () => {
  test("tools/list: the seven tools with the spec's names, no output schema (the wire text is the answer)", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const tools = (await s.client.listTools()).tools.filter((t) => TASK_TOOLS.includes(t.name));
    expect(tools.map((t) => t.name)).toEqual(TASK_TOOLS);
    for (const t of tools) expect(t.outputSchema).toBeUndefined();
    await using dotted = await mcpSession(repo.root, ["--tool-names", "dotted"]);
    const names = (await dotted.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(TASK_TOOLS));
    // `serve --text json` gives JSON text for structured answers; a task tool has none: its text stays the wire response.
    await using json = await mcpSession(repo.root, ["--text", "json"]);
    const w = await wire(json, "snap", { mode: "start", task: "t" });
    expect(w.fields.id).toBe("task_1");
  });

  test("a TypeScript project: start, break it, check with the real tsc and bun test, fix it, check again (then from the cache), end", async () => {
    await using repo = await tmpRepo();
    tsProject(repo);
    await using s = await mcpSession(repo.root);

    const start = await wire(s, "snap", { mode: "start", task: "add subtraction", files: ["src/math.ts"], keywords: ["math"] });
    expect(start.type).toBe("S");
    expect(start.fields).toMatchObject({ id: "task_1", risk: "L", prot: "100", dirty: "0", status: "created" });
    const snap = start.fields.snap as string;
    expect(snap).toMatch(/^[0-9a-f]{12}$/);
    expect(start.summary).toContain("task_1");

    // A type error and a failing test.
    repo.write("src/math.ts", "export function add(a: number, b: number): number {\n  return a - b;\n}\n\nexport function sub(a: number, b: number): string {\n  return a - b;\n}\n");
    const broken = await wire(s, "check", { mode: "full", taskId: "task_1" });
    expect(broken.fields).toMatchObject({ status: "✗", ts: "✗", lint: "⏭️", tests: "✗" });
    expect(broken.fields.issues).toContain("src/math.ts:6");
    expect(broken.fields.issues).toContain("src/math.test.ts:5");
    expect(Number.parseInt(broken.fields.err as string, 10)).toBeGreaterThanOrEqual(2);
    expect(broken.summary).toContain("TS2322");
    expect(broken.summary).toContain(`HEAD ${repo.git("rev-parse", "HEAD").trim().slice(0, 12)}`);

    const quick = await wire(s, "check", { mode: "quick", compact: true });
    expect(quick.fields.status).toBe("✓"); // it parses; quick runs no project tool

    repo.write("src/math.ts", "export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function sub(a: number, b: number): number {\n  return a - b;\n}\n");
    const fixed = await wire(s, "check", { mode: "full" });
    expect(fixed.fields).toMatchObject({ status: "✓", err: "0E", ts: "✓", tests: "✓", issues: "" });
    expect(fixed.summary).not.toContain("cached");
    const again = await wire(s, "snap", { mode: "check", compact: true });
    expect(again.fields).toMatchObject({ status: "✓", ts: "✓", tests: "✓" });
    expect(again.summary).toContain("cached");

    const impact = await wire(s, "check", { mode: "impact" });
    expect(impact.fields.issues).toBe("src/app.ts,src/math.test.ts");
    expect(impact.summary).toContain("tests: src/math.test.ts");

    const ctx = await wire(s, "snap", { mode: "context" });
    expect(ctx.type).toBe("X");
    expect(ctx.fields).toMatchObject({ prot: "100", dirty: "1" });
    expect(ctx.summary).toContain("src/math.ts");

    const end = await wire(s, "snap_end", { taskId: "task_1", outcome: "completed", learnings: ["sub returns a number"], survey: { patterns_used: 0, pitfalls_avoided: 1, helpfulness: 4, unhelpful_count: 0 } });
    expect(end.type).toBe("E");
    expect(end.fields).toMatchObject({ status: "OK", learn: "1L", files: "1F", lines: "+4-0", summary: "add subtraction" });
    expect(end.rest).toEqual(['{"patterns_used":0,"pitfalls_avoided":1,"helpfulness":4,"unhelpful_count":0}']);
  }, 240_000);

  test("the committed package.json decides what check runs: an agent's edit to it is not run", async () => {
    await using repo = await tmpRepo();
    repo.write("package.json", JSON.stringify({ scripts: { test: "echo all good" } }));
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    await wire(s, "snap", { mode: "start", task: "t" });
    const marker = join(repo.root, "..", `pwned-${Date.now()}`);
    await s.call("workspace_write_file", { mode: "worktree", path: "package.json", content: JSON.stringify({ scripts: { test: `touch ${marker}; exit 0` } }) });
    const r = await wire(s, "check", { mode: "test" });
    expect(r.fields.status).toBe("✓");
    expect(existsSync(marker)).toBe(false);
    expect(r.summary).toContain("Uncommitted edits to package.json not used");
  });

  test("an import cycle made by the task fails check circular", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", 'import { b } from "./b";\nexport const a = () => b;\n');
    repo.write("src/b.ts", "export const b = 1;\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    await wire(s, "snap", { mode: "start", task: "wire b to a", files: ["src/b.ts"] });
    repo.write("src/b.ts", 'import { a } from "./a";\nexport const b = 1;\nexport const c = a;\n');
    const r = await wire(s, "check", { mode: "circular" });
    expect(r.fields).toMatchObject({ status: "✗", err: "1E", issues: "src/b.ts" });
    expect(r.summary).toContain("import cycle src/b.ts > src/a.ts > src/b.ts");
    const compact = await wire(s, "check", { mode: "all", compact: true });
    expect(compact.fields.status).toBe("✗");
  });

  test("outside git: the whole tree is the snapshot; changes, restore and end work without git", async () => {
    await using dir = tmpDir();
    writeFileSync(join(dir.path, "notes.md"), "# notes\n");
    writeFileSync(join(dir.path, "calc.py"), "def add(a, b):\n    return a + b\n");
    await using s = await mcpSession(dir.path);
    const start = await wire(s, "snap", { mode: "start", task: "edit notes", files: ["notes.md", "todo.md"] });
    expect(start.fields).toMatchObject({ id: "task_1", prot: "50", dirty: "0", status: "created" });
    expect(start.summary).toContain("No git");
    const before = treeText(dir.path);
    writeFileSync(join(dir.path, "notes.md"), "# notes\nmore\n");
    writeFileSync(join(dir.path, "todo.md"), "- [ ] one\n");
    rmSync(join(dir.path, "calc.py"));
    const diff = await wire(s, "snap_fix", { action: "diff", id: start.fields.snap });
    expect(diff.fields).toMatchObject({ from: start.fields.snap, to: "worktree", added: "+1", removed: "-1", changed: "~1" });
    const dry = await wire(s, "snap_fix", { action: "restore", id: start.fields.snap, dryRun: true });
    expect(dry.fields).toMatchObject({ status: "DRYRUN", files: "3" });
    expect(dry.rest).toEqual(["calc.py", "notes.md", "todo.md"]);
    const restored = await wire(s, "snap_fix", { action: "restore", id: start.fields.snap });
    expect(restored.fields).toMatchObject({ status: "OK", files: "3" });
    expect(treeText(dir.path)).toEqual(before);
    const end = await wire(s, "snap_end", { taskId: "task_1", compact: true });
    expect(end.fields).toMatchObject({ status: "OK", files: "0F", lines: "+0-0" });
    // The next task counts what changed since this one's snapshot.
    writeFileSync(join(dir.path, "notes.md"), "# changed again\n");
    const next = await wire(s, "snap", { mode: "start", task: "second" });
    expect(next.fields).toMatchObject({ id: "task_2", dirty: "1" });
  });

  test("a restore is recorded in the edit history and taken back with `worksnap history reject`", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "original a\n");
    repo.write("src/b.ts", "original b\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const start = await wire(s, "snap", { mode: "start", task: "risky change", files: ["src/a.ts"] });
    repo.write("src/a.ts", "broken a\n");
    repo.write("src/c.ts", "new c\n");
    rmSync(join(repo.root, "src/b.ts"));
    const broken = treeText(repo.root);
    const restored = await wire(s, "snap_fix", { action: "restore", id: start.fields.snap });
    expect(restored.fields).toMatchObject({ status: "OK", files: "3" });
    expect(restored.rest).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"]);
    expect(readFileSync(join(repo.root, "src/a.ts"), "utf8")).toBe("original a\n");
    expect(existsSync(join(repo.root, "src/c.ts"))).toBe(false);
    const conv = /reject --conv (conv_\d+_[0-9a-f]+)/.exec(restored.summary)?.[1];
    expect(conv).toBeDefined();
    const status = cli(["history", "status", "--conv", conv!, "--json", "--root", repo.root]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("snap_fix");
    const reject = cli(["history", "reject", "--conv", conv!, "--root", repo.root]);
    expect(reject.code).toBe(0);
    expect(treeText(repo.root)).toEqual(broken);
  });

  test("learnings and violations across tools: thresholds, then the next task start shows them", async () => {
    await using repo = await tmpRepo();
    repo.write("src/auth.ts", "export const x = 1;\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const l = await wire(s, "snap_learn", { trigger: "auth token refresh", action: "refresh before expiry, not after", type: "pitfall" });
    expect(l.type).toBe("L");
    expect(l.fields).toMatchObject({ status: "OK", type: "pitfall" });
    expect(l.fields.id).toMatch(/^learn_[0-9a-f]{10}$/);
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const v = await wire(s, "snap_violation", { type: "silent_catch", file: "src/auth.ts", description: "catch swallowed the error", prevention: "log in catch blocks" });
      seen.push(`${v.fields.count}:${v.fields.promote}:${v.fields.auto}`);
    }
    expect(seen).toEqual(["1:NO:NO", "2:NO:NO", "3:PROMOTED:NO", "4:PATTERN:NO", "5:PATTERN:YES"]);
    const start = await wire(s, "snap", { mode: "start", task: "fix token refresh", files: ["src/auth.ts"], keywords: ["auth"] });
    expect(start.fields.risk).toBe("M");
    // The pattern was reported on the task's file (weighs more than shared words), the learning shares "auth".
    expect(start.fields.learn).toBe("pattern:silent_catch;auth token refresh");
  });

  test("every error code, labeled and compact; snap_help answers plain text", async () => {
    await using repo = await tmpRepo();
    repo.write("worksnap.json", JSON.stringify({ checks: { test: { run: "sleep 300", timeout: 1 }, lint: "definitely-not-installed-tool --strict" } }));
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const code = async (name: string, args: Record<string, unknown>) => (await wireError(s, name, args)).fields.code;
    expect(await code("check", { mode: "quick" })).toBe("NO_TASK");
    expect(await code("check", { mode: "quick", taskId: "task_12", compact: true })).toBe("NO_TASK");
    expect(await code("snap_end", { taskId: "nope" })).toBe("NO_TASK");
    expect(await code("snap_fix", { action: "restore", id: "0123456789abcdef" })).toBe("SNAPSHOT_NOT_FOUND");
    expect(await code("snap_fix", { action: "diff", id: "0123456789abcdef" })).toBe("SNAPSHOT_NOT_FOUND");
    expect(await code("snap", { mode: "begin" })).toBe("INVALID_MODE");
    expect(await code("check", { mode: "fast", compact: true })).toBe("INVALID_MODE");
    expect(await code("snap_fix", { action: "undo" })).toBe("INVALID_MODE");
    expect(await code("snap_help", { topic: "everything" })).toBe("INVALID_MODE");
    expect(await code("snap", { mode: "start" })).toBe("VALIDATION_FAILED");
    expect(await code("snap", { mode: "start", task: "t", extra: 1 })).toBe("VALIDATION_FAILED");
    expect(await code("snap_learn", { trigger: "t", action: "a", type: "insight" })).toBe("VALIDATION_FAILED");
    expect(await code("snap_violation", { type: "x" })).toBe("VALIDATION_FAILED");
    expect(await code("snap_fix", { action: "restore" })).toBe("VALIDATION_FAILED");
    expect(await code("snap", { mode: "start", task: "t", files: [".git/config"] })).toBe("PERMISSION_DENIED");

    const started = await wire(s, "snap", { mode: "start", task: "t" });
    expect(await code("check", { mode: "quick", files: ["src/missing.ts"] })).toBe("NOT_FOUND");
    expect(await code("check", { mode: "test" })).toBe("CHECK_TIMEOUT");
    expect(await code("check", { mode: "full" })).toBe("CHECK_COMMAND_NOT_FOUND");
    await wire(s, "snap_end", { taskId: started.fields.id });
    const ended = await wireError(s, "snap_end", { taskId: started.fields.id, compact: true });
    expect(ended.fields.code).toBe("TASK_ENDED");
    expect(ended.text.startsWith("🧢|!|TASK_ENDED|")).toBe(true);

    repo.write("worksnap.json", JSON.stringify({ checks: { tests: "x" } }));
    repo.commit("bad config");
    await wire(s, "snap", { mode: "start", task: "t2" });
    expect(await code("check", { mode: "full" })).toBe("CONFIG_INVALID");

    for (const topic of ["wire", "modes", "thresholds", "tools", "all"]) {
      const r: any = await s.raw("snap_help", { topic });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toBeUndefined();
      expect(r.content[0].text.startsWith("#")).toBe(true);
      expect(r.content[0].text).not.toContain("🧢|H");
    }
    const help: any = await s.raw("snap_help", { topic: "wire" });
    for (const type of ["S:", "C:", "X:", "E:", "R (list):", "R (restore):", "D:", "L:", "V:", "!:"]) expect(help.content[0].text).toContain(type);
  });

  test("a long check reports progress, and a cancelled one kills its process group", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const pidFile = join(dir.path, "pid");
    repo.write("worksnap.json", JSON.stringify({ checks: { test: `sleep 300 & echo $! > ${pidFile}; sleep 3; exit 0` } }));
    repo.commit();
    await using s = await mcpSession(repo.root);
    await wire(s, "snap", { mode: "start", task: "t" });
    const progress: string[] = [];
    const r: any = await s.client.callTool({ name: "check", arguments: { mode: "test" } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ""),
      timeout: 120_000,
    });
    expect(parseWire(r.content[0].text).fields.status).toBe("✓");
    expect(progress.some((m) => m.includes("test"))).toBe(true);
    // The background `sleep 300` the check left was killed with its group.
    const bg = Number(readFileSync(pidFile, "utf8"));
    await Bun.sleep(200);
    expect(processRunning(bg)).toBe(false);

    repo.write("worksnap.json", JSON.stringify({ checks: { test: `sleep 300 & echo $! > ${pidFile}; sleep 200` } }));
    repo.commit("slow");
    rmSync(pidFile);
    const ac = new AbortController();
    const call = s.client.callTool({ name: "check", arguments: { mode: "test" } }, undefined, { signal: ac.signal, timeout: 120_000 }).catch((e) => e);
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await Bun.sleep(100);
    ac.abort();
    expect(await call).toBeInstanceOf(Error);
    const pid = Number(readFileSync(pidFile, "utf8"));
    for (let i = 0; i < 50 && processRunning(pid); i++) await Bun.sleep(100);
    expect(processRunning(pid)).toBe(false);
  }, 60_000);
});
