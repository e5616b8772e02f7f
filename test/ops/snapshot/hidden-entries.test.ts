import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { readFile } from "../../../src/ops/snapshot/file";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { listEntries } from "../../../src/ops/snapshot/list";
import { closeWorkspace, openWorkspace } from "../../../src/ops/workspace";
import { sha256Hex } from "../../../src/core/hash";
import { plainStatusBytes } from "../../helpers/git-status";
import { tmpRepo } from "../../helpers/tmp-repo";

/**
 * Index entries git status does not look at (assume-unchanged, skip-worktree, a sparse checkout): the fingerprint
 * (HEAD, the index's tree, the status) cannot see them change, so nothing remembered by fingerprint may answer
 * for them. Each capture here opens the workspace anew, as each CLI command does; the warm cache is on disk.
 */
async function capture(root: string) {
  const ws = openWorkspace(root);
  const snap = await createSnapshot(ws, { paths: ["."] });
  const listed = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, recursive: true });
  const files: Record<string, string> = {};
  for (const e of listed.entries) {
    if (e.type !== "file") continue;
    const read = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: e.path });
    files[e.path] = read.content as string;
  }
  return { snap, files };
}

function warmRecords(root: string): { absent?: string[]; loose: [string, string][] }[] {
  const file = join(root, ".mcp", "cache", "warm.json");
  return existsSync(file) ? Object.values(JSON.parse(readFileSync(file, "utf8"))) : [];
}

