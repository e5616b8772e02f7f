import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { planPatch, type PatchPlan } from "../../../src/ops/patch/plan";
import { applyPlan, dec, file, memoryTarget, type Tree } from "./fixtures";

const tree = (entries: Record<string, string | ReturnType<typeof file>>): Tree =>
  new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === "string" ? file(v) : v]));

async function plan(patch: string, t: Tree): Promise<PatchPlan> {
  return planPatch(patch, memoryTarget(t));
}

async function rejectsOf(patch: string, t: Tree) {
  const p = await plan(patch, t);
  if (p.ok) throw new Error("expected rejects");
  return p.rejects;
}

const texts = (t: Tree) => Object.fromEntries([...t].map(([k, v]) => [k, dec(v.bytes)]));

const modify = (path: string, from: string, to: string, line = 1) => `--- a/${path}\n+++ b/${path}\n@@ -${line} +${line} @@\n-${from}\n+${to}\n`;

describe("planPatch: changes", () => {
  test("create, modify, delete, sorted by path", async () => {
    const t = tree({ "b.txt": "b\n", "c.txt": "c\n" });
    const p = await plan("--- a/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-c\n" + modify("b.txt", "b", "B") + "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+a\n", t);
    expect(p.ok && p.changes.map((c) => [c.path, c.kind, c.bytes && dec(c.bytes), c.mode])).toEqual([
      ["a.txt", "create", "a\n", "100644"],
      ["b.txt", "modify", "B\n", "100644"],
      ["c.txt", "delete", null, "100644"],
    ]);
  });

  test("paths are sorted by UTF-8 bytes, not UTF-16 units", async () => {
    const create = (p: string) => `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+x\n`;
    const p = await plan(create("\u{1F600}.txt") + create("\uFF5E.txt") + create("z.txt"), new Map());
    expect(p.ok && p.changes.map((c) => String(c.path))).toEqual(["z.txt", "\uFF5E.txt", "\u{1F600}.txt"]);
  });

  test("mode changes: only mode, mode with edit, new executable", async () => {
    const t = tree({ "a.sh": "a\n", "b.sh": file("b\n", "100755") });
    const patch = "diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100755\n" + "diff --git a/b.sh b/b.sh\nold mode 100755\nnew mode 100644\n" + modify("b.sh", "b", "B") + "diff --git a/n.sh b/n.sh\nnew file mode 100755\n--- /dev/null\n+++ b/n.sh\n@@ -0,0 +1 @@\n+n\n";
    const p = await plan(patch, t);
    expect(p.ok && p.changes.map((c) => [String(c.path), c.kind, c.mode])).toEqual([
      ["a.sh", "modify", "100755"],
      ["b.sh", "modify", "100644"],
      ["n.sh", "create", "100755"],
    ]);
  });

  test("an edit keeps the file's mode; a stale old mode is a warning", async () => {
    const t = tree({ "x.sh": file("a\n", "100755") });
    const p = await plan("diff --git a/x.sh b/x.sh\nindex 1111111..2222222 100644\n" + modify("x.sh", "a", "b"), t);
    expect(p.ok && p.changes[0]!.mode).toBe("100755");
    expect(p.warnings).toEqual(["x.sh: the patch expects mode 100644 but the file has mode 100755"]);
  });

  test("rename with and without hunks", async () => {
    const t = tree({ "old.txt": "1\n2\n", "keep.txt": "k\n" });
    const p = await plan("diff --git a/old.txt b/new.txt\nsimilarity index 50%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n", t);
    expect(p.ok && p.changes.map((c) => [c.path, c.kind, c.from, dec(c.bytes!)])).toEqual([["new.txt", "rename", "old.txt", "1\ntwo\n"]]);
    const q = await plan("diff --git a/keep.txt b/moved/keep.txt\nsimilarity index 100%\nrename from keep.txt\nrename to moved/keep.txt\n", t);
    expect(q.ok && q.changes.map((c) => [String(c.path), c.kind, String(c.from)])).toEqual([["moved/keep.txt", "rename", "keep.txt"]]);
  });

  test("copy leaves the source in place", async () => {
    const p = await plan("diff --git a/s.txt b/c.txt\ncopy from s.txt\ncopy to c.txt\n", tree({ "s.txt": "s\n" }));
    expect(p.ok && p.changes.map((c) => [String(c.path), c.kind])).toEqual([["c.txt", "create"]]);
  });

  test("offsets are reported with their path", async () => {
    const t = tree({ "f.txt": "a\nb\nc\nd\ne\n" });
    const p = await plan("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-d\n+D\n", t);
    expect(p.ok && p.offsets).toEqual([{ path: "f.txt", index: 0, offset: 3 }]);
  });

  test("each path is read once", async () => {
    const target = memoryTarget(tree({ "f.txt": "a\nb\n" }));
    await planPatch(modify("f.txt", "a", "A") + modify("f.txt", "b", "B", 2) + "--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-A\n-B\n", target);
    expect(target.reads).toEqual(["f.txt"]);
  });
});

