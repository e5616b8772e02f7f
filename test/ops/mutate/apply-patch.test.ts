import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { canonicalJson } from "../../../src/core/canonical-json";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { liveFingerprint } from "../../../src/ops/live/live-tree";
import { readFile } from "../../../src/ops/snapshot/file";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { historyStatus } from "../../../src/ops/history/query";
import { tmpRepo } from "../../helpers/tmp-repo";
import { linkOf, permOf, recordingRecorder, treeText, wsOf } from "../../helpers/workspace";

const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("");
const sid = (r: { cache_hint: string }) => (r as unknown as { snapshot_id: `sha256:${string}` }).snapshot_id;

describe("workspace_apply_patch: all or nothing", () => {
  test("one bad hunk in a multi-file patch writes nothing; every reject is listed, sorted by path then hunk", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.write("b.txt", ten);
    repo.write("c.txt", ten);
    repo.commit();
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    const patch = [
      "--- a/c.txt\n+++ b/c.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n@@ -7,3 +7,3 @@\n line 7\n-not line 8\n+LINE 8\n line 9\n",
      "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n",
      "--- a/b.txt\n+++ b/b.txt\n@@ -4,2 +4,2 @@\n-wrong 4\n+x\n line 5\n",
      "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+exists already\n",
      "--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-x\n+y\n",
    ].join("");
    for (const mode of ["worktree", "snapshot"] as const) {
      const args = mode === "snapshot" ? { mode, snapshot_id: (await createSnapshot(ws, { paths: ["."] })).snapshot_id } : { mode };
      const r = await applyPatchOp(ws, { ...args, patch });
      expect(r.applied).toBe(false);
      expect(r.changed).toEqual([]);
      expect(r.rejects!.map((f) => [f.path, f.hunks.map((h) => [h.index, h.reason])])).toEqual([
        ["a.txt", [[1, "file_exists"]]],
        ["b.txt", [[0, "context_mismatch"]]],
        ["c.txt", [[1, "context_mismatch"]]],
        ["gone.txt", [[0, "file_not_found"]]],
      ]);
      const mismatch = r.rejects![2]!.hunks[0]!;
      expect(mismatch.expected_at).toEqual({ line: 7, text: ["line 7", "line 8", "line 9"] });
      expect(r.reject_counts).toEqual({ files: 4, hunks: 4 });
      if (mode === "snapshot") expect(sid(r)).toBe(args.snapshot_id!);
      expect(treeText(repo.root)).toEqual(before);
    }
  });

  test("a rejected patch in worktree mode keeps a given lease valid and returns it", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.commit();
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    const leaseId = read.cache_hint === "until_dirty" ? read.lease_id : "";
    const r = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nope\n+x\n" });
    expect(r.applied).toBe(false);
    expect(r.cache_hint === "until_dirty" && r.lease_id).toBe(leaseId);
  });

  test("thousands of rejects keep the answer small: details while the budget lasts, then counts", async () => {
    await using repo = await tmpRepo();
    const files = 300;
    const parts: string[] = [];
    for (let f = 0; f < files; f++) {
      repo.write(`f${String(f).padStart(3, "0")}.txt`, Array.from({ length: 200 }, (_, i) => `row ${i}\n`).join(""));
      parts.push(`--- a/f${String(f).padStart(3, "0")}.txt\n+++ b/f${String(f).padStart(3, "0")}.txt\n`);
      for (let h = 0; h < 10; h++) parts.push(`@@ -${h * 20 + 1},1 +${h * 20 + 1},1 @@\n-wrong ${h}\n+x\n`);
    }
    using ws = wsOf(repo);
    const r = await applyPatchOp(ws, { mode: "worktree", patch: parts.join("") });
    expect(r.applied).toBe(false);
    expect(r.reject_counts).toEqual({ files, hunks: files * 10 });
    expect(r.rejects_truncated).toBe(true);
    expect(canonicalJson(r).length).toBeLessThan(80_000);
    expect(r.rejects![0]!.hunks[0]!.expected_at).toBeDefined();
    const last = r.rejects![r.rejects!.length - 1]!;
    expect(last.hunks[last.hunks.length - 1]!.expected_at).toBeUndefined();
  });
});

