import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { collectGarbage } from "../../../src/ops/gc/gc";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { exportSnapshot } from "../../../src/ops/snapshot/export";
import { readFile } from "../../../src/ops/snapshot/file";
import { listEntries } from "../../../src/ops/snapshot/list";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { LOOSE_GRACE_MS } from "../../../src/repo/fs-blob-store";
import { cli } from "../../helpers/binary";
import { tmpRepo } from "../../helpers/tmp-repo";
import { startTask } from "../../../src/ops/task/start";
import { diffSnapshots } from "../../../src/ops/task/fix";
import { enc, wsOf } from "../../helpers/workspace";

const HOUR_AGO = (Date.now() - 2 * LOOSE_GRACE_MS) / 1000;

function loosePath(root: string, text: string): string {
  const hex = blobIdOf(enc(text)).slice(7);
  return join(root, ".mcp", "blobs", "sha256", hex.slice(0, 2), hex.slice(2));
}

/** Makes every loose blob look older than the grace. */
function ageLooseBlobs(root: string): void {
  const dir = join(root, ".mcp", "blobs", "sha256");
  for (const fan of readdirSync(dir)) for (const f of readdirSync(join(dir, fan))) utimesSync(join(dir, fan, f), HOUR_AGO, HOUR_AGO);
}