describe("planPatch: several sections for one path apply in order", () => {
  test("create then modify", async () => {
    const p = await plan("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n" + modify("n.txt", "b", "B", 2), new Map());
    expect(p.ok && p.changes.map((c) => [c.path, c.kind, dec(c.bytes!)])).toEqual([["n.txt", "create", "a\nB\n"]]);
  });

  test("a path in two sections is patched section after section while the other files are applied at once", async () => {
    const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join("\n") + "\n";
    const t = tree({ "a.txt": lines(9, "a"), "b.txt": lines(9, "b"), "c.txt": lines(9, "c"), "d.txt": lines(9, "d") });
    const p = await plan(
      modify("a.txt", "a1", "A1", 2) + modify("b.txt", "b4", "B4", 5) + modify("a.txt", "a7", "A7", 8) +
        "diff --git a/c.txt b/e.txt\nrename from c.txt\nrename to e.txt\n--- a/c.txt\n+++ b/e.txt\n@@ -3 +3 @@\n-c2\n+C2\n" +
        modify("d.txt", "d0", "D0", 1),
      t,
    );
    expect(p.ok && p.changes.map((c) => [String(c.path), c.kind, c.from === undefined ? null : String(c.from)])).toEqual([
      ["a.txt", "modify", null],
      ["b.txt", "modify", null],
      ["d.txt", "modify", null],
      ["e.txt", "rename", "c.txt"],
    ]);
    expect(p.ok && Object.fromEntries(p.changes.map((c) => [c.path, c.bytes && dec(c.bytes)]))).toEqual({
      "a.txt": lines(9, "a").replace("a1\n", "A1\n").replace("a7\n", "A7\n"),
      "b.txt": lines(9, "b").replace("b4\n", "B4\n"),
      "e.txt": lines(9, "c").replace("c2\n", "C2\n"),
      "d.txt": lines(9, "d").replace("d0\n", "D0\n"),
    });
  });

  test("modify twice, hunk indexes continue", async () => {
    const p = await plan(modify("f", "a", "b") + modify("f", "b", "c") + modify("f", "zzz", "d"), tree({ f: "a\n" }));
    expect(!p.ok && p.rejects).toEqual([{ path: "f", hunks: [expect.objectContaining({ index: 2, reason: "context_mismatch" })] }]);
    const q = await plan(modify("f", "a", "b") + modify("f", "b", "c"), tree({ f: "a\n" }));
    expect(q.ok && dec(q.changes[0]!.bytes!)).toBe("c\n");
  });

  test("rename then edit is one rename; a chain of renames is one rename", async () => {
    const rename = (a: string, b: string) => `diff --git a/${a} b/${b}\nrename from ${a}\nrename to ${b}\n`;
    const p = await plan(rename("a", "b") + modify("b", "x", "y") + rename("b", "c"), tree({ a: "x\n" }));
    expect(p.ok && p.changes.map((c) => [c.path, c.kind, c.from, dec(c.bytes!)])).toEqual([["c", "rename", "a", "y\n"]]);
  });

  test("delete then create is a modification; create then delete is nothing", async () => {
    const del = "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n";
    const create = "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+new\n";
    const p = await plan(del + create, tree({ f: "old\n" }));
    expect(p.ok && p.changes.map((c) => [c.path, c.kind, dec(c.bytes!)])).toEqual([["f", "modify", "new\n"]]);
    const q = await plan(create + del.replace("-old", "-new"), new Map());
    expect(q.ok && q.changes).toEqual([]);
  });

  test("after a rejected section, later sections of that path are not checked", async () => {
    const p = await plan(modify("f", "nope", "x") + modify("f", "also-nope", "y"), tree({ f: "a\n" }));
    expect(!p.ok && p.rejects[0]!.hunks.map((h) => h.index)).toEqual([0]);
    expect(p.warnings[0]).toContain("not checked");
  });
});

