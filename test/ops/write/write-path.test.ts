import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { applyChanges, applyChangesLocked, type WriteChange, writeChangesLocked } from "../../../src/ops/write/write-path";
import { withWorktreeLock } from "../../../src/ops/write/worktree-lock";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { reviewEdits } from "../../../src/ops/history/review";
import { configureDirHandles, type DirBackend } from "../../../src/repo/dir-handle";
import { nativeModule } from "../../../src/repo/native";
import { tmpRepo } from "../../helpers/tmp-repo";
import { dec, enc, linkOf, permOf, read, recordingRecorder, rp, temps, treeText, wsOf } from "../../helpers/workspace";

describe("write path: bytes and modes", () => {
  test("writes exact bytes, creates parents, new files get 0644 and an explicit 100755 gets 0755", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const bytes = new Uint8Array([0, 1, 2, 255, 13, 10, 0xc3]);
    const out = await applyChanges(ws, [
      { kind: "write", path: rp("deep/er/bin.dat"), bytes },
      { kind: "write", path: rp("run.sh"), bytes: enc("#!/bin/sh\n"), mode: "100755" },
    ]);
    expect(Uint8Array.from(readFileSync(join(repo.root, "deep/er/bin.dat")))).toEqual(bytes);
    expect(permOf(repo.root, "deep/er/bin.dat")).toBe(0o644);
    expect(permOf(repo.root, "run.sh")).toBe(0o755);
    expect(out.changes.map((c) => [String(c.path), c.status, c.blob])).toEqual([
      ["deep/er/bin.dat", "created", blobIdOf(bytes)],
      ["run.sh", "created", blobIdOf(enc("#!/bin/sh\n"))],
    ]);
    expect(temps(repo.root)).toEqual([]);
  });

  test("an existing file keeps its exact permission bits; changing the exec bit makes x follow r", async () => {
    await using repo = await tmpRepo();
    repo.write("private.txt", "a\n", 0o600);
    repo.write("tool", "b\n", 0o750);
    repo.write("shared.txt", "c\n", 0o664);
    using ws = wsOf(repo);
    await applyChanges(ws, [
      { kind: "write", path: rp("private.txt"), bytes: enc("A\n") },
      { kind: "write", path: rp("tool"), bytes: enc("B\n") },
      { kind: "write", path: rp("shared.txt"), bytes: enc("C\n"), mode: "100755" },
    ]);
    expect([permOf(repo.root, "private.txt"), permOf(repo.root, "tool"), permOf(repo.root, "shared.txt")]).toEqual([0o600, 0o750, 0o775]);
    await applyChanges(ws, [{ kind: "write", path: rp("tool"), bytes: enc("B\n"), mode: "100644" }]);
    expect(permOf(repo.root, "tool")).toBe(0o640);
    expect(read(repo.root, "shared.txt")).toBe("C\n");
  });

  test("mode 120000 writes a symlink whose text is the bytes; a link replaced by a file (follow off) becomes a file", async () => {
    await using repo = await tmpRepo();
    repo.write("target.txt", "t\n");
    repo.symlink("old-link", "target.txt");
    using ws = wsOf(repo);
    await applyChanges(ws, [
      { kind: "write", path: rp("new-link"), bytes: enc("target.txt"), mode: "120000" },
      { kind: "write", path: rp("old-link"), bytes: enc("now a file\n"), mode: "100644" },
    ]);
    expect(linkOf(repo.root, "new-link")).toBe("target.txt");
    expect(lstatSync(join(repo.root, "old-link")).isFile()).toBe(true);
    expect(read(repo.root, "old-link")).toBe("now a file\n");
    expect(read(repo.root, "target.txt")).toBe("t\n");
  });

  test("deletes remove files and the directories they leave empty, never the root", async () => {
    await using repo = await tmpRepo();
    repo.write("a/b/c.txt", "c");
    repo.write("a/keep.txt", "k");
    repo.write("solo/only.txt", "o");
    using ws = wsOf(repo);
    await applyChanges(ws, [
      { kind: "delete", path: rp("a/b/c.txt") },
      { kind: "delete", path: rp("solo/only.txt") },
    ]);
    expect(existsSync(join(repo.root, "a/b"))).toBe(false);
    expect(existsSync(join(repo.root, "a/keep.txt"))).toBe(true);
    expect(existsSync(join(repo.root, "solo"))).toBe(false);
    expect(existsSync(repo.root)).toBe(true);
  });

  test("a move renames the file itself (same inode) and creates the destination's parents", async () => {
    await using repo = await tmpRepo();
    repo.write("src/x.txt", "x\n", 0o755);
    using ws = wsOf(repo);
    const ino = lstatSync(join(repo.root, "src/x.txt")).ino;
    const out = await applyChanges(ws, [{ kind: "move", from: rp("src/x.txt"), path: rp("lib/deep/y.txt") }]);
    expect(lstatSync(join(repo.root, "lib/deep/y.txt")).ino).toBe(ino);
    expect(permOf(repo.root, "lib/deep/y.txt")).toBe(0o755);
    expect(existsSync(join(repo.root, "src"))).toBe(false);
    expect(out.changes[0]).toMatchObject({ status: "renamed", path: "lib/deep/y.txt", from: "src/x.txt" });
  });

  test("a move with new content (a rename with edits) writes the new bytes and removes the source", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old\n");
    using ws = wsOf(repo);
    await applyChanges(ws, [{ kind: "move", from: rp("a.txt"), path: rp("b.txt"), bytes: enc("new\n") }]);
    expect(treeText(repo.root)).toEqual({ "b.txt": "new\n" });
  });

  test("a file may become a directory in one change set (delete a, write a/b)", async () => {
    await using repo = await tmpRepo();
    repo.write("a", "file\n");
    using ws = wsOf(repo);
    await applyChanges(ws, [
      { kind: "write", path: rp("a/b"), bytes: enc("inside\n") },
      { kind: "delete", path: rp("a") },
    ]);
    expect(treeText(repo.root)).toEqual({ "a/b": "inside\n" });
  });
});

