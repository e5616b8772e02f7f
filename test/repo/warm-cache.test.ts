import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { listEntries } from "../../src/ops/snapshot/list";
import { openWorkspace } from "../../src/ops/workspace";
import { tmpRepo } from "../helpers/tmp-repo";

describe("warm captures", () => {
  test("an unchanged tree is answered from the warm cache without the blob map", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b/c.txt", "c\n");
    repo.commit();
    const first = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    // The map of git blob ids is what a non-cached capture needs; a warm hit must not.
    rmSync(join(repo.root, ".mcp", "cache", "gitblobs.bin"));
    const again = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(again.snapshot_id).toBe(first.snapshot_id);
    expect(again.manifest_stats).toEqual(first.manifest_stats);
  });

  test("a file added inside an already untracked directory is captured (status alone does not show it)", async () => {
    await using repo = await tmpRepo();
    repo.write("tracked.txt", "t\n");
    repo.commit();
    repo.write("newdir/a.txt", "a\n");
    const ws = openWorkspace(repo.root);
    const first = await createSnapshot(ws, { paths: ["."] });
    repo.write("newdir/b.txt", "b\n");
    const second = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(second.snapshot_id).not.toBe(first.snapshot_id);
    expect(second.fingerprint.status_hash).toBe(first.fingerprint.status_hash);
    const listed = await listEntries(ws, { mode: "snapshot", snapshot_id: second.snapshot_id, path: "newdir" });
    expect(listed.entries.map((e) => e.path)).toEqual(["newdir/a.txt", "newdir/b.txt"]);
  });

  test("an untracked file rewritten with the same size and mtime misses the cache and is re-read", async () => {
    await using repo = await tmpRepo();
    repo.write("tracked.txt", "t\n");
    repo.commit();
    const abs = join(repo.root, "notes.txt");
    writeFileSync(abs, "one\n");
    const old = new Date(Date.now() - 120_000);
    Bun.spawnSync(["touch", "-d", old.toISOString(), abs]);
    const first = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    const warm = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(warm.snapshot_id).toBe(first.snapshot_id);
    writeFileSync(abs, "two\n");
    Bun.spawnSync(["touch", "-d", old.toISOString(), abs]);
    const changed = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(changed.snapshot_id).not.toBe(first.snapshot_id);
  });

  test("different scopes are cached apart", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "a\n");
    repo.write("docs/b.md", "b\n");
    repo.commit();
    const all = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    const src = await createSnapshot(openWorkspace(repo.root), { paths: ["src"] });
    expect(src.snapshot_id).not.toBe(all.snapshot_id);
    expect(src.manifest_stats.files).toBe(1);
    expect((await createSnapshot(openWorkspace(repo.root), { paths: ["src"] })).snapshot_id).toBe(src.snapshot_id);
  });
});
