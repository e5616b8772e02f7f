/**
 * Spares that outlive their process (tmp-reserve.ts): a server's first write
 * staged in spares made at start-up, pools left for the next process, and the
 * hand-off a one-shot write leaves to run after its answer. What a reader of
 * a replaced file sees, and what a crash between the answer and the hand-off
 * leaves, are the semantics pinned here.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { finishHandOff, POOL_PREFIX, RESERVE_START, SPARE_PERM } from "../../src/repo/tmp-reserve";
import { closeWorkspace, openWorkspace, prepareForWrites, type Workspace } from "../../src/ops/workspace";
import { applyChanges } from "../../src/ops/write/write-path";
import { FsHistoryStore } from "../../src/ops/history/fs-history-store";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";
import { enc, read, rp, temps } from "../helpers/workspace";

const tmpOf = (root: string) => join(root, ".mcp", "tmp");
const pools = (root: string) => temps(root).filter((n) => n.startsWith(POOL_PREFIX));

/** Inode -> name of every file in the pools of `root`. */
function poolInodes(root: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const p of pools(root)) for (const n of readdirSync(join(tmpOf(root), p))) out.set(statSync(join(tmpOf(root), p, n)).ino, `${p}/${n}`);
  return out;
}

function expectEmptySpares(root: string): void {
  for (const p of pools(root)) {
    for (const n of readdirSync(join(tmpOf(root), p))) {
      const st = statSync(join(tmpOf(root), p, n));
      expect([n, st.isFile(), st.size, st.mode & 0o7777]).toEqual([n, true, 0, SPARE_PERM]);
    }
  }
}

/** A server wrote once and closed: its unused spares are left as a pool. */
async function leavePoolFromServer(root: string): Promise<void> {
  const server = openWorkspace(root, { longLived: true });
  try {
    await applyChanges(server, [{ kind: "write", path: rp("seed.txt"), bytes: enc("seed\n") }]);
    await server.reserve!.idle();
  } finally {
    closeWorkspace(server);
  }
}

async function oneShotWrite(root: string, changes: Parameters<typeof applyChanges>[1]): Promise<Workspace> {
  const ws = openWorkspace(root, { handOff: true });
  await applyChanges(ws, changes, { recorder: ws.recorder, conversationId: "c-test", toolName: "write_file" });
  return ws;
}

