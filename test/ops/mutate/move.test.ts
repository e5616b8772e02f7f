import { describe, expect, test } from "bun:test";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { moveOp } from "../../../src/ops/mutate/move";
import { tmpRepo } from "../../helpers/tmp-repo";
import { linkOf, permOf, recordingRecorder, treeText, wsOf } from "../../helpers/workspace";

describe("workspace_move in the work tree", () => {
  test("renames a file across directories, creating parents and pruning the emptied source directory", async () => {
    await using repo = await tmpRepo();
    repo.write("src/tool.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    ws.recorder = rec;
    const r = await moveOp(ws, { mode: "worktree", from: "src/tool.sh", to: "bin/tools/tool.sh" });
    expect(r.changed).toEqual([{ path: "bin/tools/tool.sh", status: "renamed", from: "src/tool.sh", blob: r.changed[0]!.blob, mode: "100755" }]);
    expect(treeText(repo.root)).toEqual({ "bin/tools/tool.sh": "#!/bin/sh\n" });
    expect(permOf(repo.root, "bin/tools/tool.sh")).toBe(0o755);
    expect(rec.calls[0]!.ctx!.toolName).toBe("move_file");
    expect(rec.calls.find((c) => c.phase === "commit")!.changes!.map((c) => [c.operation, String(c.sourcePath), String(c.path)])).toEqual([["move", "src/tool.sh", "bin/tools/tool.sh"]]);
  });

  test("never overwrites unless overwrite:true; onto itself and onto a directory are refused", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("dir/x.txt", "x\n");
    using ws = wsOf(repo);
    const e = await moveOp(ws, { mode: "worktree", from: "a.txt", to: "b.txt" }).catch((x) => x);
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("overwrite");
    expect((await moveOp(ws, { mode: "worktree", from: "a.txt", to: "./a.txt" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    expect((await moveOp(ws, { mode: "worktree", from: "a.txt", to: "dir" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    expect((await moveOp(ws, { mode: "worktree", from: "missing.txt", to: "z.txt" }).catch((x) => x)).code).toBe("NOT_FOUND");
    expect(treeText(repo.root)).toEqual({ "a.txt": "a\n", "b.txt": "b\n", "dir/x.txt": "x\n" });
    await moveOp(ws, { mode: "worktree", from: "a.txt", to: "b.txt", overwrite: true });
    expect(treeText(repo.root)).toEqual({ "b.txt": "a\n", "dir/x.txt": "x\n" });
  });

  test("a symlink is moved as a link, its text unchanged", async () => {
    await using repo = await tmpRepo();
    repo.write("t.txt", "t\n");
    repo.symlink("l", "t.txt");
    using ws = wsOf(repo);
    const r = await moveOp(ws, { mode: "worktree", from: "l", to: "l2" });
    expect(linkOf(repo.root, "l2")).toBe("t.txt");
    expect(r.changed[0]!.mode).toBe("120000");
  });

  test("a directory moves file by file to a new path; ignored files stay and are counted; into itself or onto an existing path is refused", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitignore", "*.o\n");
    repo.write("lib/a.c", "a\n");
    repo.write("lib/sub/b.c", "b\n");
    repo.commit();
    repo.write("lib/sub/b.o", "obj\n");
    repo.write("lib/new.c", "n\n");
    repo.write("taken/x", "x\n");
    using ws = wsOf(repo);
    expect((await moveOp(ws, { mode: "worktree", from: "lib", to: "lib/inner" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    expect((await moveOp(ws, { mode: "worktree", from: "lib", to: "taken" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    const r = await moveOp(ws, { mode: "worktree", from: "lib", to: "src/lib" });
    expect(r.changed.map((c) => [c.from, c.path])).toEqual([
      ["lib/a.c", "src/lib/a.c"],
      ["lib/new.c", "src/lib/new.c"],
      ["lib/sub/b.c", "src/lib/sub/b.c"],
    ]);
    expect(r.ignored_kept).toBe(1);
    expect(treeText(repo.root)).toEqual({
      ".gitignore": "*.o\n",
      "lib/sub/b.o": "obj\n",
      "src/lib/a.c": "a\n",
      "src/lib/new.c": "n\n",
      "src/lib/sub/b.c": "b\n",
      "taken/x": "x\n",
    });
  });
});

describe("workspace_move in a snapshot", () => {
  test("files and directories move in the derived manifest; the rules match the work tree; the disk is untouched", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("d/x.txt", "x\n", 0o755);
    repo.commit();
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    const sid = base.snapshot_id;
    expect((await moveOp(ws, { mode: "snapshot", snapshot_id: sid, from: "a.txt", to: "b.txt" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    expect((await moveOp(ws, { mode: "snapshot", snapshot_id: sid, from: "a.txt", to: "a.txt" }).catch((x) => x)).code).toBe("INVALID_ARGUMENT");
    const r = await moveOp(ws, { mode: "snapshot", snapshot_id: sid, from: "d", to: "e/f" });
    const entries = ws.snapshots.load((r as { snapshot_id: `sha256:${string}` }).snapshot_id).entries;
    expect(entries).toEqual([
      { path: "a.txt", blob: entries[0]!.blob },
      { path: "b.txt", blob: entries[1]!.blob },
      { path: "e/f/x.txt", blob: entries[2]!.blob, mode: "100755" },
    ]);
    const o = await moveOp(ws, { mode: "snapshot", snapshot_id: sid, from: "a.txt", to: "b.txt", overwrite: true });
    expect(ws.snapshots.load((o as { snapshot_id: `sha256:${string}` }).snapshot_id).entries.map((e) => e.path)).toEqual(["b.txt", "d/x.txt"]);
    expect(repo.git("status", "--porcelain")).toBe("");
  });
});
