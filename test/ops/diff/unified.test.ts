import { describe, expect, test } from "bun:test";
import { unifiedDiff, type DiffSide } from "../../../src/ops/diff/unified";
import { WorksnapError } from "../../../src/core/errors";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";
import type { FileMode } from "../../../src/core/file-mode";
import { enc } from "../patch/fixtures";

const side = (path: string, text: string | Uint8Array, mode: FileMode = "100644"): DiffSide => ({
  path,
  bytes: typeof text === "string" ? enc(text) : text,
  mode,
});
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");
const hunkHeaders = (diff: string) => diff.split("\n").filter((l) => l.startsWith("@@"));

describe("unifiedDiff: headers", () => {
  test("identical sides give the empty string", () => {
    expect(unifiedDiff(side("a", "x\n"), side("a", "x\n"))).toBe("");
    expect(unifiedDiff(null, null)).toBe("");
  });

  test("modification", () => {
    expect(unifiedDiff(side("a.txt", "x\n"), side("a.txt", "y\n"))).toBe("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n");
  });

  test("creation and deletion, including empty files", () => {
    expect(unifiedDiff(null, side("n", "a\nb\n"))).toBe("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    expect(unifiedDiff(side("d", "a\n", "100755"), null)).toBe("diff --git a/d b/d\ndeleted file mode 100755\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
    expect(unifiedDiff(null, side("e", ""))).toBe("diff --git a/e b/e\nnew file mode 100644\n");
    expect(unifiedDiff(side("e", ""), null)).toBe("diff --git a/e b/e\ndeleted file mode 100644\n");
  });

  test("mode change, with and without content change", () => {
    expect(unifiedDiff(side("s", "x\n"), side("s", "x\n", "100755"))).toBe("diff --git a/s b/s\nold mode 100644\nnew mode 100755\n");
    expect(unifiedDiff(side("s", "x\n"), side("s", "y\n", "100755"))).toContain("new mode 100755\n--- a/s\n+++ b/s\n@@ -1 +1 @@\n");
  });

  test("rename, with and without content change", () => {
    expect(unifiedDiff(side("a", "x\n"), side("b", "x\n"))).toBe("diff --git a/a b/b\nrename from a\nrename to b\n");
    expect(unifiedDiff(side("a", "x\n"), side("b", "y\n"))).toBe("diff --git a/a b/b\nrename from a\nrename to b\n--- a/a\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n");
  });

  test("a regular file turning into a symlink is a deletion then a creation", () => {
    const d = unifiedDiff(side("x", "data\n"), side("x", "target", "120000"));
    expect(d).toBe(
      "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-data\n" +
        "diff --git a/x b/x\nnew file mode 120000\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n",
    );
  });

  test("binary: NUL in the first 8000 bytes or invalid UTF-8, on either side", () => {
    expect(unifiedDiff(side("b", new Uint8Array([0, 1, 2])), side("b", new Uint8Array([0, 1, 3])))).toBe("diff --git a/b b/b\nBinary files a/b and b/b differ\n");
    expect(unifiedDiff(side("t", "text\n"), side("t", new Uint8Array([0xff, 10])))).toBe("diff --git a/t b/t\nBinary files a/t and b/t differ\n");
    expect(unifiedDiff(null, side("n", new Uint8Array([0])))).toBe("diff --git a/n b/n\nnew file mode 100644\nBinary files /dev/null and b/n differ\n");
  });

  test("paths: C-quoting for control characters, quotes and backslashes; a TAB after names with spaces", () => {
    expect(unifiedDiff(side("t\tab", "x\n"), side("t\tab", "y\n"))).toBe('diff --git "a/t\\tab" "b/t\\tab"\n--- "a/t\\tab"\n+++ "b/t\\tab"\n@@ -1 +1 @@\n-x\n+y\n');
    expect(unifiedDiff(side('q"\\\x01', "x\n"), null).split("\n")[0]).toBe('diff --git "a/q\\"\\\\\\001" "b/q\\"\\\\\\001"');
    expect(unifiedDiff(side("sp ace", "x\n"), side("sp ace", "y\n"))).toContain("--- a/sp ace\t\n+++ b/sp ace\t\n");
    expect(unifiedDiff(side("é.txt", "x\n"), side("é.txt", "y\n"))).toContain("--- a/é.txt\n");
  });

  test("a negative or fractional context is an invalid argument", () => {
    expect(() => unifiedDiff(side("a", "x\n"), side("a", "y\n"), { context: -1 })).toThrow(WorksnapError);
    expect(() => unifiedDiff(side("a", "x\n"), side("a", "y\n"), { context: 1.5 })).toThrow(WorksnapError);
  });
});

describe("unifiedDiff: hunks", () => {
  test("git's merging rule: contexts that touch share a hunk", () => {
    const base = numbered(30);
    const change = (...lines: number[]) => lines.reduce((s, n) => s.replace(`\n${n}\n`, `\n${n}x\n`), base);
    // lines 5 and 11 changed: 5 unchanged lines between (<= 2*3): one hunk
    expect(hunkHeaders(unifiedDiff(side("f", base), side("f", change(5, 11))))).toEqual(["@@ -2,13 +2,13 @@"]);
    // lines 5 and 12: exactly 6 = 2*3 unchanged lines between: still one hunk
    expect(hunkHeaders(unifiedDiff(side("f", base), side("f", change(5, 12))))).toEqual(["@@ -2,14 +2,14 @@"]);
    // lines 5 and 13: 7 unchanged lines between: two hunks
    expect(hunkHeaders(unifiedDiff(side("f", base), side("f", change(5, 13))))).toEqual(["@@ -2,7 +2,7 @@", "@@ -10,7 +10,7 @@"]);
    expect(hunkHeaders(unifiedDiff(side("f", base), side("f", change(5, 13)), { context: 0 }))).toEqual(["@@ -5 +5 @@", "@@ -13 +13 @@"]);
    expect(hunkHeaders(unifiedDiff(side("f", base), side("f", change(5, 13)), { context: 4 }))).toEqual(["@@ -1,17 +1,17 @@"]);
  });

  test("hunk ranges: zero-line sides name the line before", () => {
    expect(hunkHeaders(unifiedDiff(side("f", "a\nb\n"), side("f", "a\nx\nb\n"), { context: 0 }))).toEqual(["@@ -1,0 +2 @@"]);
    expect(hunkHeaders(unifiedDiff(side("f", "a\nx\nb\n"), side("f", "a\nb\n"), { context: 0 }))).toEqual(["@@ -2 +1,0 @@"]);
    expect(hunkHeaders(unifiedDiff(side("f", "a\n"), side("f", "x\na\n"), { context: 0 }))).toEqual(["@@ -0,0 +1 @@"]);
  });

  test("no newline at end of file, on either side or both", () => {
    expect(unifiedDiff(side("f", "a\nb"), side("f", "a\nb\n"))).toContain(" a\n-b\n\\ No newline at end of file\n+b\n");
    expect(unifiedDiff(side("f", "a\nb\n"), side("f", "a\nc"))).toContain(" a\n-b\n+c\n\\ No newline at end of file\n");
    expect(unifiedDiff(side("f", "x\na"), side("f", "y\na"))).toContain("-x\n+y\n a\n\\ No newline at end of file\n");
  });

  test("CRLF lines keep their CR; the diff's own lines end with LF", () => {
    expect(unifiedDiff(side("w", "a\r\nb\r\n"), side("w", "a\r\nc\r\n"))).toContain("@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
  });

  test("the result is an ordinary string: UTF-8 content is decoded, not left as bytes", () => {
    const d = unifiedDiff(side("u", "grüße 🙂\n"), side("u", "grüße 🙃\n"));
    expect(d).toContain("-grüße 🙂\n+grüße 🙃\n");
  });

  test("more distinct lines than diff-match-patch's linesToChars keeps apart", () => {
    const a = Array.from({ length: 60_000 }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: 60_000 }, (_, i) => (i % 1000 === 0 ? `b${i}\n` : `a${i}\n`)).join("");
    const d = unifiedDiff(side("big", a), side("big", b));
    expect(hunkHeaders(d)).toHaveLength(60);
    const applied = applyHunks(enc(a), parsePatch(d).files[0]!.hunks);
    expect(applied.ok && Buffer.from(applied.bytes).toString()).toBe(b);
  });

  test("lines on one side only cost no code units: two unrelated 40,000-line files", () => {
    const a = Array.from({ length: 40_000 }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: 40_000 }, (_, i) => `b${i}\n`).join("");
    const d = unifiedDiff(side("big", "head\n" + a + "tail\n"), side("big", "head\n" + b + "tail\n"));
    expect(hunkHeaders(d)).toEqual(["@@ -1,40002 +1,40002 @@"]);
    const applied = applyHunks(enc("head\n" + a + "tail\n"), parsePatch(d).files[0]!.hunks);
    expect(applied.ok && Buffer.from(applied.bytes).toString()).toBe("head\n" + b + "tail\n");
  });

  test("a block moved in a large file is one deletion and one insertion (patience anchors)", () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `l${i}\n`);
    const a = lines.join("");
    const b = [...lines.slice(15_000), ...lines.slice(0, 15_000)].join("");
    const d = unifiedDiff(side("big", a), side("big", b));
    expect(hunkHeaders(d)).toEqual(["@@ -1,15003 +1,3 @@", "@@ -29998,3 +14998,15003 @@"]);
    const applied = applyHunks(enc(a), parsePatch(d).files[0]!.hunks);
    expect(applied.ok && Buffer.from(applied.bytes).toString()).toBe(b);
  });

  test("large, highly repetitive rewrites stay exact when the work budget runs out", () => {
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const a: string[] = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? "\n" : "}\n"));
    const b = [...a];
    for (let i = 0; i < 2000; i++) b.splice(Math.floor(random() * b.length), 1, ...(random() < 0.3 ? ["}\n", "}\n"] : []));
    const d = unifiedDiff(side("rep", a.join("")), side("rep", b.join("")));
    const applied = applyHunks(enc(a.join("")), parsePatch(d).files[0]!.hunks);
    expect(applied.ok && Buffer.from(applied.bytes).toString()).toBe(b.join(""));
  });
});
