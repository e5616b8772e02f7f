import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTask } from "../../../src/ops/task/start";
import { listTasks, loadTask } from "../../../src/ops/task/task-store";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";
import { wireCodeOf } from "./helpers";

describe("snap start", () => {
  test("the snapshot holds the named files plus every dirty file (modified, staged, untracked, in untracked dirs); dirty counts them and deletions", async () => {
    await using repo = await tmpRepo();
    repo.write("src/auth.ts", "export const a = 1;\n");
    repo.write("src/clean.ts", "clean\n");
    repo.write("src/staged.ts", "v1\n");
    repo.write("gone.txt", "soon deleted\n");
    repo.write(".gitignore", "ignored/\n");
    repo.commit();
    repo.write("src/staged.ts", "v2\n");
    repo.git("add", "src/staged.ts");
    repo.write("notes.txt", "untracked\n");
    repo.write("newdir/a.txt", "a\n");
    repo.write("newdir/b.txt", "b\n");
    repo.write("ignored/x.txt", "ignored\n");
    rmSync(join(repo.root, "gone.txt"));
    using ws = wsOf(repo);
    const r = await startTask(ws, { task: "fix auth bug", files: ["src/auth.ts"], keywords: ["jwt"] });
    expect(r.task.id).toBe("task_1");
    const held = ws.snapshots.load(r.task.snapshot.id!).entries.map((e) => e.path);
    expect(held).toEqual(["newdir/a.txt", "newdir/b.txt", "notes.txt", "src/auth.ts", "src/staged.ts"]);
    expect(r.task.dirty_at_start).toBe(5); // staged.ts, notes.txt, newdir/a.txt, newdir/b.txt, gone.txt
    expect(r.task.base.absent).toEqual(["gone.txt"]);
    expect(r.task.prot).toBe(100);
    expect(r.task.snapshot.status).toBe("created");
    expect(r.task.risk.level).toBe("M"); // auth +2, dirty +1
    expect(r.snap).toBe(r.task.snapshot.id!.slice(7, 19));
    expect(ws.snapshots.resolve(r.snap!)).toBe(r.task.snapshot.id!);
  });

  test("the same tree again is reused (content addressing); ids keep counting across workspaces, as across restarts", async () => {
    await using repo = await tmpRepo();
    repo.write("a.ts", "a\n");
    repo.commit();
    repo.write("a.ts", "changed\n");
    {
      using ws = wsOf(repo);
      const first = await startTask(ws, { task: "one", files: ["a.ts"] });
      expect(first.task.snapshot.status).toBe("created");
    }
    {
      using ws = wsOf(repo);
      const second = await startTask(ws, { task: "two", files: ["a.ts"] });
      expect(second.task.id).toBe("task_2");
      expect(second.task.snapshot.status).toBe("reused");
      expect(second.task.snapshot.id).toBe(loadTask(ws, "task_1").snapshot.id);
    }
    // A lost counter file does not bring an id back: the highest stored task counts.
    rmSync(join(repo.root, ".mcp", "tasks", "counter"));
    using ws = wsOf(repo);
    expect((await startTask(ws, { task: "three" })).task.id).toBe("task_3");
    expect(listTasks(ws).map((t) => t.id)).toEqual(["task_3", "task_2", "task_1"]);
  });

  test("prot is the share of named files the snapshot holds: a file not there yet is not protected", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "a\n");
    repo.write("src/dir/b.ts", "b\n");
    repo.commit();
    using ws = wsOf(repo);
    const r = await startTask(ws, { task: "add guard", files: ["src/a.ts", "src/new.ts", "src/dir", "src/also-new.ts"] });
    expect(r.task.named).toEqual({ held: ["src/a.ts", "src/dir"], missing: ["src/new.ts", "src/also-new.ts"] });
    expect(r.task.prot).toBe(50);
    expect(r.task.dirty_at_start).toBe(0);
  });

  test("a clean tree with nothing named starts from an empty snapshot of the current state", async () => {
    await using repo = await tmpRepo();
    repo.write("a.ts", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const r = await startTask(ws, { task: "look around" });
    expect(r.task.snapshot.files).toBe(0);
    expect(ws.snapshots.load(r.task.snapshot.id!).meta.fingerprint.head_oid).toBe(repo.git("rev-parse", "HEAD").trim());
    expect(r.task.prot).toBe(100);
  });

  test("outside git the snapshot holds the whole tree and dirty counts changes since the previous task snapshot", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    repo.write("sub/b.txt", "b\n");
    using ws = wsOf(repo);
    const first = await startTask(ws, { task: "first", files: ["a.txt"] });
    expect(first.dirty.against).toBe("none");
    expect(first.task.dirty_at_start).toBe(0);
    expect(first.task.snapshot.files).toBe(2);
    writeFileSync(join(repo.root, "a.txt"), "changed\n");
    writeFileSync(join(repo.root, "c.txt"), "new\n");
    const second = await startTask(ws, { task: "second" });
    expect(second.dirty).toMatchObject({ against: "previous-snapshot", count: 2 });
    expect(second.task.base.git).toBe(false);
  });

  test("bad input is refused before anything is stored", async () => {
    await using repo = await tmpRepo();
    repo.write("a.ts", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    expect(await wireCodeOf(startTask(ws, { task: "  " }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(startTask(ws, { task: "x", files: ["../outside"] }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(startTask(ws, { task: "x", files: [".mcp/tasks"] }))).toBe("PERMISSION_DENIED");
    expect(await wireCodeOf(startTask(ws, { task: "x", files: ["src\\a.ts"] }))).toBe("VALIDATION_FAILED");
    expect(listTasks(ws)).toEqual([]);
  });
});