describe("workspace_apply_patch: applying", () => {
  test("creates, edits, deletes, renames with edits, mode changes, CRLF and missing final newlines, byte for byte", async () => {
    await using repo = await tmpRepo();
    repo.write("edit.txt", ten);
    repo.write("crlf.txt", "a\r\nb\r\nc\r\n");
    repo.write("nonl.txt", "x\ny");
    repo.write("del.txt", "bye\n");
    repo.write("old/name.txt", ten);
    repo.write("script", "#!/bin/sh\n");
    repo.symlink("link", "edit.txt");
    repo.commit();
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    ws.recorder = rec;
    const patch = [
      "diff --git a/edit.txt b/edit.txt\n--- a/edit.txt\n+++ b/edit.txt\n@@ -5,3 +5,3 @@\n line 5\n-line 6\n+LINE SIX\n line 7\n",
      "diff --git a/crlf.txt b/crlf.txt\n--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n",
      "diff --git a/nonl.txt b/nonl.txt\n--- a/nonl.txt\n+++ b/nonl.txt\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n",
      "diff --git a/del.txt b/del.txt\ndeleted file mode 100644\n--- a/del.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
      "diff --git a/new/file.txt b/new/file.txt\nnew file mode 100755\n--- /dev/null\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+fresh\n+file\n",
      "diff --git a/old/name.txt b/renamed/name.txt\nsimilarity index 90%\nrename from old/name.txt\nrename to renamed/name.txt\n--- a/old/name.txt\n+++ b/renamed/name.txt\n@@ -1,2 +1,2 @@\n-line 1\n+first\n line 2\n",
      "diff --git a/script b/script\nold mode 100644\nnew mode 100755\n",
      "diff --git a/link b/link\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-edit.txt\n\\ No newline at end of file\n+crlf.txt\n\\ No newline at end of file\n",
      "diff --git a/empty.txt b/empty.txt\nnew file mode 100644\n",
    ].join("");
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.changed.map((c) => [c.path, c.status, c.from ?? null])).toEqual([
      ["crlf.txt", "modified", null],
      ["del.txt", "deleted", null],
      ["edit.txt", "modified", null],
      ["empty.txt", "created", null],
      ["link", "modified", null],
      ["new/file.txt", "created", null],
      ["nonl.txt", "modified", null],
      ["renamed/name.txt", "renamed", "old/name.txt"],
      ["script", "modified", null],
    ]);
    const t = treeText(repo.root);
    expect(t["edit.txt"]).toBe(ten.replace("line 6\n", "LINE SIX\n"));
    expect(t["crlf.txt"]).toBe("a\r\nB\r\nc\r\n");
    expect(t["nonl.txt"]).toBe("x\nz\n");
    expect(t["del.txt"]).toBeUndefined();
    expect(t["new/file.txt"]).toBe("fresh\nfile\n");
    expect(t["renamed/name.txt"]).toBe(ten.replace("line 1\n", "first\n"));
    expect(t["old/name.txt"]).toBeUndefined();
    expect(t["empty.txt"]).toBe("");
    expect(linkOf(repo.root, "link")).toBe("crlf.txt");
    expect([permOf(repo.root, "script"), permOf(repo.root, "new/file.txt")]).toEqual([0o755, 0o755]);
    const prep = rec.calls[0]!;
    expect(prep.ctx!.toolName).toBe("edit_file_diff");
    expect(prep.changes!.map((c) => [c.operation, String(c.path)]).sort()).toEqual([
      ["create", "empty.txt"],
      ["create", "new/file.txt"],
      ["delete", "del.txt"],
      ["edit", "crlf.txt"],
      ["edit", "edit.txt"],
      ["edit", "link"],
      ["edit", "nonl.txt"],
      ["edit", "script"],
      ["move", "renamed/name.txt"],
    ]);
  });

  test("moved hunks are reported as offsets and wrong header counts as warnings", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", `header 1\nheader 2\nheader 3\n${ten}`);
    using ws = wsOf(repo);
    const patch = "--- a/f.txt\n+++ b/f.txt\n@@ -5,3 +5,3 @@\n line 5\n-line 6\n+six\n line 7\n@@ -9,9 +9,9 @@\n line 9\n-line 10\n+ten\n";
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.offsets).toEqual([
      { path: "f.txt", index: 0, offset: 3 },
      { path: "f.txt", index: 1, offset: 3 },
    ]);
    expect(r.warnings_total).toBeGreaterThan(0);
    expect(r.warnings.join("\n")).toContain("used the body");
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(`header 1\nheader 2\nheader 3\n${ten}`.replace("line 6\n", "six\n").replace("line 10\n", "ten\n"));
  });

  test("worktree mode validates the lease: STALE_LEASE after an outside change, nothing written", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.commit();
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    const leaseId = read.cache_hint === "until_dirty" ? read.lease_id : "";
    writeFileSync(join(repo.root, "other.txt"), "outside\n");
    const err = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 1\n+x\n" }).catch((e) => e);
    expect(err.code).toBe("STALE_LEASE");
    expect(err.details.fingerprint.status_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe(ten);
  });

  test("a stale lease is STALE_LEASE before anything the patch says, although the fingerprint is read while the patch is planned", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.write("dir/x.txt", "x\n");
    repo.commit();
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    const leaseId = read.cache_hint === "until_dirty" ? read.lease_id : "";
    writeFileSync(join(repo.root, "other.txt"), "outside\n");
    for (const patch of [
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not there\n+x\n", // a reject
      "--- a/dir\n+++ b/dir\n@@ -1 +1 @@\n-x\n+y\n", // an error: the patch names a directory
    ]) {
      const err = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch }).catch((e) => e);
      expect(err.code).toBe("STALE_LEASE");
    }
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe(ten);
  });

  test("the answer's fingerprint is the tree's after the write (read while the history records), so its lease works next", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 12; i++) repo.write(`f${i}.txt`, ten);
    repo.commit();
    using ws = wsOf(repo); // with the edit history, as the server runs it
    const patch = Array.from({ length: 12 }, (_, i) => `--- a/f${i}.txt\n+++ b/f${i}.txt\n@@ -1 +1 @@\n-line 1\n+one ${i}\n`).join("");
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    const fresh = await liveFingerprint(ws);
    expect(r.cache_hint === "until_dirty" && r.fingerprint).toEqual(fresh);
    const leaseId = r.cache_hint === "until_dirty" ? r.lease_id : "";
    const next = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch: "--- a/f0.txt\n+++ b/f0.txt\n@@ -2 +2 @@\n-line 2\n+two\n" });
    expect(next.applied).toBe(true);
  });

  test("brief (the CLI's text): written and recorded, with no lease, fingerprint or diff; a lease given with it is still checked and learns the new blobs", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 3; i++) repo.write(`f${i}.txt`, ten);
    repo.commit();
    using ws = wsOf(repo); // with the edit history
    const patch = "--- a/f0.txt\n+++ b/f0.txt\n@@ -1 +1 @@\n-line 1\n+one\n";
    const r = await applyPatchOp(ws, { mode: "worktree", patch, brief: true });
    expect([r.applied, r.cache_hint, r.changed.map((c) => c.path)]).toEqual([true, "until_dirty", ["f0.txt"]]);
    expect("lease_id" in r || "fingerprint" in r || "diff" in r).toBe(false);
    expect(readFileSync(join(repo.root, "f0.txt"), "utf8")).toBe(ten.replace("line 1\n", "one\n"));
    const logged = (await historyStatus(new FsHistoryStore(ws.repo.stateDir))).entries;
    expect(logged.map((e) => [e.conversation_id, e.file_path])).toEqual([[r.mcp_conversation_id!, "f0.txt"]]);
    // nothing to write: still no lease
    const same = await applyPatchOp(ws, { mode: "worktree", patch: "--- a/f1.txt\n+++ b/f1.txt\n@@ -1 +1 @@\n-line 1\n+line 1\n", brief: true });
    expect([same.changed_total, "lease_id" in same]).toEqual([0, false]);

    // a lease given with it: used as without brief, and it learns what the write left: once the tree has moved it
    // is stale (no new lease replaces it), and what it reports is not its own write
    const read = await readFile(ws, { mode: "worktree", path: "f1.txt" });
    const leaseId = read.cache_hint === "until_dirty" ? read.lease_id : "";
    const withLease = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch: "--- a/f1.txt\n+++ b/f1.txt\n@@ -1 +1 @@\n-line 1\n+uno\n", brief: true });
    expect([withLease.applied, "lease_id" in withLease]).toEqual([true, false]);
    writeFileSync(join(repo.root, "f2.txt"), "outside\n");
    const err = await applyPatchOp(ws, { mode: "worktree", lease_id: leaseId, patch: "--- a/f1.txt\n+++ b/f1.txt\n@@ -2 +2 @@\n-line 2\n+dos\n", brief: true }).catch((e) => e);
    expect(err.code).toBe("STALE_LEASE");
    // f1.txt, which it read, changed by its own write only (learned); f2.txt, which it did not read, is counted
    expect([err.details.changed, err.details.untouched_changed]).toEqual([[], 1]);
    expect(readFileSync(join(repo.root, "f1.txt"), "utf8")).toBe(ten.replace("line 1\n", "uno\n"));
  });

  test("snapshot mode: a new snapshot with the result; git status and every file on disk are identical", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.write("d/b.txt", ten);
    repo.commit();
    repo.write("untracked.txt", "u\n");
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    const status = repo.git("status", "--porcelain");
    const disk = treeText(repo.root);
    const patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 1\n+ONE\n--- a/d/b.txt\n+++ /dev/null\n@@ -1,10 +0,0 @@\n" + ten.split("\n").slice(0, 10).map((l) => `-${l}\n`).join("") + "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n";
    const r = await applyPatchOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, patch });
    expect(r.applied).toBe(true);
    expect(r.cache_hint).toBe("immutable");
    expect(ws.snapshots.load(sid(r)).entries.map((e) => e.path)).toEqual(["a.txt", "n.txt", "untracked.txt"]);
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: sid(r), path: "a.txt" })).content).toBe(ten.replace("line 1\n", "ONE\n"));
    expect(repo.git("status", "--porcelain")).toBe(status);
    expect(treeText(repo.root)).toEqual(disk);
  });
});

