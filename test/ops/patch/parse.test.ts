import { describe, expect, test } from "bun:test";
import { parsePatch as parseTyped } from "../../../src/ops/patch/parse";
import { nativeModule } from "../../../src/repo/native";

/** The parse result with paths as plain strings, so expectations can use literals. */
function parsePatch(text: string) {
  const p = parseTyped(text);
  return { ...p, files: p.files.map((f) => ({ ...f, oldPath: f.oldPath as string | null, newPath: f.newPath as string | null })) };
}

const bodyOf = (text: string) => parsePatch(text).files[0]!.hunks[0]!.lines.map((l) => `${l.kind}${l.text}${l.eol ? "" : "\\"}`);

describe("parsePatch: headers", () => {
  test("plain diff: a/ b/ stripped, timestamps after a TAB ignored", () => {
    const p = parsePatch("--- a/src/x.ts\t2024-01-01 10:00:00.000 +0000\n+++ b/src/x.ts\t2024-01-02 10:00:00.000 +0000\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.rejects).toEqual([]);
    expect(p.files).toHaveLength(1);
    expect(p.files[0]).toMatchObject({ oldPath: "src/x.ts", newPath: "src/x.ts", rename: false, binary: false });
  });

  test("plain diff without prefixes keeps the path as written", () => {
    const p = parsePatch("--- src/x.ts\n+++ src/x.ts\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.files[0]!.oldPath).toBe("src/x.ts");
  });

  test("plain diff naming two files patches the shorter name, with a warning", () => {
    const p = parsePatch("--- x.c.orig\n+++ x.c\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.files[0]).toMatchObject({ oldPath: "x.c", newPath: "x.c" });
    expect(p.warnings[0]).toContain('patching "x.c"');
  });

  test("creation and deletion through /dev/null", () => {
    const p = parsePatch("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
    expect(p.files.map((f) => [f.oldPath, f.newPath])).toEqual([
      [null, "new.txt"],
      ["old.txt", null],
    ]);
  });

  test("git extended headers: new, deleted, mode change, index mode", () => {
    const text = [
      "diff --git a/n.sh b/n.sh",
      "new file mode 100755",
      "index 0000000..e69de29",
      "diff --git a/d.txt b/d.txt",
      "deleted file mode 100644",
      "index e69de29..0000000",
      "diff --git a/m.sh b/m.sh",
      "old mode 100644",
      "new mode 100755",
      "diff --git a/i.txt b/i.txt",
      "index 1234567..89abcde 100755",
      "--- a/i.txt",
      "+++ b/i.txt",
      "@@ -1 +1 @@",
      "-a",
      "+b",
      "",
    ].join("\n");
    const p = parsePatch(text);
    expect(p.rejects).toEqual([]);
    expect(p.files.map((f) => [f.oldPath, f.newPath, f.oldMode, f.newMode, f.hunks.length])).toEqual([
      [null, "n.sh", undefined, "100755", 0],
      ["d.txt", null, "100644", undefined, 0],
      ["m.sh", "m.sh", "100644", "100755", 0],
      ["i.txt", "i.txt", "100755", undefined, 1],
    ]);
  });

  test("git's old-style regular modes are canonicalised", () => {
    const p = parsePatch("diff --git a/x b/x\nold mode 100664\nnew mode 100775\n");
    expect(p.files[0]).toMatchObject({ oldMode: "100644", newMode: "100755" });
  });

  test("rename and copy, with and without hunks", () => {
    const text = [
      "diff --git a/old.txt b/new.txt",
      "similarity index 100%",
      "rename from old.txt",
      "rename to new.txt",
      "diff --git a/src.txt b/copy.txt",
      "similarity index 90%",
      "copy from src.txt",
      "copy to copy.txt",
      "--- a/src.txt",
      "+++ b/copy.txt",
      "@@ -1 +1 @@",
      "-a",
      "+b",
      "",
    ].join("\n");
    const p = parsePatch(text);
    expect(p.files.map((f) => [f.oldPath, f.newPath, f.rename, f.copy ?? false, f.hunks.length])).toEqual([
      ["old.txt", "new.txt", true, false, 0],
      ["src.txt", "copy.txt", false, true, 1],
    ]);
  });

  test("C-quoted paths with escapes and octal UTF-8 bytes", () => {
    const text = [
      'diff --git "a/t\\tab.txt" "b/t\\tab.txt"',
      '--- "a/t\\tab.txt"',
      '+++ "b/t\\tab.txt"',
      "@@ -1 +1 @@",
      "-x",
      "+y",
      'diff --git "a/\\303\\251.txt" b/f.txt',
      "rename from \"\\303\\251.txt\"",
      "rename to f.txt",
      'diff --git a/q b/q',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "b/say \\"hi\\"\\n"',
      "@@ -0,0 +1 @@",
      "+x",
      "",
    ].join("\n");
    const p = parsePatch(text);
    expect(p.rejects).toEqual([]);
    expect(p.files.map((f) => [f.oldPath, f.newPath])).toEqual([
      ["t\tab.txt", "t\tab.txt"],
      ["é.txt", "f.txt"],
      [null, 'say "hi"\n'],
    ]);
  });

  test("unquoted names with spaces in `diff --git` are split where both sides agree", () => {
    const p = parsePatch("diff --git a/with space/f b.txt b/with space/f b.txt\nold mode 100644\nnew mode 100755\n");
    expect(p.files[0]!.oldPath).toBe("with space/f b.txt");
    const q = parsePatch("diff --git a/sp ace.txt b/sp ace.txt\n--- a/sp ace.txt\t\n+++ b/sp ace.txt\t\n@@ -1 +1 @@\n-a\n+b\n");
    expect(q.files[0]!.newPath).toBe("sp ace.txt");
  });

  test("binary patches are flagged and read (their data inflated), a corrupt one is a malformed reject, and the next file is still read", () => {
    const text = [
      "diff --git a/img.png b/img.png",
      "index ab99c5393a47d133dbc69a528432d0083063e65f..b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0 100644",
      "GIT binary patch",
      "literal 5",
      "Mc$~{f&B@6J00t}q6#xJL",
      "",
      "literal 4",
      "Lc$~}6Nnrp01Iz(H",
      "",
      "diff --git a/bad.png b/bad.png",
      "index 1111111..2222222 100644",
      "GIT binary patch",
      "literal 5",
      "McmZ?wc4A-w00UY8",
      "",
      "diff --git a/b.bin b/b.bin",
      "Binary files a/b.bin and b/b.bin differ",
      "diff --git a/t.txt b/t.txt",
      "--- a/t.txt",
      "+++ b/t.txt",
      "@@ -1 +1 @@",
      "-a",
      "+b",
      "",
    ].join("\n");
    const p = parsePatch(text);
    expect(p.files.map((f) => [f.newPath, f.binary, f.binaryPatch?.forward.kind ?? null])).toEqual([
      ["img.png", true, "literal"],
      ["b.bin", true, null],
      ["t.txt", false, null],
    ]);
    const img = p.files[0]!.binaryPatch!;
    expect([Buffer.from(img.forward.data).toString(), Buffer.from(img.reverse!.data).toString()]).toEqual(["hello", "old\0"]);
    expect([img.oldOid, img.newOid]).toEqual(["ab99c5393a47d133dbc69a528432d0083063e65f", "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"]);
    expect(p.rejects).toEqual([{ path: "bad.png", hunks: [{ index: 0, reason: "malformed", message: "patch line 14: corrupt binary patch (a line of base 85 that does not decode)" }] }]);
  });

  test("text around the patch (commit message, email, format-patch signature) is skipped", () => {
    const text = [
      "From 1234 Mon Sep 17 00:00:00 2001",
      "Subject: [PATCH] fix",
      "",
      "Explain the fix.",
      "---",
      " x.txt | 2 +-",
      "",
      "diff --git a/x.txt b/x.txt",
      "index 1111111..2222222 100644",
      "--- a/x.txt",
      "+++ b/x.txt",
      "@@ -1,2 +1,2 @@",
      " keep",
      "-old",
      "+new",
      "-- ",
      "2.39.5",
      "",
    ].join("\n");
    const p = parsePatch(text);
    expect(p.rejects).toEqual([]);
    expect(p.warnings).toEqual([]);
    expect(bodyOf(text)).toEqual([" keep", "-old", "+new"]);
  });

  test("a patch with no file changes is malformed", () => {
    expect(parsePatch("").rejects[0]!.hunks[0]!.reason).toBe("malformed");
    expect(parsePatch("just some prose\n").rejects[0]!.path).toBe("");
  });
});

describe("parsePatch: hunks", () => {
  test("no newline at end of file on either side", () => {
    const text = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n";
    expect(bodyOf(text)).toEqual([" a", "-b\\", "+c\\"]);
  });

  test("zero-line sides: creation at -0,0 and insertion after line 5", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n@@ -5,0 +8,1 @@\n+c\n");
    expect(p.files[0]!.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([
      [0, 0, 1, 2],
      [5, 0, 8, 1],
    ]);
  });

  test("omitted counts mean 1", () => {
    const h = parsePatch("--- a/x\n+++ b/x\n@@ -3 +3 @@ fn()\n-a\n+b\n").files[0]!.hunks[0]!;
    expect([h.oldStart, h.oldLines, h.newLines, h.header]).toEqual([3, 1, 1, "@@ -3 +3 @@ fn()"]);
  });

  test("counts too large: recounted from the body, with a warning", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1,5 +1,6 @@\n a\n-b\n+c\n");
    expect(p.rejects).toEqual([]);
    expect(p.files[0]!.hunks[0]).toMatchObject({ oldLines: 2, newLines: 2 });
    expect(p.warnings).toEqual(["x: hunk 0 header says -1,5 +1,6 but its body has 2 old and 2 new lines; used the body"]);
  });

  test("counts too small: the rest of the body is kept and recounted, with a warning", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n d\n@@ -9 +9 @@\n-y\n+z\n");
    expect(p.files[0]!.hunks.map((h) => [h.oldLines, h.newLines])).toEqual([
      [3, 3],
      [1, 1],
    ]);
    expect(p.warnings).toHaveLength(1);
  });

  test("an empty line inside a hunk is an empty context line", () => {
    expect(bodyOf("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n")).toEqual([" a", " ", "-b", "+c"]);
  });

  test("CR stays part of content lines; header lines may end in CR", () => {
    const p = parsePatch("--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n");
    expect(p.files[0]!.oldPath).toBe("x");
    expect(bodyOf("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\r\n+b\r\n")).toEqual(["-a\r", "+b\r"]);
  });

  test("a patch given as bytes keeps lines that are not UTF-8 byte for byte, as text it is read as its UTF-8", () => {
    const bytes = Buffer.from("--- a/menu.txt\n+++ b/menu.txt\n@@ -1 +1 @@\n-caf\xe9\n+caf\xe9 cr\xe8me\n", "latin1");
    for (const native of [nativeModule(), null]) {
      const fromBytes = parseTyped(bytes, native);
      expect(fromBytes.rejects).toEqual([]);
      expect(fromBytes.files[0]!.hunks[0]!.lines.map((l) => l.text)).toEqual(["caf\xe9", "caf\xe9 cr\xe8me"]);
      const fromText = parseTyped("--- a/menu.txt\n+++ b/menu.txt\n@@ -1 +1 @@\n-caf\xe9\n+caf\xe9\n", native);
      expect(fromText.files[0]!.hunks[0]!.lines[0]!.text).toBe("caf\xc3\xa9");
    }
  });

  test("hunk lines are byte strings: UTF-8 is kept as its bytes", () => {
    expect(bodyOf("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-é\n+€\n")).toEqual(["-\xc3\xa9", "+\xe2\x82\xac"]);
  });

  test("hunk indexes continue across sections for the same path", () => {
    const one = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -5 +5 @@\n-c\n+d\n";
    const p = parsePatch(one + one + "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.files.map((f) => f.hunks.map((h) => h.index))).toEqual([[0, 1], [2, 3], [0]]);
  });

  test("blank lines between hunks are tolerated", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n@@ -5 +5 @@\n-c\n+d\n");
    expect(p.rejects).toEqual([]);
    expect(p.files[0]!.hunks).toHaveLength(2);
  });
});

describe("parsePatch: malformed parts become rejects", () => {
  test("garbage line inside a hunk", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\nGARBAGE\n-b\n+c\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.rejects).toEqual([{ path: "x", hunks: [{ index: 0, reason: "malformed", message: expect.stringContaining('patch line 5: "GARBAGE"') }] }]);
    expect(p.files.map((f) => f.newPath)).toEqual(["y"]);
  });

  test("text between hunks", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nstray words\n@@ -5 +5 @@\n-c\n+d\n");
    expect(p.rejects[0]!.hunks[0]).toMatchObject({ index: 1, reason: "malformed" });
    expect(p.rejects[0]!.hunks[0]!.message).toContain("between hunks");
  });

  test("unparseable hunk header", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1,a +1 @@\n-a\n+b\n@@ -5 +5 @@\n-c\n+d\n");
    expect(p.rejects).toEqual([{ path: "x", hunks: [{ index: 0, reason: "malformed", message: expect.stringContaining("is not of the form") }] }]);
    expect(p.files[0]!.hunks.map((h) => h.index)).toEqual([1]);
  });

  test("hunk without a file header", () => {
    const p = parsePatch("@@ -1 +1 @@\n-a\n+b\n");
    expect(p.rejects).toEqual([{ path: "", hunks: [{ index: 0, reason: "malformed", message: expect.stringContaining("no file header") }] }]);
  });

  test("paths that leave the repository or touch .git are named, never used", () => {
    for (const [name, why] of [
      ["../etc/passwd", ".. segment"],
      ["/etc/passwd", "absolute"],
      [".git/config", ".git or .mcp"],
      ["a/../../x", ".. segment"],
    ]) {
      const p = parsePatch(`--- ${name}\n+++ ${name}\n@@ -1 +1 @@\n-a\n+b\n`);
      expect(p.files).toEqual([]);
      expect(p.rejects[0]!.hunks[0]!.reason).toBe("malformed");
      expect(p.rejects[0]!.hunks[0]!.message).toContain(why!);
    }
  });

  test("a name whose bytes are not UTF-8 is refused, quoted or raw, not decoded into another name (regression: it became U+FFFD)", () => {
    const quoted = 'diff --git "a/caf\\351.txt" "b/caf\\351.txt"\nnew file mode 100644\n--- /dev/null\n+++ "b/caf\\351.txt"\n@@ -0,0 +1 @@\n+x\n';
    const raw = Buffer.from("--- a/caf\xe9.txt\n+++ b/caf\xe9.txt\n@@ -1 +1 @@\n-a\n+b\n", "latin1");
    for (const native of [nativeModule(), null]) {
      for (const patch of [quoted, raw]) {
        const p = parseTyped(patch, native);
        expect(p.files).toEqual([]);
        expect(p.rejects[0]!.hunks[0]).toMatchObject({ reason: "malformed", message: expect.stringContaining("is not valid UTF-8") });
      }
      // U+FFFD that the patch itself names is a name like any other
      expect(parseTyped("--- a/\uFFFD.txt\n+++ b/\uFFFD.txt\n@@ -1 +1 @@\n-a\n+b\n", native).files[0]!.newPath as string).toBe("\uFFFD.txt");
    }
  });

  test("unsupported file modes", () => {
    const p = parsePatch("diff --git a/sub b/sub\nnew file mode 160000\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit abc\n");
    expect(p.rejects[0]).toMatchObject({ path: "sub", hunks: [{ reason: "malformed" }] });
    expect(p.files).toEqual([]);
  });

  test("'No newline' marker in the middle of a side", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n+d\n");
    expect(p.rejects[0]!.hunks[0]!.message).toContain("not the last of the old side");
  });

  test("a git header whose names differ without rename or copy headers", () => {
    const p = parsePatch("diff --git a/x b/y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n");
    expect(p.files).toEqual([]);
    expect(p.rejects[0]!.hunks[0]!.message).toContain("no \"rename from/to\"");
  });

  test("a plain file header with no hunks", () => {
    const p = parsePatch("--- a/x\n+++ b/x\n");
    expect(p.rejects[0]!.hunks[0]!.message).toContain("without hunks");
  });
});