describe("write path: validation before the first byte", () => {
  test("one failing precondition anywhere in the set writes nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("taken.txt", "t\n");
    repo.symlink("alias", ".");
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    const attempts = [
      [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }, { kind: "move", from: rp("b.txt"), path: rp("taken.txt") }],
      [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }, { kind: "delete", path: rp("missing.txt") }],
      [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }, { kind: "write", path: rp("b.txt"), bytes: enc("B\n"), expect: blobIdOf(enc("not b\n")) }],
      [{ kind: "write", path: rp("new.txt"), bytes: enc("n\n") }, { kind: "write", path: rp("a.txt/under"), bytes: enc("x") }],
      [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }, { kind: "write", path: rp("alias/a.txt"), bytes: enc("AA\n") }],
      [{ kind: "write", path: rp("x"), bytes: enc("file") }, { kind: "write", path: rp("x/y"), bytes: enc("under") }],
      [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }, { kind: "write", path: rp(".git/config"), bytes: enc("x") }],
    ] as const;
    const codes: string[] = [];
    for (const changes of attempts) {
      codes.push((await applyChanges(ws, changes as never).catch((e) => e)).code);
      expect(treeText(repo.root)).toEqual(before);
      expect(temps(repo.root)).toEqual([]);
    }
    expect(codes).toEqual(["INVALID_ARGUMENT", "NOT_FOUND", "REPO_CHANGED", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "PERMISSION_DENIED"]);
  });

  test("compare-and-swap: REPO_CHANGED carries the current blob; null expects the path to be absent", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "current\n");
    using ws = wsOf(repo);
    const err = await applyChanges(ws, [{ kind: "write", path: rp("f.txt"), bytes: enc("x"), expect: blobIdOf(enc("stale\n")) }]).catch((e) => e);
    expect(err.code).toBe("REPO_CHANGED");
    expect(err.details.current_blob).toBe(blobIdOf(enc("current\n")));
    const err2 = await applyChanges(ws, [{ kind: "write", path: rp("f.txt"), bytes: enc("x"), expect: null }]).catch((e) => e);
    expect(err2.code).toBe("REPO_CHANGED");
    await applyChanges(ws, [{ kind: "write", path: rp("f.txt"), bytes: enc("ok\n"), expect: blobIdOf(enc("current\n")) }]);
    expect(read(repo.root, "f.txt")).toBe("ok\n");
  });

  test("a move never replaces an existing destination unless overwrite is set, and never onto itself", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    using ws = wsOf(repo);
    const e1 = await applyChanges(ws, [{ kind: "move", from: rp("a.txt"), path: rp("b.txt") }]).catch((e) => e);
    expect(e1.code).toBe("INVALID_ARGUMENT");
    expect(read(repo.root, "b.txt")).toBe("b\n");
    const e2 = await applyChanges(ws, [{ kind: "move", from: rp("a.txt"), path: rp("a.txt") }]).catch((e) => e);
    expect(e2.code).toBe("INVALID_ARGUMENT");
    await applyChanges(ws, [{ kind: "move", from: rp("a.txt"), path: rp("b.txt"), overwrite: true }]);
    expect(treeText(repo.root)).toEqual({ "b.txt": "a\n" });
  });

  test("a non-empty directory is not deleted as one path", async () => {
    await using repo = await tmpRepo();
    repo.write("d/f.txt", "f");
    mkdirSync(join(repo.root, "empty"));
    using ws = wsOf(repo);
    expect((await applyChanges(ws, [{ kind: "delete", path: rp("d") }]).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    await applyChanges(ws, [{ kind: "delete", path: rp("empty") }]);
    expect(existsSync(join(repo.root, "empty"))).toBe(false);
  });
});