describe("workspace_apply_patch: huge input", () => {
  test("a 100 MB patch (1,000 hunks in one file and the deletion of a 100 MB file) applies", async () => {
    await using repo = await tmpRepo();
    const row = (i: number) => `row ${i} ${"x".repeat(80)}\n`;
    repo.write("edit.txt", Array.from({ length: 200_000 }, (_, i) => row(i)).join(""));
    const old = Array.from({ length: 1_100_000 }, (_, i) => `old ${i} ${"z".repeat(80)}\n`);
    repo.write("old.txt", old.join(""));
    repo.commit();
    const parts: string[] = ["--- a/edit.txt\n+++ b/edit.txt\n"];
    for (let i = 0; i < 200_000; i += 200) parts.push(`@@ -${i + 1},1 +${i + 1},1 @@\n-${row(i)}+ROW ${i}\n`);
    parts.push(`--- a/old.txt\n+++ /dev/null\n@@ -1,${old.length} +0,0 @@\n`);
    const patch = parts.join("") + old.map((l) => `-${l}`).join("");
    expect(patch.length).toBeGreaterThan(100_000_000);
    using ws = wsOf(repo);
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.changed.map((c) => [c.path, c.status])).toEqual([
      ["edit.txt", "modified"],
      ["old.txt", "deleted"],
    ]);
    const after = readFileSync(join(repo.root, "edit.txt"), "utf8");
    expect(after.split("\n").filter((l) => l.startsWith("ROW ")).length).toBe(1000);
    expect(repo.git("status", "--porcelain")).toBe(" M edit.txt\n D old.txt\n");
  }, 300_000);
});

