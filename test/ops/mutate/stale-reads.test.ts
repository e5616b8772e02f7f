import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf, type BlobId } from "../../../src/core/hash";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { deleteOp } from "../../../src/ops/mutate/delete";
import type { WrittenFile } from "../../../src/ops/mutate/mutation";
import { moveOp } from "../../../src/ops/mutate/move";
import { describeStaleReads } from "../../../src/ops/mutate/stale-reads";
import type { RepoPath } from "../../../src/core/repo-path";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { KEEP_AFTER_MS, readFile } from "../../../src/ops/snapshot/file";
import { failure } from "../../helpers/errors";
import { tmpRepo } from "../../helpers/tmp-repo";
import { read, wsOf } from "../../helpers/workspace";

const pinsOf = (entries: [string, string | null][]) => new Map(entries as [string, BlobId | null][]);

const refusal = (call: Promise<unknown>) => failure(call);

describe("writes checked against the caller's pins (the session auto-lease, op level)", () => {
  test("write_file over a pinned file that changed on disk is refused: the file, both blobs and the diff; nothing written", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\ntwo\nthree\n");
    repo.commit();
    using ws = wsOf(repo);
    const a1 = blobIdOf("one\ntwo\nthree\n");
    // the read keeps what it showed, so the refusal can diff against it
    let shown: { path: string; blob: string } | null = null;
    await readFile(ws, { mode: "worktree", path: "a.txt", onShown: (s) => (shown = s) });
    expect(shown!).toEqual({ path: "a.txt", blob: a1 });
    writeFileSync(join(repo.root, "a.txt"), "one\nTWO\nthree\n");
    const a2 = blobIdOf("one\nTWO\nthree\n");

    const err = await refusal(writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "mine\n", pins: pinsOf([["a.txt", a1]]) }));
    expect(err.code).toBe("REPO_CHANGED");
    expect(err.details.reason).toBe("stale_read");
    expect(err.details.files).toEqual([
      { path: "a.txt", pinned: a1, current: a2, diff: "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n", diff_complete: true },
    ]);
    expect(err.message).toContain("a.txt");
    expect(read(repo.root, "a.txt")).toBe("one\nTWO\nthree\n");
  });

  test("what a write wrote is kept after its answer, soon or at once when a refusal needs it first", async () => {
    await using repo = await tmpRepo();
    const names = Array.from({ length: 200 }, (_, i) => `f${String(i).padStart(3, "0")}.txt`);
    for (const n of names) repo.write(n, "old\n");
    repo.commit();
    using ws = wsOf(repo);
    const content = (n: string) => Array.from({ length: 40 }, (_, i) => `${n} line ${i}\n`).join("");
    const patchOf = (list: string[]) => list.map((n) => `--- a/${n}\n+++ b/${n}\n@@ -1 +1,40 @@\n-old\n${content(n).replace(/^/gm, "+").slice(0, -1)}\n`).join("");
    let written: WrittenFile[] = [];
    const out = await applyPatchOp(ws, { mode: "worktree", patch: patchOf(names.slice(0, 100)), onWritten: (f) => (written = f) });
    expect((out as { applied: boolean }).applied).toBe(true);
    expect(written.length).toBe(100);
    // not yet when the answer is made; kept a moment later with nothing asking for it
    expect(await ws.blobs.has(blobIdOf(content(names[99]!)))).toBe(false);
    await Bun.sleep(KEEP_AFTER_MS + 400);
    expect(await ws.blobs.has(blobIdOf(content(names[99]!)))).toBe(true);

    await applyPatchOp(ws, { mode: "worktree", patch: patchOf(names.slice(100)), onWritten: (f) => (written = f) });
    // someone else changes a line of the last file, and a refusal over the pin the write left is described at once,
    // before the keeping's moment: it keeps what it needs first, and diffs from it
    const last = names[names.length - 1]!;
    const changed = content(last).replace("line 7\n", "line seven\n");
    const [file] = await describeStaleReads(ws, [{ path: last as RepoPath, pinned: blobIdOf(content(last)), current: blobIdOf(changed), state: { bytes: Buffer.from(changed), mode: "100644" } }]);
    expect(file!.diff_complete).toBe(true);
    expect(file!.diff).toContain("-f199.txt line 7\n+f199.txt line seven\n");
  });

  test("a pin equal to the disk, a path never pinned, and an explicit lease_id all pass", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.commit();
    using ws = wsOf(repo);
    await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "A\n", pins: pinsOf([["a.txt", blobIdOf("a\n")]]) });
    expect(read(repo.root, "a.txt")).toBe("A\n");
    await writeFileOp(ws, { mode: "worktree", path: "b.txt", content: "B\n", pins: pinsOf([["a.txt", blobIdOf("stale\n")]]) });
    expect(read(repo.root, "b.txt")).toBe("B\n");
    // a lease given: its semantics, the pins are not consulted
    const file = await readFile(ws, { mode: "worktree", path: "a.txt" });
    await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "leased\n", lease_id: (file as { lease_id: string }).lease_id, pins: pinsOf([["a.txt", blobIdOf("stale\n")]]) });
    expect(read(repo.root, "a.txt")).toBe("leased\n");
  });

  test("what the write left is reported for pinning: blobs written, null for a removed path", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("m.txt", "m\n");
    repo.commit();
    using ws = wsOf(repo);
    let written: WrittenFile[] = [];
    await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "A\n", onWritten: (f) => (written = f) });
    expect(written).toEqual([{ path: "a.txt", blob: blobIdOf("A\n") }]);
    await moveOp(ws, { mode: "worktree", from: "m.txt", to: "n.txt", onWritten: (f) => (written = f) });
    expect(written).toEqual([
      { path: "m.txt", blob: null },
      { path: "n.txt", blob: blobIdOf("m\n") },
    ]);
    await deleteOp(ws, { mode: "worktree", path: "n.txt", onWritten: (f) => (written = f) });
    expect(written).toEqual([{ path: "n.txt", blob: null }]);
  });

  test("delete and move over a pinned file that changed are refused; a path pinned as deleted and recreated by someone else is refused too", async () => {
    await using repo = await tmpRepo();
    repo.write("d.txt", "d\n");
    repo.write("m.txt", "m\n");
    repo.commit();
    using ws = wsOf(repo);
    writeFileSync(join(repo.root, "d.txt"), "changed\n");
    writeFileSync(join(repo.root, "m.txt"), "changed\n");
    const del = await refusal(deleteOp(ws, { mode: "worktree", path: "d.txt", pins: pinsOf([["d.txt", blobIdOf("d\n")]]) }));
    expect(del.details.files).toMatchObject([{ path: "d.txt", pinned: blobIdOf("d\n"), current: blobIdOf("changed\n") }]);
    expect(existsSync(join(repo.root, "d.txt"))).toBe(true);
    const mv = await refusal(moveOp(ws, { mode: "worktree", from: "m.txt", to: "n.txt", pins: pinsOf([["m.txt", blobIdOf("m\n")]]) }));
    expect(mv.details.files).toMatchObject([{ path: "m.txt", current: blobIdOf("changed\n") }]);
    expect(existsSync(join(repo.root, "n.txt"))).toBe(false);
    // the session deleted x.txt (pinned null); someone created it since: writing it is refused
    writeFileSync(join(repo.root, "x.txt"), "theirs\n");
    const created = await refusal(writeFileOp(ws, { mode: "worktree", path: "x.txt", content: "mine\n", pins: pinsOf([["x.txt", null]]) }));
    expect(created.details.files).toMatchObject([{ path: "x.txt", pinned: null, current: blobIdOf("theirs\n"), diff_complete: true }]);
    expect(read(repo.root, "x.txt")).toBe("theirs\n");
  });

  test("a pinned file deleted on disk: the write is refused and says it is gone", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    await readFile(ws, { mode: "worktree", path: "a.txt", onShown: () => undefined });
    repo.git("rm", "-q", "a.txt");
    const err = await refusal(writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "mine\n", pins: pinsOf([["a.txt", blobIdOf("a\n")]]) }));
    expect(err.details.files).toMatchObject([{ path: "a.txt", pinned: blobIdOf("a\n"), current: null, diff_complete: true }]);
    expect(existsSync(join(repo.root, "a.txt"))).toBe(false);
  });

  test("without the pinned content kept, the refusal still names the file and both blobs, and says it has no diff", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const never = blobIdOf("content nobody stored\n");
    const err = await refusal(writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "x\n", pins: pinsOf([["a.txt", never]]) }));
    expect(err.details.files).toEqual([{ path: "a.txt", pinned: never, current: blobIdOf("a\n"), diff_complete: false }]);
  });

  test("a patch whose context still matches applies over a changed pinned file, with a warning naming it and what had changed", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    repo.commit();
    using ws = wsOf(repo);
    const a1 = blobIdOf("one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    await readFile(ws, { mode: "worktree", path: "a.txt", onShown: () => undefined });
    writeFileSync(join(repo.root, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    const patch = "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n five\n-six\n+SIX\n seven\n";
    let written: WrittenFile[] = [];
    const out = await applyPatchOp(ws, { mode: "worktree", patch, pins: pinsOf([["a.txt", a1]]), onWritten: (f) => (written = f) });
    expect(out.applied).toBe(true);
    expect(read(repo.root, "a.txt")).toBe("ONE\ntwo\nthree\nfour\nfive\nSIX\nseven\n");
    expect(out.stale_reads).toMatchObject([{ path: "a.txt", pinned: a1, current: blobIdOf("ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n"), diff_complete: true }]);
    expect(out.stale_reads?.[0]?.diff).toContain("-one\n+ONE\n");
    expect(out.warnings[0]).toContain("a.txt");
    expect(out.warnings[0]).toContain("changed since this session read it");
    // the change since the read was shown whole: the written blob may be pinned
    expect(written).toEqual([{ path: "a.txt", blob: blobIdOf("ONE\ntwo\nthree\nfour\nfive\nSIX\nseven\n") }]);
  });

  test("a patch over a changed file whose change was not shown whole is applied, and what it wrote is marked unseen (never pinned)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\ntwo\nthree\n");
    repo.commit();
    using ws = wsOf(repo);
    writeFileSync(join(repo.root, "a.txt"), "one\ntwo\nthree\nmore\n");
    let written: WrittenFile[] = [];
    const out = await applyPatchOp(ws, {
      mode: "worktree",
      patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
      pins: pinsOf([["a.txt", blobIdOf("never stored\n")]]),
      onWritten: (f) => (written = f),
    });
    expect(out.applied).toBe(true);
    expect(out.stale_reads).toMatchObject([{ path: "a.txt", diff_complete: false }]);
    expect(out.warnings[0]).toContain("read it again");
    expect(written).toEqual([{ path: "a.txt", blob: blobIdOf("one\nTWO\nthree\nmore\n"), unseen: true }]);
  });

  test('staleWrites "refuse": the same patch is refused and nothing is written', async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\ntwo\nthree\n");
    repo.commit();
    using ws = wsOf(repo);
    await readFile(ws, { mode: "worktree", path: "a.txt", onShown: () => undefined });
    writeFileSync(join(repo.root, "a.txt"), "one\ntwo\nthree\nfour\n");
    const err = await refusal(
      applyPatchOp(ws, {
        mode: "worktree",
        patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        pins: pinsOf([["a.txt", blobIdOf("one\ntwo\nthree\n")]]),
        staleWrites: "refuse",
      }),
    );
    expect(err.code).toBe("REPO_CHANGED");
    expect(err.details.files).toMatchObject([{ path: "a.txt", diff_complete: true }]);
    expect(read(repo.root, "a.txt")).toBe("one\ntwo\nthree\nfour\n");
  });

  test("a read through a symlink pins the target's path, which is what a write through the link checks", async () => {
    await using repo = await tmpRepo();
    repo.write("real.txt", "r\n");
    repo.symlink("link.txt", "real.txt");
    repo.commit();
    using ws = wsOf(repo);
    let shown: { path: string; blob: string } | null = null;
    await readFile(ws, { mode: "worktree", path: "link.txt", onShown: (s) => (shown = s) });
    expect(shown!).toEqual({ path: "real.txt", blob: blobIdOf("r\n") });
    writeFileSync(join(repo.root, "real.txt"), "R\n");
    const err = await refusal(writeFileOp(ws, { mode: "worktree", path: "link.txt", content: "x\n", pins: pinsOf([["real.txt", blobIdOf("r\n")]]) }));
    expect(err.details.files).toMatchObject([{ path: "real.txt" }]);
  });
});
