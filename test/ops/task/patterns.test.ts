import { describe, expect, test } from "bun:test";
import { runCheck } from "../../../src/ops/task/check";
import { reportViolation } from "../../../src/ops/task/learn";
import { startTask } from "../../../src/ops/task/start";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

const found = (r: Awaited<ReturnType<typeof runCheck>>) => r.findings.map((f) => `${f.severity} ${f.rule} ${f.path}:${f.line}`);

describe("check patterns and quick", () => {
  test("detectors look at the lines the task added; conflict markers at the whole file", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "export function f() {\n  console.log('old debugging, not the task');\n  return 1;\n}\n");
    repo.write("src/b.test.ts", 'import { test } from "bun:test";\ntest("x", () => {});\n');
    repo.write("notes.md", "plain\n");
    repo.commit();
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    repo.write("src/a.ts", "export function f() {\n  console.log('old debugging, not the task');\n  try { g(); } catch (e) {}\n  debugger;\n  return 1;\n}\n");
    repo.write("src/b.test.ts", 'import { test } from "bun:test";\ntest.only("x", () => {});\n');
    repo.write("notes.md", "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n");
    repo.write("config.ts", 'export const api_key = "9f8e7d6c5b4a39281706f5e4";\nexport const password = "changeme-later-please";\nconst aws = "AKIAABCDEFGHIJKLMNOP";\n');
    const r = await runCheck(ws, { mode: "patterns" });
    expect(found(r)).toEqual([
      "error secret config.ts:1",
      "error secret config.ts:3",
      "error conflict_marker notes.md:1",
      "warning empty_catch src/a.ts:3",
      "warning debug_statement src/a.ts:4",
      "error focused_test src/b.test.ts:2",
    ]);
    for (const f of r.findings) expect(f.message).not.toContain("9f8e7d6c5b4a39281706f5e4");
    expect(r.status).toBe("fail");
    expect(r.errors).toBe(4);
  });

  test("quick adds parse checks (TS/JS, JSON, JSONC tsconfig, YAML, TOML) and needs no project tool", async () => {
    await using repo = await tmpRepo();
    repo.write("package.json", JSON.stringify({ scripts: { test: "exit 1" } }));
    repo.commit();
    using ws = wsOf(repo);
    await startTask(ws, { task: "t" });
    repo.write("src/ok.ts", "export const x: number = 1;\n");
    repo.write("src/broken.ts", "export function (\n");
    repo.write("data.json", '{"a": 1,}');
    repo.write("tsconfig.json", '{ // comments are fine here\n "compilerOptions": {},\n}');
    repo.write("ci.yml", "a: [1, 2\n");
    repo.write("Cargo.toml", "[package\nname = 1\n");
    const r = await runCheck(ws, { mode: "quick" });
    expect(found(r)).toEqual(["error parse Cargo.toml:0", "error parse ci.yml:0", "error parse data.json:0", "error parse src/broken.ts:1"]);
    expect(r.commands).toEqual([]);
    expect(r.subsystems).toEqual({ ts: "skipped", lint: "skipped", tests: "skipped" });
  });

  test("the repository's own rules (committed worksnap.json patterns) and promoted violations", async () => {
    await using repo = await tmpRepo();
    repo.write("worksnap.json", JSON.stringify({ patterns: { no_fixme: { regex: "FIXME", files: "src/**", severity: "error", message: "resolve FIXMEs" } } }));
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.write("src/auth.ts", "export const b = 1;\n");
    repo.commit();
    using ws = wsOf(repo);
    for (let i = 0; i < 3; i++) await reportViolation(ws, { type: "silent_catch", description: "swallowed", file: "src/a.ts" });
    for (let i = 0; i < 3; i++) await reportViolation(ws, { type: "missing_auth_check", description: "no guard", file: "src/auth.ts", prevention: "call requireUser() first" });
    await startTask(ws, { task: "t" });
    repo.write("src/a.ts", "export const a = 1; // FIXME\ntry { x(); } catch {}\n");
    repo.write("src/auth.ts", "export const b = 2;\n");
    repo.write("docs/FIXME.md", "FIXME outside the rule's files\n");
    const r = await runCheck(ws, { mode: "patterns" });
    expect(r.findings.map((f) => `${f.severity} ${f.rule} ${f.path}:${f.line} ${f.message}`)).toEqual([
      "error no_fixme src/a.ts:1 resolve FIXMEs",
      // silent_catch is a pattern now: the empty_catch detector that covers it reports errors.
      "error empty_catch src/a.ts:2 empty catch block swallows the error",
      // nothing detects missing_auth_check: the file it was reported on gets its prevention as a reminder.
      "warning missing_auth_check src/auth.ts:0 pattern missing_auth_check (reported 3 times on this file and others): call requireUser() first",
    ]);
  });
});
