import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathResolver } from "../../../src/ops/task/check-run";
import { parseOutput } from "../../../src/ops/task/output-parsers";
import { tmpDir } from "../../helpers/tmp-repo";

/** Whether a tool is installed and starts (a rustup shim without a toolchain is on PATH and fails). */
function runs(cmd: string[]): boolean {
  try {
    return Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

const ROOT = join(import.meta.dir, "..", "..", "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");

function run(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, env: { ...process.env, NO_COLOR: "1", CI: "1", FORCE_COLOR: "0" }, stdout: "pipe", stderr: "pipe" });
  return r.stdout.toString() + r.stderr.toString();
}

function files(root: string, map: Record<string, string>): void {
  for (const [p, text] of Object.entries(map)) {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

const located = (out: ReturnType<typeof parseOutput>) => out.diagnostics.map((d) => `${d.severity} ${d.path}:${d.line} ${d.message}`);

describe("diagnostics from real tool output", () => {
  test("tsc (the repository's own TypeScript)", async () => {
    await using dir = tmpDir();
    files(dir.path, {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, include: ["src"] }),
      "src/a.ts": "export const n: number = 1;\nexport const s: string = n;\n",
      "src/b.ts": "import { nope } from './a';\nexport const x = nope;\n",
    });
    const out = run([join(ROOT, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--pretty", "false", "-p", "tsconfig.json"], dir.path);
    const parsed = parseOutput(out, pathResolver(dir.path));
    expect(located(parsed)).toEqual([
      "error src/a.ts:2 TS2322: Type 'number' is not assignable to type 'string'.",
      "error src/b.ts:1 TS2305: Module '\"./a\"' has no exported member 'nope'.",
    ]);
    // The pretty format, with its summary line.
    const pretty = parseOutput(run([join(ROOT, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--pretty", "true", "-p", "tsconfig.json"], dir.path), pathResolver(dir.path));
    expect(pretty.diagnostics.map((d) => `${d.path}:${d.line}:${d.col}`)).toEqual(["src/a.ts:2:14", "src/b.ts:1:10"]);
    expect(pretty.summaryErrors).toBe(2);
  }, 60_000);

  test("bun test: the failing test's name and the test file's line", async () => {
    await using dir = tmpDir();
    files(dir.path, {
      "math.ts": "export const add = (a: number, b: number) => a - b;\n",
      "math.test.ts": 'import { expect, test } from "bun:test";\nimport { add } from "./math";\ntest("adds", () => {\n  expect(add(2, 2)).toBe(4);\n});\ntest("passes", () => {\n  expect(1).toBe(1);\n});\n',
    });
    const parsed = parseOutput(run([BUN, "test"], dir.path), pathResolver(dir.path));
    expect(located(parsed)).toEqual(["error math.test.ts:4 test failed: adds: expect(received).toBe(expected)"]);
    expect(parsed.failedTests).toBe(1);
    expect(parsed.summaryErrors).toBe(1);
  }, 60_000);

  test.if(runs(["cargo", "--version"]))("cargo check (short) and cargo test", async () => {
    await using dir = tmpDir();
    files(dir.path, {
      "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
      "src/main.rs": 'fn main() {\n    let x: i32 = "s";\n}\n',
    });
    const check = parseOutput(run(["cargo", "check", "--offline", "--message-format", "short"], dir.path), pathResolver(dir.path));
    expect(located(check)).toEqual(["error src/main.rs:2 E0308: mismatched types: expected `i32`, found `&str`"]);
    files(dir.path, { "src/main.rs": "fn main() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(1 + 1, 3);\n    }\n}\n" });
    const t = parseOutput(run(["cargo", "test", "--offline"], dir.path), pathResolver(dir.path));
    expect(t.summaryErrors).toBe(1);
    expect(t.diagnostics.some((d) => d.path === "src/main.rs" && d.line === 6)).toBe(true);
  }, 120_000);

  test.if(runs(["pytest", "--version"]))("pytest", async () => {
    await using dir = tmpDir();
    files(dir.path, { "pytest.ini": "[pytest]\n", "tests/test_a.py": "def test_ok():\n    assert 1 == 1\n\ndef test_bad():\n    x = 2\n    assert x == 3\n" });
    const parsed = parseOutput(run(["pytest", "-q", "-p", "no:cacheprovider"], dir.path), pathResolver(dir.path));
    expect(parsed.summaryErrors).toBe(1);
    expect(located(parsed)).toContain("error tests/test_a.py:6 AssertionError");
    expect(parsed.diagnostics.some((d) => d.message.startsWith("test failed: test_bad"))).toBe(true);
  }, 60_000);
});

describe("diagnostics from the formats of tools not installed here", () => {
  // Output as these tools print it (the shapes are stable across their releases).
  test("eslint stylish, go vet / go test, jest, vitest, gcc, mypy, ruff", async () => {
    await using dir = tmpDir();
    files(dir.path, { "src/a.js": "", "src/b.js": "", "pkg/x.go": "", "pkg/x_test.go": "", "lib/c.c": "", "app/m.py": "", "test/a.test.ts": "" });
    const out = [
      `${dir.path}/src/a.js`,
      "  1:7   error    'x' is assigned a value but never used  no-unused-vars",
      "  3:1   warning  Unexpected console statement            no-console",
      "",
      "✖ 2 problems (1 error, 1 warning)",
      "# example.com/m/pkg",
      "pkg/x.go:12:2: undefined: foo",
      "--- FAIL: TestAdd (0.00s)",
      // go test prints test files relative to their package directory: counted as a failed test, not located.
      "    x_test.go:9: got 1, want 2",
      "  ● math › adds",
      "    expect(received).toBe(expected)",
      "      at Object.<anonymous> (test/a.test.ts:5:21)",
      "lib/c.c:3:5: warning: unused variable 'y' [-Wunused-variable]",
      "lib/c.c:4:1: error: expected ';' before '}' token",
      "app/m.py:7: error: Incompatible return value type  [return-value]",
      "app/m.py:9:1: F401 [*] `os` imported but unused",
      "see https://example.com:443: for details",
      "node_modules/lib/index.js:1:1: error: not ours",
    ].join("\n");
    const parsed = parseOutput(out, pathResolver(dir.path));
    expect(located(parsed)).toEqual([
      "error src/a.js:1 no-unused-vars: 'x' is assigned a value but never used",
      "warning src/a.js:3 no-console: Unexpected console statement",
      "error pkg/x.go:12 undefined: foo",
      "error test/a.test.ts:5 test failed: math › adds",
      "warning lib/c.c:3 unused variable 'y' [-Wunused-variable]",
      "error lib/c.c:4 expected ';' before '}' token",
      "error app/m.py:7 Incompatible return value type  [return-value]",
      "error app/m.py:9 F401 [*] `os` imported but unused",
    ]);
    expect(parsed.summaryErrors).toBe(1);
    expect(parsed.summaryWarnings).toBe(1);
    expect(parsed.failedTests).toBe(2);
  });

  test("a vitest failure names its file by the ❯ pointer", async () => {
    await using dir = tmpDir();
    files(dir.path, { "src/a.test.ts": "" });
    const out = [" FAIL  src/a.test.ts > math > adds", "AssertionError: expected 0 to be 4", " ❯ src/a.test.ts:4:21", " Test Files  1 failed (1)", "      Tests  1 failed (1)"].join("\n");
    const parsed = parseOutput(out, pathResolver(dir.path));
    expect(located(parsed)).toEqual(["error src/a.test.ts:4 test failed: src/a.test.ts > math > adds"]);
    expect(parsed.summaryErrors).toBe(1);
  });

  test("paths: absolute inside the root become repo paths; outside the root, missing files and symlinks are no location", async () => {
    await using dir = tmpDir();
    files(dir.path, { "src/a.ts": "" });
    symlinkSync("/etc/hostname", join(dir.path, "link.ts"));
    const resolve = pathResolver(dir.path);
    expect(resolve(`${dir.path}/src/a.ts`)).toBe("src/a.ts");
    expect(resolve(`file://${dir.path}/src/a.ts`)).toBe("src/a.ts");
    expect(resolve("./src/a.ts")).toBe("src/a.ts");
    expect(resolve("/etc/hostname")).toBeNull();
    expect(resolve("../x.ts")).toBeNull();
    expect(resolve("src/missing.ts")).toBeNull();
    expect(resolve("link.ts")).toBeNull();
  });
});