describe("workspace_apply_patch: property", () => {
  const lineText = fc.oneof(fc.constantFrom("", "a", "}", "  x = 1;", "€", "\t", "a\r"), fc.string({ maxLength: 10 }).map((s) => s.replace(/[\n\0]/g, "")));
  const fileModel = fc.record({ lines: fc.array(lineText, { maxLength: 25 }), eol: fc.constantFrom("\n", "\r\n"), finalNewline: fc.boolean() });
  const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 4 }), insert: fc.array(lineText, { maxLength: 3 }) });
  const render = (lines: string[], eol: string, nl: boolean) => {
    const s = lines.map((l) => l + eol).join("");
    return nl || s === "" ? s : s.slice(0, -eol.length);
  };

  test("random file, random edits: the diff applied through the op gives the edit, the reverse diff the original", async () => {
    await using repo = await tmpRepo();
    repo.write("seed.txt", "seed\n");
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    await fc.assert(
      fc.asyncProperty(fileModel, fc.array(edit, { minLength: 1, maxLength: 5 }), fc.boolean(), async (file, edits, nl) => {
        const lines = [...file.lines];
        for (const e of edits) lines.splice(e.at % (lines.length + 1), e.remove, ...e.insert);
        const a = new TextEncoder().encode(render(file.lines, file.eol, file.finalNewline));
        const b = new TextEncoder().encode(render(lines, file.eol, nl));
        const created = await applyPatchOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, patch: unifiedDiff(null, { path: "p.txt", bytes: a, mode: "100644" }) || "diff --git a/p.txt b/p.txt\nnew file mode 100644\n" });
        expect(created.applied).toBe(true);
        const forward = unifiedDiff({ path: "p.txt", bytes: a, mode: "100644" }, { path: "p.txt", bytes: b, mode: "100644" });
        const edited = forward === "" ? created : await applyPatchOp(ws, { mode: "snapshot", snapshot_id: sid(created), patch: forward });
        expect(edited.applied).toBe(true);
        const got = await ws.blobs.read(ws.snapshots.load(sid(edited)).entries.find((e) => e.path === "p.txt")!.blob);
        expect(Buffer.from(got).equals(Buffer.from(b))).toBe(true);
        const reverse = unifiedDiff({ path: "p.txt", bytes: b, mode: "100644" }, { path: "p.txt", bytes: a, mode: "100644" });
        const back = reverse === "" ? edited : await applyPatchOp(ws, { mode: "snapshot", snapshot_id: sid(edited), patch: reverse });
        expect(sid(back)).toBe(sid(created));
      }),
      { numRuns: 150, seed: 4242 },
    );
  }, 120_000);
});