describe("spares across processes", () => {
  test("a server's first write is staged in spares made at start-up", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const ws = openWorkspace(repo.root, { longLived: true });
    try {
      prepareForWrites(ws);
      await ws.reserve!.idle();
      expect(ws.reserve!.ready).toBe(RESERVE_START);
      const dir = ws.reserve!.sparesDir;
      const spares = new Set(readdirSync(dir).map((n) => statSync(join(dir, n)).ino));
      await applyChanges(ws, [
        { kind: "write", path: rp("a.txt"), bytes: enc("A\n") },
        { kind: "write", path: rp("d/new.txt"), bytes: enc("new\n") },
      ]);
      expect([read(repo.root, "a.txt"), read(repo.root, "d/new.txt")]).toEqual(["A\n", "new\n"]);
      expect(spares.has(statSync(join(repo.root, "a.txt")).ino)).toBe(true);
      expect(spares.has(statSync(join(repo.root, "d/new.txt")).ino)).toBe(true);
    } finally {
      closeWorkspace(ws);
    }
  });

  test("a server starting takes the pool an earlier process left instead of making its spares again", async () => {
    await using repo = await tmpRepo();
    await leavePoolFromServer(repo.root);
    const inodes = poolInodes(repo.root);
    expect(inodes.size).toBeGreaterThan(0);
    const ws = openWorkspace(repo.root, { longLived: true });
    try {
      prepareForWrites(ws);
      await ws.reserve!.idle();
      expect(pools(repo.root)).toEqual([]);
      const dir = ws.reserve!.sparesDir;
      const mine = new Set(readdirSync(dir).map((n) => statSync(join(dir, n)).ino));
      for (const ino of inodes.keys()) expect(mine.has(ino)).toBe(true);
    } finally {
      closeWorkspace(ws);
    }
  });

  test("a one-shot write is staged in a pool; its hand-off leaves empty spares again, never a replaced file, and a reader of the old file keeps its bytes", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "old a\n");
    await leavePoolFromServer(repo.root);
    const pooled = poolInodes(repo.root);
    const oldIno = statSync(join(repo.root, "a.txt")).ino;
    const reader = openSync(join(repo.root, "a.txt"), "r");
    try {
      const ws = await oneShotWrite(repo.root, [
        { kind: "write", path: rp("a.txt"), bytes: enc("new a\n") },
        { kind: "write", path: rp("b.txt"), bytes: enc("b\n") },
      ]);
      const h = ws.reserve!.handOff();
      closeWorkspace(ws);
      expect(pooled.has(statSync(join(repo.root, "a.txt")).ino)).toBe(true);
      expect(pooled.has(statSync(join(repo.root, "b.txt")).ino)).toBe(true);
      expect(h).not.toBeNull();
      await finishHandOff(repo.root, h!);
      expect(temps(repo.root).every((n) => n.startsWith(POOL_PREFIX))).toBe(true);
      expect(pools(repo.root).length).toBe(1);
      expectEmptySpares(repo.root);
      expect(poolInodes(repo.root).has(oldIno)).toBe(false);
      const buf = Buffer.alloc(64);
      expect(buf.subarray(0, readSync(reader, buf, 0, 64, 0)).toString()).toBe("old a\n");
    } finally {
      closeSync(reader);
    }
    expect([read(repo.root, "a.txt"), read(repo.root, "b.txt")]).toEqual(["new a\n", "b\n"]);
  });

  test("regression: a one-shot write whose hand-off never ran (its process died) loses nothing, shows no stray file in the tree, and the next process removes what it left", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 20; i++) repo.write(`src/f${i}.txt`, `old ${i}\n`);
    repo.commit();
    // A process writes, hands off, and dies before any detached step could run.
    const script = `
      import { openWorkspace } from ${JSON.stringify(join(import.meta.dir, "../../src/ops/workspace.ts"))};
      import { applyPatchOp } from ${JSON.stringify(join(import.meta.dir, "../../src/ops/mutate/apply-patch.ts"))};
      const ws = openWorkspace(process.argv[2], { handOff: true });
      let patch = "";
      for (let i = 0; i < 20; i++) patch += "--- a/src/f" + i + ".txt\\n+++ b/src/f" + i + ".txt\\n@@ -1 +1 @@\\n-old " + i + "\\n+new " + i + "\\n";
      const r = await applyPatchOp(ws, { mode: "worktree", patch, mcp_conversation_id: "c-died" });
      if (!r.applied) process.exit(3);
      ws.reserve.handOff();
      process.kill(process.pid, "SIGKILL");
    `;
    await using scratch = tmpDir();
    writeFileSync(join(scratch.path, "write-and-die.ts"), script);
    const p = Bun.spawnSync([process.execPath, join(scratch.path, "write-and-die.ts"), repo.root], { stdout: "pipe", stderr: "pipe" });
    expect([p.signalCode ?? p.exitCode, p.stderr.toString()]).toEqual(["SIGKILL", ""]);
    // the replaced files are still in .mcp/tmp, under the dead process's name; nothing of it in the tree
    expect(temps(repo.root).some((n) => /^[0-9]+-[0-9a-f]+-stage$/.test(n))).toBe(true);
    expect(repo.git("status", "--porcelain", "--untracked-files=all").split("\n").filter((l) => l.startsWith("??"))).toEqual([]);
    for (let i = 0; i < 20; i++) expect(read(repo.root, `src/f${i}.txt`)).toBe(`new ${i}\n`);
    const log = await new FsHistoryStore(join(repo.root, ".mcp")).readLog("c-died");
    expect(log.map((e) => e.file_path).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `src/f${i}.txt`).sort());
    // the next process to open the repository removes the dead process's leftovers
    closeWorkspace(openWorkspace(repo.root));
    expect(temps(repo.root)).toEqual([]);
    for (let i = 0; i < 20; i++) expect(read(repo.root, `src/f${i}.txt`)).toBe(`new ${i}\n`);
  });

  test("a pool's entries that are not empty files are removed, never written to: a symlink's target and a stray file's bytes stay as they are", async () => {
    await using repo = await tmpRepo();
    await using outside = tmpDir();
    writeFileSync(join(outside.path, "victim.txt"), "keep me\n");
    repo.write("a.txt", "a\n");
    const pool = join(tmpOf(repo.root), `${POOL_PREFIX}planted`);
    mkdirSync(pool, { recursive: true });
    symlinkSync(join(outside.path, "victim.txt"), join(pool, "0"));
    writeFileSync(join(pool, "1"), "someone's bytes\n");
    const ws = await oneShotWrite(repo.root, [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }]);
    expect(existsSync(join(pool, "1"))).toBe(false); // taken: renamed away
    closeWorkspace(ws);
    expect(read(repo.root, "a.txt")).toBe("A\n");
    expect(readFileSync(join(outside.path, "victim.txt"), "utf8")).toBe("keep me\n");
    expect(temps(repo.root)).toEqual([]);
  });

  test("at most two pools wait: a hand-off finding two removes its own spares instead of leaving a third", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    await leavePoolFromServer(repo.root);
    const ws = await oneShotWrite(repo.root, [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }]); // takes that pool
    const h = ws.reserve!.handOff()!;
    closeWorkspace(ws);
    await leavePoolFromServer(repo.root);
    await leavePoolFromServer(repo.root); // (takes the first, leaves it again)
    mkdirSync(join(tmpOf(repo.root), `${POOL_PREFIX}other`));
    expect(pools(repo.root).length).toBe(2);
    await finishHandOff(repo.root, h);
    expect(pools(repo.root).length).toBe(2);
    expect(temps(repo.root).every((n) => n.startsWith(POOL_PREFIX))).toBe(true);
  });
});