describe("entries git status does not look at", () => {
  test("regression: a file marked assume-unchanged after a capture, then changed, was captured with its old bytes (the warm cache answered)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    repo.write("b.txt", "keep\n");
    repo.commit();
    const first = await capture(repo.root);
    expect(first.files).toEqual({ "a.txt": "one\n", "b.txt": "keep\n" });
    repo.git("update-index", "--assume-unchanged", "a.txt");
    repo.write("a.txt", "two, and longer\n");
    expect(repo.git("status", "--porcelain")).toBe(""); // git sees nothing
    const second = await capture(repo.root);
    expect(second.files).toEqual({ "a.txt": "two, and longer\n", "b.txt": "keep\n" });
    expect(second.snap.snapshot_id).not.toBe(first.snap.snapshot_id);
    expect(second.snap.fingerprint).toEqual(first.snap.fingerprint);
    // remembered for this flag, and still right when the flagged file changes again
    expect((await capture(repo.root)).snap.snapshot_id).toBe(second.snap.snapshot_id);
    repo.write("a.txt", "three, longer still\n");
    expect((await capture(repo.root)).files["a.txt"]).toBe("three, longer still\n");
    // the flag cleared: git compares the file again
    repo.git("update-index", "--no-assume-unchanged", "a.txt");
    repo.git("checkout", "--", "a.txt");
    expect((await capture(repo.root)).snap.snapshot_id).toBe(first.snap.snapshot_id);
  });

  test("regression: files a sparse checkout removed stayed in the next capture; absent directories were listed, counted as vanished, and searched", async () => {
    await using repo = await tmpRepo();
    repo.write("in/i.txt", "inside\n");
    repo.write("out/o.txt", "outside needle\n");
    repo.write("out/deep/d.txt", "deep needle\n");
    repo.write("top.txt", "top\n");
    repo.commit();
    const full = await capture(repo.root);
    expect(Object.keys(full.files)).toEqual(["in/i.txt", "out/deep/d.txt", "out/o.txt", "top.txt"]);

    repo.git("sparse-checkout", "set", "in");
    expect(existsSync(join(repo.root, "out"))).toBe(false);
    const sparse = await capture(repo.root);
    expect(sparse.files).toEqual({ "in/i.txt": "inside\n", "top.txt": "top\n" });
    expect(sparse.snap.skipped.vanished).toBe(0);
    expect(sparse.snap.fingerprint).toEqual(full.snap.fingerprint);

    const ws = openWorkspace(repo.root);
    const live = await listEntries(ws, { mode: "worktree" });
    expect(live.entries.map((e) => `${e.type} ${e.path}`)).toEqual(["dir in", "file top.txt"]);
    expect(live.total).toBe(2);
    await expect(listEntries(ws, { mode: "worktree", path: "out" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const grep = await snapshotGrep(ws, { mode: "worktree", pattern: "needle" });
    expect(grep.candidates).toBe(2);
    expect(grep.unreadable ?? []).toEqual([]);

    // the sparse state is remembered, with the directory that must stay absent
    expect(warmRecords(repo.root).some((r) => JSON.stringify(r.absent) === '["out"]')).toBe(true);

    // the directory back by hand (the index unchanged): its file is in the tree again, so in the capture
    mkdirSync(join(repo.root, "out"));
    writeFileSync(join(repo.root, "out", "o.txt"), "written by hand\n");
    const byHand = await capture(repo.root);
    expect(byHand.files).toEqual({ "in/i.txt": "inside\n", "out/o.txt": "written by hand\n", "top.txt": "top\n" });
    rmSync(join(repo.root, "out"), { recursive: true });
    expect((await capture(repo.root)).snap.snapshot_id).toBe(sparse.snap.snapshot_id);

    repo.git("sparse-checkout", "disable");
    expect((await capture(repo.root)).snap.snapshot_id).toBe(full.snap.snapshot_id);
    // and answered from memory: a warm hit needs no map of git's blob ids, a capture does
    repo.git("sparse-checkout", "set", "in");
    expect((await capture(repo.root)).snap.snapshot_id).toBe(sparse.snap.snapshot_id);
    rmSync(join(repo.root, ".mcp", "cache", "gitblobs.bin"));
    expect((await createSnapshot(openWorkspace(repo.root), { paths: ["."] })).snapshot_id).toBe(sparse.snap.snapshot_id);
  });

  test("skip-worktree set by hand: a file present is captured as it is, absent it is not, and back again it is", async () => {
    await using repo = await tmpRepo();
    repo.write("config.local", "committed\n");
    repo.write("src/a.ts", "a\n");
    repo.commit();
    repo.git("update-index", "--skip-worktree", "config.local");
    repo.write("config.local", "my own settings\n");
    expect(repo.git("status", "--porcelain")).toBe("");
    expect((await capture(repo.root)).files["config.local"]).toBe("my own settings\n");
    rmSync(join(repo.root, "config.local"));
    const without = await capture(repo.root);
    expect(Object.keys(without.files)).toEqual(["src/a.ts"]);
    expect(without.snap.skipped.vanished).toBe(0);
    expect((await capture(repo.root)).snap.snapshot_id).toBe(without.snap.snapshot_id);
    repo.write("config.local", "settings again\n");
    expect((await capture(repo.root)).files["config.local"]).toBe("settings again\n");
  });

  test("regression: a file at a skip-worktree path lost its flag in worksnap's copy of the index; once gone, its statuses named it deleted while git's said nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("in/i.txt", "i\n");
    repo.write("out/o.txt", "o\n");
    repo.commit();
    repo.git("sparse-checkout", "set", "in");
    const statusHash = async () => (await createSnapshot(openWorkspace(repo.root), { paths: ["."] })).fingerprint.status_hash;
    const gits = () => sha256Hex(plainStatusBytes(repo.root));
    // the first status makes the copy, the next ones run on it
    for (let i = 0; i < 3; i++) expect(await statusHash()).toBe(gits());
    mkdirSync(join(repo.root, "out"));
    writeFileSync(join(repo.root, "out", "o.txt"), "present despite skipped\n");
    for (let i = 0; i < 3; i++) expect(await statusHash()).toBe(gits());
    rmSync(join(repo.root, "out"), { recursive: true });
    expect(plainStatusBytes(repo.root).length).toBe(0);
    for (let i = 0; i < 3; i++) expect(await statusHash()).toBe(gits());
    // the same in a server, whose statuses a watch on the tree tells
    const ws = openWorkspace(repo.root, { longLived: true });
    try {
      for (const present of [false, true, false, true, false]) {
        if (present) {
          mkdirSync(join(repo.root, "out"));
          writeFileSync(join(repo.root, "out", "o.txt"), "again\n");
        } else rmSync(join(repo.root, "out"), { recursive: true, force: true });
        for (let i = 0; i < 2; i++) {
          await Bun.sleep(20);
          expect((await createSnapshot(ws, { paths: ["."] })).fingerprint.status_hash).toBe(gits());
        }
      }
    } finally {
      closeWorkspace(ws);
    }
  });

  test("a long-lived workspace (a server) keeps its index listing, and still sees skip-worktree paths come and go", async () => {
    await using repo = await tmpRepo();
    repo.write("in/i.txt", "i\n");
    repo.write("out/o.txt", "o\n");
    repo.commit();
    repo.git("sparse-checkout", "set", "in");
    const ws = openWorkspace(repo.root, { longLived: true });
    try {
      const names = async () => (await listEntries(ws, { mode: "worktree", recursive: true })).entries.map((e) => e.path);
      expect(await names()).toEqual(["in", "in/i.txt"]);
      mkdirSync(join(repo.root, "out"));
      writeFileSync(join(repo.root, "out", "o.txt"), "by hand\n");
      await Bun.sleep(50);
      expect(await names()).toEqual(["in", "in/i.txt", "out", "out/o.txt"]);
      rmSync(join(repo.root, "out"), { recursive: true });
      await Bun.sleep(50);
      expect(await names()).toEqual(["in", "in/i.txt"]);
    } finally {
      closeWorkspace(ws);
    }
  });
});
