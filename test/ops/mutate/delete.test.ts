import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { deleteOp } from "../../../src/ops/mutate/delete";
import { tmpRepo } from "../../helpers/tmp-repo";
import { read, recordingRecorder, treeText, wsOf } from "../../helpers/workspace";

describe("workspace_delete in the work tree", () => {
  test("a file; a symlink (the link, not its target); a missing path is NOT_FOUND", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("t.txt", "t\n");
    repo.symlink("l", "t.txt");
    repo.commit();
    using ws = wsOf(repo);
    const r = await deleteOp(ws, { mode: "worktree", path: "a.txt" });
    expect(r.changed).toEqual([{ path: "a.txt", status: "deleted" }]);
    expect(r.path).toBe("a.txt");
    await deleteOp(ws, { mode: "worktree", path: "l" });
    expect(treeText(repo.root)).toEqual({ "t.txt": "t\n" });
    expect((await deleteOp(ws, { mode: "worktree", path: "a.txt" }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect((await deleteOp(ws, { mode: "worktree", path: "." }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("a directory needs recursive:true; then every visible file goes, each recorded, ignored files stay and are counted", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitignore", "*.log\n");
    repo.write("d/tracked.txt", "t\n");
    repo.write("d/sub/deep.txt", "d\n");
    repo.commit();
    repo.write("d/untracked.txt", "u\n");
    repo.write("d/sub/build.log", "ignored\n");
    repo.write("other.txt", "o\n");
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    ws.recorder = rec;
    const err = await deleteOp(ws, { mode: "worktree", path: "d" }).catch((e) => e);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain("recursive");
    const r = await deleteOp(ws, { mode: "worktree", path: "d/", recursive: true });
    expect(r.changed.map((c) => c.path)).toEqual(["d/sub/deep.txt", "d/tracked.txt", "d/untracked.txt"]);
    expect(r.ignored_kept).toBe(1);
    expect(treeText(repo.root)).toEqual({ ".gitignore": "*.log\n", "d/sub/build.log": "ignored\n", "other.txt": "o\n" });
    expect(rec.calls.find((c) => c.phase === "commit")!.changes!.map((c) => [c.operation, String(c.path)])).toEqual([
      ["delete", "d/sub/deep.txt"],
      ["delete", "d/tracked.txt"],
      ["delete", "d/untracked.txt"],
    ]);
    expect(rec.calls[0]!.ctx!.toolName).toBe("delete_file");
  });

  test("a directory holding only ignored files is refused by name, not deleted", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitignore", "build/\n");
    repo.write("build/out.js", "o\n");
    using ws = wsOf(repo);
    const err = await deleteOp(ws, { mode: "worktree", path: "build", recursive: true }).catch((e) => e);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.ignored).toBe(1);
    expect(read(repo.root, "build/out.js")).toBe("o\n");
  });

  test("a directory with only visible files disappears entirely; an empty directory is removed", async () => {
    await using repo = await tmpRepo();
    repo.write("d/a/b.txt", "b\n");
    repo.write("keep.txt", "k\n");
    mkdirSync(join(repo.root, "empty"));
    using ws = wsOf(repo);
    const r = await deleteOp(ws, { mode: "worktree", path: "d", recursive: true });
    expect(r.ignored_kept).toBeUndefined();
    expect(existsSync(join(repo.root, "d"))).toBe(false);
    await deleteOp(ws, { mode: "worktree", path: "empty", recursive: true });
    expect(existsSync(join(repo.root, "empty"))).toBe(false);
    expect(read(repo.root, "keep.txt")).toBe("k\n");
  });
});

describe("workspace_delete in a snapshot", () => {
  test("files and (recursively) directories leave the derived manifest; the disk is untouched", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("d/x.txt", "x\n");
    repo.write("d/y/z.txt", "z\n");
    repo.commit();
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    const r1 = await deleteOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt" });
    const id1 = (r1 as { snapshot_id: `sha256:${string}` }).snapshot_id;
    expect(ws.snapshots.load(id1).entries.map((e) => e.path)).toEqual(["d/x.txt", "d/y/z.txt"]);
    expect((await deleteOp(ws, { mode: "snapshot", snapshot_id: id1, path: "d" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    const r2 = await deleteOp(ws, { mode: "snapshot", snapshot_id: id1, path: "d", recursive: true });
    expect(r2.changed.map((c) => c.path)).toEqual(["d/x.txt", "d/y/z.txt"]);
    expect(ws.snapshots.load((r2 as { snapshot_id: `sha256:${string}` }).snapshot_id).entries).toEqual([]);
    expect((await deleteOp(ws, { mode: "snapshot", snapshot_id: id1, path: "a.txt" }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect(repo.git("status", "--porcelain")).toBe("");
  });
});
