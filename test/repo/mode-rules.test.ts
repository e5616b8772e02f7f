import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshotChanges } from "../../src/ops/snapshot/changes";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { listEntries } from "../../src/ops/snapshot/list";
import { openWorkspace } from "../../src/ops/workspace";
import { executableBitTrusted } from "../../src/repo/mode-rules";
import { tmpRepo } from "../helpers/tmp-repo";

/**
 * `core.fileMode false` (FAT, exFAT, Windows drives under WSL, where every file may read as executable): git keeps
 * a tracked file's mode from the index and gives a new file 100644. Here every file is made executable on disk, as
 * such a file system shows them.
 */
describe("a repository where git does not trust the executable bit", () => {
  test("regression: every changed file showed a change of mode git does not see, and new files were executable", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("tool.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    repo.git("config", "core.fileMode", "false");
    for (const f of ["a.txt", "b.txt", "tool.sh"]) chmodSync(join(repo.root, f), 0o777);
    writeFileSync(join(repo.root, "a.txt"), "a, changed\n");
    writeFileSync(join(repo.root, "new.txt"), "new\n");
    chmodSync(join(repo.root, "new.txt"), 0o777);
    chmodSync(join(repo.root, "tool.sh"), 0o666); // the bit gone: git keeps 100755
    writeFileSync(join(repo.root, "tool.sh"), "#!/bin/sh\necho changed\n");
    expect(repo.git("status", "--porcelain")).toBe(" M a.txt\n M tool.sh\n?? new.txt\n");
    const ws = openWorkspace(repo.root);
    const changes = await snapshotChanges(ws, { from: "HEAD", to: "worktree" });
    expect(changes.changes).toEqual([
      { path: "a.txt", status: "modified" },
      { path: "new.txt", status: "added" },
      { path: "tool.sh", status: "modified" },
    ]);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const listed = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id });
    expect(Object.fromEntries(listed.entries.map((e) => [e.path, e.mode ?? "100644"]))).toEqual({ "a.txt": "100644", "b.txt": "100644", "new.txt": "100644", "tool.sh": "100755" });

    // the setting read again once the configuration changes: the bits count again
    repo.git("config", "core.fileMode", "true");
    expect(await executableBitTrusted(ws.repo)).toBe(true);
    const trusted = await snapshotChanges(openWorkspace(repo.root), { from: "HEAD", to: "worktree" });
    expect(trusted.changes).toEqual([
      { path: "a.txt", status: "modified", old_mode: "100644", new_mode: "100755" },
      { path: "b.txt", status: "mode_changed", old_mode: "100644", new_mode: "100755" },
      { path: "new.txt", status: "added" },
      { path: "tool.sh", status: "modified", old_mode: "100755", new_mode: "100644" },
    ]);
  });

  test("trusted by default, and outside git", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.git("config", "--unset", "core.fileMode");
    expect(await executableBitTrusted(openWorkspace(repo.root).repo)).toBe(true);
    await using plain = await tmpRepo({ git: false });
    expect(await executableBitTrusted(openWorkspace(plain.root).repo)).toBe(true);
  });
});

describe("a repository where git does not make symlinks", () => {
  test("regression: a symlink checked out as a plain file (core.symlinks false) showed a change of mode git does not see", async () => {
    await using repo = await tmpRepo();
    repo.write("target.txt", "t\n");
    repo.symlink("link", "target.txt");
    repo.commit();
    repo.git("config", "core.symlinks", "false");
    rmSync(join(repo.root, "link"));
    repo.git("checkout", "--", "link");
    expect(readFileSync(join(repo.root, "link"), "utf8")).toBe("target.txt");
    expect(repo.git("status", "--porcelain")).toBe("");
    const ws = openWorkspace(repo.root);
    expect((await snapshotChanges(ws, { from: "HEAD", to: "worktree" })).changes).toEqual([]);
    // changed, it is still the link git sees, with other text
    writeFileSync(join(repo.root, "link"), "other.txt");
    expect((await snapshotChanges(openWorkspace(repo.root), { from: "HEAD", to: "worktree" })).changes).toEqual([{ path: "link", status: "modified" }]);
  });
});