describe("write path: the edit-history hook", () => {
  test("prepare sees the old bytes with the lock held and the new states to come, commit sees the new bytes on disk", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old a\n");
    repo.write("m.txt", "moving\n");
    repo.write("gone.txt", "bye\n");
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    const out = await applyChanges(
      ws,
      [
        { kind: "write", path: rp("a.txt"), bytes: enc("new a\n"), operation: "edit" },
        { kind: "write", path: rp("n.txt"), bytes: enc("created\n") },
        { kind: "move", from: rp("m.txt"), path: rp("sub/m.txt") },
        { kind: "delete", path: rp("gone.txt") },
      ],
      { recorder: rec, conversationId: "conv_1_abc", toolName: "edit_file_diff" },
    );
    expect(rec.calls.map((c) => c.phase)).toEqual(["prepare", "seal", "commit"]);
    const [prep, seal, commit] = rec.calls;
    // Sealed (beside the staging) before the first byte is published.
    expect(seal!.onDisk).toEqual(["old a\n", null, null, "bye\n"]);
    expect(prep!.ctx).toEqual({ conversationId: "conv_1_abc", toolName: "edit_file_diff" });
    expect(prep!.changes!.map((c) => [c.operation, c.path, c.sourcePath ?? null, dec(c.before?.bytes), dec(c.after?.bytes), c.after === null])).toEqual([
      ["edit", "a.txt", null, "old a\n", "new a\n", false],
      ["create", "n.txt", null, null, "created\n", false],
      ["move", "sub/m.txt", "m.txt", "moving\n", "moving\n", false],
      ["delete", "gone.txt", null, "bye\n", null, true],
    ]);
    expect(prep!.onDisk).toEqual(["old a\n", null, null, "bye\n"]);
    expect(commit!.changes!.map((c) => [c.path, dec(c.after?.bytes), c.after?.mode ?? null])).toEqual([
      ["a.txt", "new a\n", "100644"],
      ["n.txt", "created\n", "100644"],
      ["sub/m.txt", "moving\n", "100644"],
      ["gone.txt", null, null],
    ]);
    expect(commit!.onDisk).toEqual(["new a\n", "created\n", "moving\n", null]);
    expect(out.editIds).toEqual(["edit_0", "edit_1", "edit_2", "edit_3"]);
  });

  test("an overwriting move records the replaced destination as a delete first", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    await applyChanges(ws, [{ kind: "move", from: rp("a.txt"), path: rp("b.txt"), overwrite: true }], { recorder: rec, conversationId: "c", toolName: "move_file" });
    expect(rec.calls.find((c) => c.phase === "commit")!.changes!.map((c) => [c.operation, c.path, dec(c.before?.bytes)])).toEqual([
      ["delete", "b.txt", "b\n"],
      ["move", "b.txt", "a\n"],
    ]);
  });

  test("a failure while publishing rolls back what was published and aborts the record", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old a\n");
    using ws = wsOf(repo);
    // Between validation and publish another program puts a file where a directory must be created.
    const rec = recordingRecorder(repo.root, { duringPrepare: () => writeFileSync(join(repo.root, "late"), "in the way") });
    const err = await applyChanges(
      ws,
      [
        { kind: "write", path: rp("a.txt"), bytes: enc("new a\n") },
        { kind: "write", path: rp("late/file.txt"), bytes: enc("x") },
      ],
      { recorder: rec, conversationId: "c", toolName: "write_file" },
    ).catch((e) => e);
    expect(err.code).toBe("REPO_CHANGED");
    expect(rec.calls.map((c) => c.phase)).toEqual(["prepare", "seal", "abort"]);
    expect(read(repo.root, "a.txt")).toBe("old a\n");
    expect(temps(repo.root)).toEqual([]);
  });

  test("a failure while publishing waits for the renames in flight, then takes every file back", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`d/f${i}.txt`, `old ${i}\n`);
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    // The last write needs a directory where another program puts a file after validation.
    const rec = recordingRecorder(repo.root, { duringPrepare: () => writeFileSync(join(repo.root, "late"), "in the way") });
    const changes: WriteChange[] = Array.from({ length: 200 }, (_, i) => ({ kind: "write", path: rp(`d/f${i}.txt`), bytes: enc(`new ${i}\n`) }));
    changes.push({ kind: "write", path: rp("late/file.txt"), bytes: enc("x") });
    const err = await applyChanges(ws, changes, { recorder: rec, conversationId: "c", toolName: "write_file" }).catch((e) => e);
    expect(err.code).toBeDefined();
    await Bun.sleep(50); // a rename still in flight would land now
    const after = treeText(repo.root);
    delete after.late;
    expect(after).toEqual(before);
    expect(temps(repo.root)).toEqual([]);
  });

  test("a history that fails to record takes the files back: every write is recorded or undone", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old\n");
    repo.write("d.txt", "del\n");
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    const rec = recordingRecorder(repo.root, { failCommit: true });
    const err = await applyChanges(
      ws,
      [
        { kind: "write", path: rp("a.txt"), bytes: enc("new\n") },
        { kind: "write", path: rp("n/new.txt"), bytes: enc("n\n") },
        { kind: "delete", path: rp("d.txt") },
      ],
      { recorder: rec, conversationId: "c", toolName: "write_file" },
    ).catch((e) => e);
    expect(err.message).toContain("history store is full");
    expect(rec.calls.map((c) => c.phase)).toEqual(["prepare", "seal", "commit", "abort"]);
    expect(treeText(repo.root)).toEqual(before);
  });

  test("a request cancelled before publishing writes nothing, even after staging", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old\n");
    using ws = wsOf(repo);
    const controller = new AbortController();
    const rec = recordingRecorder(repo.root, { duringPrepare: () => controller.abort() });
    const err = await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("new\n") }], { recorder: rec, signal: controller.signal }).catch((e) => e);
    expect(err.details.cancelled).toBe(true);
    expect(rec.calls.map((c) => c.phase)).toEqual(["prepare", "seal", "abort"]);
    expect(read(repo.root, "a.txt")).toBe("old\n");
    expect(temps(repo.root)).toEqual([]);
  });

  test("writeChangesLocked needs the lock, and records nothing", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    ws.recorder = rec;
    expect((await writeChangesLocked(ws, [{ kind: "write", path: rp("x.txt"), bytes: enc("x") }]).catch((e) => e)).code).toBe("INTERNAL");
    expect(existsSync(join(repo.root, "x.txt"))).toBe(false);
    await withWorktreeLock(ws, () => writeChangesLocked(ws, [{ kind: "write", path: rp("x.txt"), bytes: enc("x") }]));
    expect(read(repo.root, "x.txt")).toBe("x");
    expect(rec.calls).toEqual([]);
    // applyChangesLocked inside the lock and a nested applyChanges (re-entrant) both work.
    await withWorktreeLock(ws, async () => {
      await applyChangesLocked(ws, [{ kind: "write", path: rp("y.txt"), bytes: enc("y") }], {});
      await applyChanges(ws, [{ kind: "write", path: rp("z.txt"), bytes: enc("z") }]);
    });
    expect([read(repo.root, "y.txt"), read(repo.root, "z.txt")]).toEqual(["y", "z"]);
  });
});