describe("workspace_apply_patch: a file in a directory's place", () => {
  test("refused with what to do instead, nothing written; done in the two calls the message names, the tree is the one git apply makes", async () => {
    await using repo = await tmpRepo();
    repo.write("d/x", "in\n");
    repo.write("keep.txt", "k\n");
    repo.commit();
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    const remove = "diff --git a/d/x b/d/x\ndeleted file mode 100644\n--- a/d/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-in\n";
    const create = "diff --git a/d b/d\nnew file mode 100644\n--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+now a file\n";
    // git apply takes both at once
    writeFileSync(repo.beside(".patch"), create + remove);
    repo.git("apply", "--check", repo.beside(".patch"));
    const err = await applyPatchOp(ws, { mode: "worktree", patch: create + remove }).catch((e) => e);
    expect(err).toMatchObject({ code: "INVALID_ARGUMENT", details: { path: "d", reason: "directory_in_the_way" } });
    expect(err.message).toContain("delete the directory's files in one call");
    expect(treeText(repo.root)).toEqual(before);
    expect((await applyPatchOp(ws, { mode: "worktree", patch: remove })).applied).toBe(true);
    expect((await applyPatchOp(ws, { mode: "worktree", patch: create })).applied).toBe(true);
    expect(readFileSync(join(repo.root, "d"), "utf8")).toBe("now a file\n");
  });
});
