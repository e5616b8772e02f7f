import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { reviewEdits } from "../../../src/ops/history/review";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { diffSnapshots, listTaskSnapshots } from "../../../src/ops/task/fix";
import { restoreSnapshot } from "../../../src/ops/task/restore";
import { startTask } from "../../../src/ops/task/start";
import { tmpRepo } from "../../helpers/tmp-repo";
import { treeText, wsOf } from "../../helpers/workspace";
import { wireCodeOf } from "./helpers";

describe("snap_fix restore", () => {
  test("a task snapshot restores the whole starting tree through the write path, recorded so that a reject takes it back", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "a1\n");
    repo.write("src/b.ts", "b1\n");
    repo.write("src/c.ts", "c1\n");
    repo.write("run.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    repo.write("src/a.ts", "a2 (dirty before the task)\n");
    using ws = wsOf(repo);
    const t = (await startTask(ws, { task: "refactor", files: ["src/a.ts"] })).task;
    const atStart = treeText(repo.root);
    repo.write("src/a.ts", "a3\n");
    repo.write("src/b.ts", "b2 (clean at the start)\n");
    rmSync(join(repo.root, "src/c.ts"));
    repo.write("src/new.ts", "created by the task\n");
    repo.write("run.sh", "#!/bin/sh\n", 0o644);
    const broken = treeText(repo.root);

    const dry = await restoreSnapshot(ws, { id: t.snapshot.id!.slice(7, 19), dryRun: true });
    // the task's id names the same snapshot (what a model or a person passes first)
    expect(await restoreSnapshot(ws, { id: t.id, dryRun: true })).toEqual(dry);
    expect(dry.files).toEqual([
      { path: "run.sh", action: "write" },
      { path: "src/a.ts", action: "write" },
      { path: "src/b.ts", action: "write" },
      { path: "src/c.ts", action: "write" },
      { path: "src/new.ts", action: "delete" },
    ]);
    expect(treeText(repo.root)).toEqual(broken);
    expect(await new FsHistoryStore(ws.repo.stateDir).listConversations()).toEqual([]); // a dry run records nothing

    const done = await restoreSnapshot(ws, { id: t.snapshot.id! });
    expect(done.basis).toBe("task");
    expect(done.files).toEqual(dry.files);
    expect(treeText(repo.root)).toEqual(atStart);
    expect(done.conversation).toMatch(/^conv_\d+_[0-9a-f]{12}$/);
    const store = new FsHistoryStore(ws.repo.stateDir);
    const log = await store.readLog(done.conversation!);
    expect(log.map((e) => [e.file_path, e.operation, e.tool_name]).sort()).toEqual([
      ["run.sh", "replace", "snap_fix"],
      ["src/a.ts", "replace", "snap_fix"],
      ["src/b.ts", "replace", "snap_fix"],
      ["src/c.ts", "create", "snap_fix"],
      ["src/new.ts", "delete", "snap_fix"],
    ]);

    // The restore is itself reviewable: rejecting it puts the work tree back to what it replaced.
    await reviewEdits(ws, store, { action: "reject", conversationId: done.conversation! });
    expect(treeText(repo.root)).toEqual(broken);

    // Nothing left to do once the tree matches.
    await restoreSnapshot(ws, { id: t.snapshot.id! });
    const again = await restoreSnapshot(ws, { id: t.snapshot.id! });
    expect(again.files).toEqual([]);
  });

  test("a snapshot that is no task's restores what it covers: its files, and deletes new files under its paths", async () => {
    await using repo = await tmpRepo();
    repo.write("docs/a.md", "a\n");
    repo.write("docs/b.md", "b\n");
    repo.write("src/x.ts", "x\n");
    repo.commit();
    using ws = wsOf(repo);
    const snap = await createSnapshot(ws, { paths: ["docs"] });
    repo.write("docs/a.md", "changed\n");
    repo.write("docs/c.md", "new\n");
    repo.write("src/x.ts", "outside the snapshot\n");
    const r = await restoreSnapshot(ws, { id: snap.snapshot_id });
    expect(r.basis).toBe("scoped");
    expect(r.files).toEqual([{ path: "docs/a.md", action: "write" }, { path: "docs/c.md", action: "delete" }]);
    expect(treeText(repo.root)).toEqual({ "docs/a.md": "a\n", "docs/b.md": "b\n", "src/x.ts": "outside the snapshot\n" });
  });

  test("unknown and malformed ids are wire errors; a restore without id is VALIDATION_FAILED", async () => {
    await using repo = await tmpRepo();
    repo.write("a", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    expect(await wireCodeOf(restoreSnapshot(ws, { id: "deadbeefdeadbeef" }))).toBe("SNAPSHOT_NOT_FOUND");
    expect(await wireCodeOf(restoreSnapshot(ws, { id: "xyz" }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(restoreSnapshot(ws, {}))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(restoreSnapshot(ws, { id: "task_7" }))).toBe("NO_TASK");
    expect(await wireCodeOf(diffSnapshots(ws, { id: "deadbeefdeadbeef" }))).toBe("SNAPSHOT_NOT_FOUND");
    expect(await wireCodeOf(diffSnapshots(ws, { id: "task_7" }))).toBe("NO_TASK");
  });
});

describe("snap_fix list and diff", () => {
  test("list shows each task snapshot once, newest first; diff compares a task snapshot with the work tree and two task snapshots", async () => {
    await using repo = await tmpRepo();
    repo.write("a.ts", "a\n");
    repo.write("b.ts", "b\n");
    repo.commit();
    using ws = wsOf(repo);
    const t1 = (await startTask(ws, { task: "one", files: ["a.ts"] })).task;
    await startTask(ws, { task: "same tree", files: ["a.ts"] });
    repo.write("a.ts", "a2\n");
    repo.write("c.ts", "c\n");
    rmSync(join(repo.root, "b.ts"));
    const t3 = (await startTask(ws, { task: "three", files: ["a.ts"] })).task;
    const list = listTaskSnapshots(ws);
    expect(list.count).toBe(2);
    expect(list.entries.map((e) => [e.task, e.id as string])).toEqual([["task_3", t3.snapshot.id!], ["task_2", t1.snapshot.id!]]);

    const vsTree = await diffSnapshots(ws, { id: t1.snapshot.id! });
    expect(vsTree).toMatchObject({ to: "worktree", added: ["c.ts"], removed: ["b.ts"], changed: ["a.ts"], basis: "task" });
    const between = await diffSnapshots(ws, { id: t1.snapshot.id!, diffWith: t3.snapshot.id! });
    expect(between).toMatchObject({ added: ["c.ts"], removed: ["b.ts"], changed: ["a.ts"], basis: "tasks" });
    const none = await diffSnapshots(ws, { id: t3.snapshot.id! });
    expect([none.added, none.removed, none.changed]).toEqual([[], [], []]);
  });
});

describe("a task in a sparse checkout", () => {
  test("regression (files outside the checkout written out): a pull during the task changes files outside the cone; the task's changes and its restore leave them alone", async () => {
    await using origin = await tmpRepo();
    for (const d of ["a", "b"]) for (let i = 0; i < 5; i++) origin.write(`${d}/f${i}.txt`, `${d} ${i}\n`);
    origin.commit("first");
    await using repo = await tmpRepo();
    repo.git("remote", "add", "origin", origin.root);
    repo.git("fetch", "-q", "origin");
    repo.git("checkout", "-q", "-b", "work", "origin/main");
    repo.git("sparse-checkout", "set", "a");
    using ws = wsOf(repo);
    const t = (await startTask(ws, { task: "edit a", files: ["a/f1.txt"] })).task;
    const atStart = treeText(repo.root);
    // upstream changes files on both sides of the cone; the task pulls them, then edits a file of its own
    origin.write("b/f2.txt", "b two, upstream\n");
    origin.write("a/f3.txt", "a three, upstream\n");
    origin.commit("upstream");
    repo.git("pull", "-q", "--ff-only", "origin", "main");
    repo.write("a/f1.txt", "edited by the task\n");
    expect(treeText(repo.root)).not.toHaveProperty("b/f2.txt");

    const dry = await restoreSnapshot(ws, { id: t.id, dryRun: true });
    expect(dry.files).toEqual([
      { path: "a/f1.txt", action: "write" },
      { path: "a/f3.txt", action: "write" },
    ]);
    await restoreSnapshot(ws, { id: t.id });
    expect(treeText(repo.root)).toEqual(atStart);
  });
});
