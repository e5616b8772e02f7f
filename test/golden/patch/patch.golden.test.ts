/**
 * Golden plans: the exact answer planPatch gives (changes, offsets, warnings,
 * rejects with their messages and excerpts) for representative patches. These
 * answers are what a model reads, so their wording is pinned here.
 * UPDATE_GOLDEN=1 rewrites the files.
 */
import { describe, test } from "bun:test";
import { planPatch } from "../../../src/ops/patch/plan";
import { expectGolden } from "../../helpers/golden";
import { file, memoryTarget, type Tree } from "../../ops/patch/fixtures";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");

const TREE: Tree = new Map([
  ["src/app.ts", file("import { a } from './a';\n\nexport function main() {\n  const x = a();\n  return x + 1;\n}\n")],
  ["src/list.txt", file(numbered(40))],
  ["docs/crlf.md", file("# Title\r\n\r\nSome text.\r\n")],
  ["bin/run", file("#!/bin/sh\necho run\n", "100755")],
  ["img.png", file(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]))],
]);

const CASES: Record<string, string> = {
  "modify-create-delete-rename": [
    "diff --git a/src/app.ts b/src/app.ts",
    "--- a/src/app.ts",
    "+++ b/src/app.ts",
    "@@ -3,4 +3,4 @@",
    " export function main() {",
    "   const x = a();",
    "-  return x + 1;",
    "+  return x + 2;",
    " }",
    "diff --git a/src/new.ts b/src/new.ts",
    "new file mode 100644",
    "--- /dev/null",
    "+++ b/src/new.ts",
    "@@ -0,0 +1 @@",
    "+export const n = 1;",
    "diff --git a/bin/run b/bin/run",
    "deleted file mode 100755",
    "--- a/bin/run",
    "+++ /dev/null",
    "@@ -1,2 +0,0 @@",
    "-#!/bin/sh",
    "-echo run",
    "diff --git a/docs/crlf.md b/docs/guide.md",
    "similarity index 80%",
    "rename from docs/crlf.md",
    "rename to docs/guide.md",
    "--- a/docs/crlf.md",
    "+++ b/docs/guide.md",
    "@@ -1,3 +1,3 @@",
    " # Title\r",
    " \r",
    "-Some text.\r",
    "+Other text.\r",
    "",
  ].join("\n"),
  "offsets-and-recount": [
    "--- a/src/list.txt",
    "+++ b/src/list.txt",
    "@@ -2,3 +2,3 @@",
    " line 9",
    "-line 10",
    "+LINE TEN",
    " line 11",
    "@@ -30,9 +30,9 @@",
    " line 20",
    "-line 21",
    "+LINE 21",
    " line 22",
    "",
  ].join("\n"),
  "context-mismatch": [
    "--- a/src/app.ts",
    "+++ b/src/app.ts",
    "@@ -3,4 +3,4 @@",
    " export function main() {",
    "   const y = a();",
    "-  return x + 1;",
    "+  return x + 2;",
    " }",
    "",
  ].join("\n"),
  "every-reject-reason": [
    "--- a/src/app.ts",
    "+++ b/src/app.ts",
    "@@ -1 +1 @@",
    "-import { b } from './b';",
    "+import { c } from './c';",
    "--- a/missing.ts",
    "+++ b/missing.ts",
    "@@ -1 +1 @@",
    "-x",
    "+y",
    "--- /dev/null",
    "+++ b/src/list.txt",
    "@@ -0,0 +1 @@",
    "+again",
    "diff --git a/img.png b/img.png",
    "index 1111111..2222222 100644",
    "Binary files a/img.png and b/img.png differ",
    "--- a/../outside.txt",
    "+++ b/../outside.txt",
    "@@ -1 +1 @@",
    "-a",
    "+b",
    "--- a/docs/crlf.md",
    "+++ b/docs/crlf.md",
    "@@ -1,2 +1,2 @@",
    " # Title",
    "what is this line",
    "-",
    "+x",
    "",
  ].join("\n"),
};

describe("golden patch plans", () => {
  for (const [name, patch] of Object.entries(CASES)) {
    test(name, async () => {
      const plan = await planPatch(patch, memoryTarget(TREE));
      const json = JSON.stringify(plan, (_k, v) => (v instanceof Uint8Array ? { text: Buffer.from(v).toString("utf8") } : v), 2);
      expectGolden(`patch/${name}.json`, json + "\n");
    });
  }
});