describe("worksnap gc", () => {
  test("removes exports and blobs nothing references, keeps what snapshots and the history name; a dry run removes nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("tracked.txt", "tracked\n");
    repo.commit();
    using ws = wsOf(repo);
    repo.write("notes.txt", "draft one\n"); // untracked: its blobs go to the loose store
    await listEntries(ws, { mode: "worktree" }); // a listing stores the blob, no snapshot names it
    writeFileSync(join(repo.root, "notes.txt"), "draft two\n");
    const snap = await createSnapshot(ws, { paths: ["."] });
    const exported = await exportSnapshot(ws, { snapshot_id: snap.snapshot_id });
    // a recorded edit: its hashes are in the history log
    await writeFileOp(ws, { mode: "worktree", path: "edited.txt", content: "from an edit\n" });
    await listEntries(ws, { mode: "worktree" });
    ageLooseBlobs(repo.root);
    expect(existsSync(loosePath(repo.root, "draft one\n"))).toBe(true);

    const dry = await collectGarbage(ws, { dry_run: true });
    expect(dry.removed.blobs.files).toBe(1);
    expect(dry.removed.exports).toEqual({ files: 1, bytes: exported.bytes });
    expect(existsSync(loosePath(repo.root, "draft one\n"))).toBe(true);
    expect(existsSync(join(repo.root, exported.path))).toBe(true);

    const r = await collectGarbage(ws);
    expect(r.removed.blobs).toEqual({ files: 1, bytes: "draft one\n".length });
    expect(r.kept.snapshots).toBe(1);
    expect(existsSync(loosePath(repo.root, "draft one\n"))).toBe(false);
    expect(existsSync(join(repo.root, exported.path))).toBe(false);
    expect(existsSync(loosePath(repo.root, "draft two\n"))).toBe(true); // the snapshot's
    expect(existsSync(loosePath(repo.root, "from an edit\n"))).toBe(true); // the history's hash_after
    // what is kept still reads
    const back = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "notes.txt" });
    expect(back.content).toBe("draft two\n");
    expect((await collectGarbage(ws)).removed).toEqual({ snapshots: { files: 0, bytes: 0 }, exports: { files: 0, bytes: 0 }, blobs: { files: 0, bytes: 0 }, scratch: { files: 0, bytes: 0 } });
  });

  test("--snapshots-older-than removes snapshots not used since, with the blobs only they held; a task's snapshot and one handed out again stay", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    repo.write("u.txt", "only in the old snapshot\n");
    const old = await createSnapshot(ws, { paths: ["."] });
    repo.write("u.txt", "in the reused one\n");
    const reused = await createSnapshot(ws, { paths: ["."] });
    repo.write("u.txt", "at the task's start\n");
    const task = (await startTask(ws, { task: "t", files: ["u.txt"] })).task;
    repo.write("u.txt", "now\n");
    const later = await createSnapshot(ws, { paths: ["."] });
    // every snapshot, and every loose blob, last used two days ago
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    for (const n of readdirSync(join(repo.root, ".mcp", "snapshots"))) utimesSync(join(repo.root, ".mcp", "snapshots", n), twoDaysAgo, twoDaysAgo);
    ageLooseBlobs(repo.root);
    // the reused state captured again: its id handed out again, so it counts as used now
    repo.write("u.txt", "in the reused one\n");
    expect((await createSnapshot(ws, { paths: ["."] })).snapshot_id).toBe(reused.snapshot_id);

    const day = 86_400_000;
    expect((await collectGarbage(ws, { snapshotsOlderThanMs: 3 * day })).removed.snapshots.files).toBe(0);
    const dry = await collectGarbage(ws, { snapshotsOlderThanMs: day, dry_run: true });
    expect(dry.removed.snapshots.files).toBe(4); // two snapshots: metadata and manifest each
    expect(ws.snapshots.has(old.snapshot_id)).toBe(true);
    const r = await collectGarbage(ws, { snapshotsOlderThanMs: day });
    expect(r.removed.snapshots.files).toBe(4);
    expect(r.kept.snapshots).toBe(2);
    expect(ws.snapshots.has(old.snapshot_id)).toBe(false);
    expect(ws.snapshots.has(later.snapshot_id)).toBe(false);
    expect(ws.snapshots.has(reused.snapshot_id)).toBe(true);
    expect(ws.snapshots.has(task.snapshot.id!)).toBe(true);
    expect(existsSync(loosePath(repo.root, "only in the old snapshot\n"))).toBe(false); // only the removed one named it
    expect(existsSync(loosePath(repo.root, "at the task's start\n"))).toBe(true);
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: reused.snapshot_id, path: "u.txt" })).content).toBe("in the reused one\n");
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: old.snapshot_id, path: "u.txt" }).catch((e) => e)).code).toBe("NOT_FOUND");
    // the task still diffs against its start
    expect((await diffSnapshots(ws, { id: task.id })).changed).toEqual(["u.txt"]);
    // the CLI: a duration, or a usage error
    expect(cli(["gc", "--snapshots-older-than", "1d", "--root", repo.root]).code).toBe(0);
    expect(cli(["gc", "--snapshots-older-than", "soon", "--root", repo.root]).code).toBe(2);
  });

  test("young unreferenced blobs are spared, and a capture that reuses an old blob makes it young again", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    repo.write("u.txt", "untracked\n");
    await listEntries(ws, { mode: "worktree" });
    const spared = await collectGarbage(ws, { dry_run: true });
    expect(spared.removed.blobs.files).toBe(0);
    expect(spared.kept.young_blobs.files).toBe(1);

    ageLooseBlobs(repo.root);
    const blob = loosePath(repo.root, "untracked\n");
    await createSnapshot(ws, { paths: ["u.txt"] }); // relies on the stored blob (stat cache): refreshes it
    expect(Date.now() - statSync(blob).mtimeMs).toBeLessThan(LOOSE_GRACE_MS / 2);
  });

  test("the CLI reports what it would remove and what it keeps", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    expect(cli(["snapshot", "export", "--worktree", "--root", repo.root]).code).toBe(0);
    const dry = cli(["gc", "--dry-run", "--root", repo.root]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^would remove .*1 export bundle/);
    expect(dry.stdout).toContain("kept: 1 snapshot");
    expect(readdirSync(join(repo.root, ".mcp", "exports"))).toHaveLength(1);
    const json = cli(["gc", "--root", repo.root, "--json"]).json();
    expect(json.removed.exports.files).toBe(1);
    expect(readdirSync(join(repo.root, ".mcp", "exports"))).toHaveLength(0);
    expect(cli(["gc", "--help"]).stdout).toContain("--dry-run");
  });
});
