import { describe, expect, test } from "bun:test";
import { startTask } from "../../../src/ops/task/start";
import { taskState } from "../../../src/ops/task/task-changes";
import { loadTask } from "../../../src/ops/task/task-store";
import { INDEX_BUSY, answersWhileStaging } from "../../helpers/index-toggler";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

describe("a task's changes while the index changes", () => {
  test("regression (a status and a listing of two indexes: a staged edit dropped from the changes, its blob paired with other bytes): every answer is the work tree's change, or BUSY", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`f${i}.txt`, `file ${i}\n`);
    repo.commit();
    using ws = wsOf(repo);
    const started = await startTask(ws, { task: "edit f7", files: ["f7.txt"] });
    repo.write("f7.txt", "edited\n");
    const answer = async () => {
      const state = await taskState(ws, loadTask(ws, started.task.id));
      const changes = [];
      for (const c of state.changes) changes.push({ path: c.change.path, status: c.change.status, bytes: c.to ? new TextDecoder().decode(await ws.blobs.read(c.to.blob)) : null });
      return JSON.stringify(changes);
    };
    const right = JSON.stringify([{ path: "f7.txt", status: "modified", bytes: "edited\n" }]);
    // a second process stages and unstages the edit over and over
    const seen = await answersWhileStaging(repo.root, ["f7.txt"], answer);
    expect(seen.filter((s) => s !== right && s !== INDEX_BUSY)).toEqual([]);
    // once the index holds still, staged or not, the change is read with the work tree's bytes (nothing mislearnt)
    repo.git("add", "f7.txt");
    expect(await answer()).toBe(right);
    repo.git("reset", "-q", "f7.txt");
    expect(await answer()).toBe(right);
  });
});
