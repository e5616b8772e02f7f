import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { endTask } from "../../../src/ops/task/end";
import { loadLearnings } from "../../../src/ops/task/memory-store";
import { startTask } from "../../../src/ops/task/start";
import { taskState } from "../../../src/ops/task/task-changes";
import { loadTask } from "../../../src/ops/task/task-store";
import { runGit, tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";
import { wireCodeOf } from "./helpers";

/** The work tree as a git tree, through a private index: what `git diff --numstat` compares. */
function treeOf(repo: TmpRepo): string {
  const index = join(repo.root, ".git", `numstat-index-${Math.random().toString(16).slice(2)}`);
  try {
    runGit(repo.root, ["add", "-A", "--", ".", ":!.mcp"], { GIT_INDEX_FILE: index });
    return runGit(repo.root, ["write-tree"], { GIT_INDEX_FILE: index }).trim();
  } finally {
    rmSync(index, { force: true });
  }
}

function numstat(repo: TmpRepo, from: string, to: string): { files: number; added: number; removed: number } {
  const rows = runGit(repo.root, ["diff", "--numstat", "--no-renames", from, to]).trim().split("\n").filter(Boolean);
  let added = 0;
  let removed = 0;
  for (const r of rows) {
    const [a, d] = r.split("\t");
    if (a !== "-") added += Number(a);
    if (d !== "-") removed += Number(d);
  }
  return { files: rows.length, added, removed };
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}`).join("\n") + "\n";

describe("snap_end", () => {
  test("files and lines equal git diff --numstat between the starting tree and the tree at the end", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", lines(20, "a"));
    repo.write("src/b.ts", lines(10, "b"));
    repo.write("assets/logo.bin", new Uint8Array([0, 1, 2, 3]));
    repo.write("old.txt", lines(5, "old"));
    repo.write("exec.sh", "#!/bin/sh\n", 0o644);
    repo.commit();
    // Dirty before the task: part of its starting state, not of its changes.
    repo.write("src/a.ts", lines(22, "a"));
    repo.write("scratch.txt", "mine\n");
    const start = treeOf(repo);
    using ws = wsOf(repo);
    const started = await startTask(ws, { task: "refactor a", files: ["src/a.ts"] });
    // The task: edits to a dirty file and to clean ones, a commit in the middle, a delete, a new file, binary and mode changes.
    repo.write("src/a.ts", lines(22, "a").replace("a line 3\n", "a line three\nan extra line\n").replace("a line 20\n", ""));
    repo.write("src/b.ts", lines(12, "b"));
    repo.git("add", "src/b.ts");
    repo.git("-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "b");
    repo.write("src/b.ts", lines(12, "b").replace("b line 0\n", "B LINE 0\n"));
    rmSync(join(repo.root, "old.txt"));
    repo.write("src/new.ts", lines(7, "new"));
    repo.write("assets/logo.bin", new Uint8Array([0, 9, 9]));
    repo.write("exec.sh", "#!/bin/sh\n", 0o755);
    const expected = numstat(repo, start, treeOf(repo));
    const ended = await endTask(ws, { taskId: started.task.id, learnings: ["a needs three", ""], survey: { helpfulness: 4, patterns_used: 0 } });
    expect({ files: ended.files, added: ended.lines.added, removed: ended.lines.removed }).toEqual(expected);
    expect(ended.files).toBe(6);
    expect(ended.lines.binary).toBe(1);
    expect(ended.survey).toEqual({ patterns_used: 0, helpfulness: 4 });
    const stored = loadTask(ws, started.task.id);
    expect(stored.state).toBe("ended");
    expect(stored.ended).toMatchObject({ outcome: "completed", files: 6, added: expected.added, removed: expected.removed, survey: { helpfulness: 4, patterns_used: 0 } });
    const learned = loadLearnings(ws);
    expect(learned.map((l) => [l.action, l.task_id, l.files])).toEqual([["a needs three", "task_1", ["src/a.ts"]]]);
  });

  test("a file the task reverts to its starting bytes is no change; a dirty file reverted to HEAD is one", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "committed\n");
    repo.write("b.txt", "b\n");
    repo.commit();
    repo.write("a.txt", "dirty at start\n");
    using ws = wsOf(repo);
    const t = (await startTask(ws, { task: "t" })).task;
    repo.write("b.txt", "changed\n");
    repo.write("b.txt", "b\n");
    repo.git("checkout", "--", "a.txt");
    const state = await taskState(ws, t);
    expect(state.changes.map((c) => [c.change.path, c.change.status])).toEqual([["a.txt", "modified"]]);
    expect(state.dirtyNow).toBe(0);
  });

  test("ending twice, an unknown task and a bad survey are refused and store nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const t = (await startTask(ws, { task: "t" })).task;
    expect(await wireCodeOf(endTask(ws, { taskId: t.id, survey: { helpfulness: 9 } }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(endTask(ws, { taskId: "task_42" }))).toBe("NO_TASK");
    expect(await wireCodeOf(endTask(ws, { taskId: "42" }))).toBe("NO_TASK");
    expect(loadTask(ws, t.id).state).toBe("active");
    await endTask(ws, { taskId: t.id, learnings: ["first"] });
    expect(await wireCodeOf(endTask(ws, { taskId: t.id, learnings: ["second"] }))).toBe("TASK_ENDED");
    expect(loadLearnings(ws).map((l) => l.action)).toEqual(["first"]);
  });
});