describe("planPatch: every reject reason", () => {
  test("file_not_found: modify, delete or rename a missing file", async () => {
    const rejects = await rejectsOf(
      modify("m.txt", "a", "b") + "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n" + "diff --git a/r.txt b/s.txt\nrename from r.txt\nrename to s.txt\n",
      new Map(),
    );
    expect(rejects.map((r) => [r.path, r.hunks.map((h) => h.reason)])).toEqual([
      ["d.txt", ["file_not_found"]],
      ["m.txt", ["file_not_found"]],
      ["r.txt", ["file_not_found"]],
    ]);
    expect(rejects[1]!.hunks[0]!.message).toContain("/dev/null");
  });

  test("file_exists: create over a file, rename onto a file", async () => {
    const t = tree({ "x.txt": "x\n", "a.txt": "a\n", "b.txt": "b\n" });
    const rejects = await rejectsOf("--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n" + "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n", t);
    expect(rejects.map((r) => [r.path, r.hunks.map((h) => h.reason)])).toEqual([
      ["b.txt", ["file_exists"]],
      ["x.txt", ["file_exists"]],
    ]);
  });

  test("binary_patch_unsupported", async () => {
    const rejects = await rejectsOf("diff --git a/i.png b/i.png\nindex 1111111..2222222 100644\nBinary files a/i.png and b/i.png differ\n", tree({ "i.png": "x" }));
    expect(rejects).toEqual([{ path: "i.png", hunks: [{ index: 0, reason: "binary_patch_unsupported", message: expect.any(String) }] }]);
  });

  test("malformed: parse problems are rejects of the plan", async () => {
    const rejects = await rejectsOf("--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", new Map());
    expect(rejects[0]!.hunks[0]!.reason).toBe("malformed");
    expect(rejects[0]!.hunks[0]!.message).toContain("..");
  });

  test("context_mismatch", async () => {
    const rejects = await rejectsOf(modify("f", "b", "c"), tree({ f: "a\n" }));
    expect(rejects[0]!.hunks[0]).toMatchObject({ index: 0, reason: "context_mismatch", expected_at: { line: 1, text: ["a"] } });
  });

  test("deleting a file whose content differs is a context_mismatch", async () => {
    const del = "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n";
    expect((await rejectsOf(del, tree({ f: "a\nc\n" })))[0]!.hunks[0]!.reason).toBe("context_mismatch");
    const leftover = await rejectsOf(del, tree({ f: "a\nb\nc\n" }));
    expect(leftover[0]!.hunks[0]).toMatchObject({ reason: "context_mismatch", message: expect.stringContaining("1 line(s) would remain") });
  });

  test("a deletion without hunks deletes whatever is there", async () => {
    const p = await plan("diff --git a/f b/f\ndeleted file mode 100644\n", tree({ f: "anything\n" }));
    expect(p.ok && p.changes.map((c) => c.kind)).toEqual(["delete"]);
  });
});

describe("planPatch: all or nothing", () => {
  test("one bad file rejects the whole patch, and every reject of every file is listed, sorted", async () => {
    const t = tree({ "ok.txt": "a\n", "z.txt": "1\n2\n3\n", "m.txt": "m\n" });
    const patch =
      modify("z.txt", "1", "one") +
      "@@ -3 +3 @@\n-nope\n+x\n" +
      modify("ok.txt", "a", "b") +
      modify("missing.txt", "a", "b") +
      "--- /dev/null\n+++ b/m.txt\n@@ -0,0 +1 @@\n+m\n" +
      "--- a/bad\n+++ b/bad\n@@ -1,x +1 @@\n-a\n+b\n";
    const p = await plan(patch, t);
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.rejects.map((r) => [r.path, r.hunks.map((h) => `${h.index}:${h.reason}`)])).toEqual([
      ["bad", ["0:malformed"]],
      ["m.txt", ["0:file_exists"]],
      ["missing.txt", ["0:file_not_found"]],
      ["z.txt", ["1:context_mismatch"]],
    ]);
    expect("changes" in p).toBe(false);
  });

  test("a good patch against the same tree applies fully", async () => {
    const t = tree({ "ok.txt": "a\n", "z.txt": "1\n2\n3\n" });
    const p = await plan(modify("z.txt", "1", "one") + modify("ok.txt", "a", "b"), t);
    expect(texts(applyPlan(t, p))).toEqual({ "ok.txt": "b\n", "z.txt": "one\n2\n3\n" });
  });

  test("bad content never throws", async () => {
    const t = tree({ "a.txt": "a\nb\n" });
    const pieces = ["--- a/a.txt\n", "+++ b/a.txt\n", "@@ -1 +1 @@\n", "@@ -1,2 +1,9 @@\n", "-a\n", "+b\n", " b\n", "\\ No newline at end of file\n", "diff --git a/a.txt b/a.txt\n", "rename from a.txt\n", "rename to ../x\n", "new file mode 100644\n", "Binary files a/x and b/x differ\n", "--- /dev/null\n", "+++ /dev/null\n", '"\\777\n', "\n", "garbage\n"];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string()), { maxLength: 12 }), async (parts) => {
        const p = await plan(parts.join(""), t);
        expect(typeof p.ok).toBe("boolean");
      }),
      { numRuns: 2000, seed: 42 },
    );
  });
});