describe("write path: every way of holding directories", () => {
  const backends: DirBackend[] = [...(nativeModule() ? (["native"] as const) : []), ...(process.platform === "linux" ? (["proc"] as const) : []), "paths"];
  afterEach(() => configureDirHandles({ backend: null }));
  for (const backend of backends) {
    test(`${backend}: creations in new directories, edits, a symlink, a move across directories, deletes that prune, a recorded history, a reject`, async () => {
      configureDirHandles({ backend });
      await using repo = await tmpRepo();
      repo.write("a.txt", "a\n");
      repo.write("old/m.txt", "moving\n");
      repo.write("old/gone.txt", "bye\n");
      repo.write("keep/x.txt", "x\n");
      using ws = wsOf(repo);
      const before = treeText(repo.root);
      const out = await applyChanges(
        ws,
        [
          { kind: "write", path: rp("a.txt"), bytes: enc("A\n"), operation: "edit" },
          { kind: "write", path: rp("new/deep/er/n.txt"), bytes: enc("n\n") },
          { kind: "write", path: rp("new/link"), bytes: enc("deep/er/n.txt"), mode: "120000" },
          { kind: "move", from: rp("old/m.txt"), path: rp("keep/m.txt") },
          { kind: "delete", path: rp("old/gone.txt") },
        ],
        { recorder: ws.recorder, conversationId: "conv_1_backend", toolName: "edit_file_diff" },
      );
      expect(out.editIds).toHaveLength(5);
      expect(treeText(repo.root)).toEqual({ "a.txt": "A\n", "keep/m.txt": "moving\n", "keep/x.txt": "x\n", "new/deep/er/n.txt": "n\n", "new/link": "-> deep/er/n.txt" });
      expect(existsSync(join(repo.root, "old"))).toBe(false);
      expect(temps(repo.root)).toEqual([]);
      const undo = await reviewEdits(ws, new FsHistoryStore(ws.repo.stateDir), { action: "reject", conversationId: "conv_1_backend" });
      expect(undo.changed).toHaveLength(5);
      expect(treeText(repo.root)).toEqual(before);
    });
  }
});
