/**
 * The regex child process must work from a compiled, minified binary, where
 * our sources are not on disk: the child is the binary itself (BUN_BE_BUN=1)
 * running the stringified scanner.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./fixtures";

const BUN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun");
const GREP = join(import.meta.dir, "..", "..", "..", "src", "ops", "grep", "index.ts");

test("a compiled binary runs sandboxed regexes and survives killing a runaway one", async () => {
  using tmp = tempDir("grep-compiled");
  const entry = join(tmp.dir, "entry.ts");
  writeFileSync(
    entry,
    `import { grep } from ${JSON.stringify(GREP)};
const enc = (s: string) => new TextEncoder().encode(s);
const files = { "a.ts": "function handleRequest(x) {}\\n", "min.js": "a".repeat(30000) + "!=\\n" };
const cands = Object.entries(files).map(([p, t]) => ({ path: p as any, size: t.length, open: async () => enc(t) }));
const quick = await grep(cands, { pattern: "handle\\\\w+\\\\(", queryKey: "" });
const stuck = await grep(cands, { pattern: "\\\\w*\\\\w*\\\\w*\\\\w*=", queryKey: "", timeBudgetMs: 500 });
console.log(JSON.stringify({ quick: quick.matches.map((m) => m.line + ":" + m.col), timedOut: stuck.timed_out }));
`,
  );
  const bin = join(tmp.dir, "grep-bin");
  const build = Bun.spawnSync([BUN, "build", "--compile", "--minify", entry, "--outfile", bin], { stderr: "pipe", stdout: "pipe" });
  expect(build.exitCode, build.stderr.toString()).toBe(0);
  const run = Bun.spawnSync([bin], { stdout: "pipe", stderr: "pipe", cwd: tmp.dir, timeout: 30_000 });
  expect(run.stderr.toString()).toBe("");
  expect(JSON.parse(run.stdout.toString())).toEqual({ quick: ["1:10"], timedOut: true });
}, 60_000);
