/**
 * A server's writes (a long-lived workspace): new contents are staged in
 * spare files made between calls, files that exist are replaced by exchanging
 * names, and the replaced files are removed after the call (tmp-reserve.ts).
 * What a reader sees must be what a rename gives.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { POOL_PREFIX, RESERVE_MAX, RESERVE_MIN, SPARE_PERM, TmpReserve } from "../../../src/repo/tmp-reserve";
import { cleanStaleTemps } from "../../../src/repo/state-dir";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { applyChanges } from "../../../src/ops/write/write-path";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { tmpDir, tmpRepo } from "../../helpers/tmp-repo";
import { enc, permOf, read, rp, temps } from "../../helpers/workspace";

function serverOf(root: string): Workspace & Disposable {
  const ws = openWorkspace(root, { longLived: true });
  return Object.assign(ws, { [Symbol.dispose]: () => closeWorkspace(ws) });
}

const sparesDir = (ws: Workspace) => ws.reserve!.sparesDir;

function spareInodes(ws: Workspace): Map<number, string> {
  const dir = sparesDir(ws);
  const out = new Map<number, string>();
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) out.set(statSync(join(dir, name)).ino, name);
  return out;
}

describe("write path in a server: spares, exchanges, removals between calls", () => {
  test("after the first write the reserve holds empty 0644 spares; the next write is staged in them", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    using ws = serverOf(repo.root);
    await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("A1\n") }]);
    await ws.reserve!.idle();
    expect(ws.reserve!.ready).toBe(RESERVE_MIN);
    const spares = spareInodes(ws);
    expect(spares.size).toBe(RESERVE_MIN);
    for (const name of readdirSync(sparesDir(ws))) {
      const st = statSync(join(sparesDir(ws), name));
      expect(st.size).toBe(0);
      // made SPARE_PERM, by path through the runner's umask (a spare's bits are set as it is filled)
      expect([SPARE_PERM, SPARE_PERM & ~process.umask()]).toContain(st.mode & 0o7777);
    }
    await applyChanges(ws, [
      { kind: "write", path: rp("a.txt"), bytes: enc("A2\n") },
      { kind: "write", path: rp("new/c.txt"), bytes: enc("C\n") },
    ]);
    expect([read(repo.root, "a.txt"), read(repo.root, "new/c.txt")]).toEqual(["A2\n", "C\n"]);
    // both files are former spares
    expect(spares.has(statSync(join(repo.root, "a.txt")).ino)).toBe(true);
    expect(spares.has(statSync(join(repo.root, "new/c.txt")).ino)).toBe(true);
    // a.txt keeps the bits the fixture gave it; new/c.txt gets a new file's (0644 under the usual umask 022)
    const umask = process.umask();
    expect([permOf(repo.root, "a.txt"), permOf(repo.root, "new/c.txt")]).toEqual([0o644 & ~umask, (0o666 & ~umask) | 0o600]);
  });

  test("permission bits other than the spares' are set on the staged file; an existing file keeps its own", async () => {
    await using repo = await tmpRepo();
    repo.write("private.txt", "p\n", 0o600);
    repo.write("tool", "t\n", 0o750);
    using ws = serverOf(repo.root);
    await applyChanges(ws, [{ kind: "write", path: rp("seed.txt"), bytes: enc("s\n") }]);
    await ws.reserve!.idle();
    await applyChanges(ws, [
      { kind: "write", path: rp("private.txt"), bytes: enc("P\n") },
      { kind: "write", path: rp("tool"), bytes: enc("T\n") },
      { kind: "write", path: rp("run.sh"), bytes: enc("#!/bin/sh\n"), mode: "100755" },
    ]);
    // run.sh is new: 0755 under the usual umask 022
    expect([permOf(repo.root, "private.txt"), permOf(repo.root, "tool"), permOf(repo.root, "run.sh")]).toEqual([0o600, 0o750, (0o777 & ~process.umask()) | 0o700]);
    expect([read(repo.root, "private.txt"), read(repo.root, "tool")]).toEqual(["P\n", "T\n"]);
  });

  test("a reader holding the old file keeps reading the old bytes; another hard link keeps the old content", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "old content\n");
    linkSync(join(repo.root, "f.txt"), join(repo.root, "twin.txt"));
    using ws = serverOf(repo.root);
    const fd = openSync(join(repo.root, "f.txt"), "r");
    try {
      await applyChanges(ws, [{ kind: "write", path: rp("f.txt"), bytes: enc("new content\n") }]);
      await ws.reserve!.idle();
      const buf = Buffer.alloc(64);
      const n = readSync(fd, buf, 0, 64, 0);
      expect(buf.toString("utf8", 0, n)).toBe("old content\n");
    } finally {
      closeSync(fd);
    }
    expect(read(repo.root, "f.txt")).toBe("new content\n");
    expect(read(repo.root, "twin.txt")).toBe("old content\n");
    expect(statSync(join(repo.root, "twin.txt")).nlink).toBe(1);
  });

  test("the replaced files are removed after the call: .mcp/tmp holds only the spares", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`src/f${i}.txt`, `line ${i}\n`);
    repo.commit();
    using ws = serverOf(repo.root);
    const patch = Array.from({ length: 40 }, (_, i) => `--- a/src/f${i}.txt\n+++ b/src/f${i}.txt\n@@ -1 +1 @@\n-line ${i}\n+LINE ${i}\n`).join("");
    for (let round = 0; round < 2; round++) {
      const r = await applyPatchOp(ws, { mode: "worktree", patch: round === 0 ? patch : patch.replace(/-line/g, "-XX").replace(/\+LINE/g, "+line").replace(/-XX/g, "-LINE") });
      expect(r.applied).toBe(true);
      await ws.reserve!.idle();
      expect(temps(repo.root)).toEqual([basename(sparesDir(ws))]);
      for (const name of readdirSync(sparesDir(ws))) expect(statSync(join(sparesDir(ws), name)).size).toBe(0);
      expect(ws.reserve!.ready).toBe(40);
    }
    expect(read(repo.root, "src/f7.txt")).toBe("line 7\n");
  });

  test("a spare replaced by a symlink is not written through: the write fails whole, the link's target is untouched", async () => {
    await using repo = await tmpRepo();
    await using outside = tmpDir("ws-outside-");
    writeFileSync(join(outside.path, "victim.txt"), "keep me\n");
    repo.write("a.txt", "a\n");
    using ws = serverOf(repo.root);
    await applyChanges(ws, [{ kind: "write", path: rp("seed.txt"), bytes: enc("s\n") }]);
    await ws.reserve!.idle();
    for (const name of readdirSync(sparesDir(ws))) {
      rmSync(join(sparesDir(ws), name));
      symlinkSync(join(outside.path, "victim.txt"), join(sparesDir(ws), name));
    }
    await expect(applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("A\n") }])).rejects.toThrow();
    expect(readFileSync(join(outside.path, "victim.txt"), "utf8")).toBe("keep me\n");
    expect(read(repo.root, "a.txt")).toBe("a\n");
  });

  test("closing the workspace removes what is still to be removed and leaves its unused spares, empty, as one pool", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const ws = openWorkspace(repo.root, { longLived: true });
    await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("b\n") }]);
    await ws.reserve!.idle();
    closeWorkspace(ws);
    const left = temps(repo.root);
    expect(left.length).toBe(1);
    expect(left[0]!.startsWith(POOL_PREFIX)).toBe(true);
    const pool = join(repo.root, ".mcp", "tmp", left[0]!);
    expect(readdirSync(pool).length).toBe(RESERVE_MIN);
    for (const name of readdirSync(pool)) expect([statSync(join(pool, name)).size, statSync(join(pool, name)).mode & 0o7777]).toEqual([0, SPARE_PERM]);
  });

  test("closing while spares are still being made leaves no pool (it could hold a half-made or half-removed file)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const ws = openWorkspace(repo.root, { longLived: true });
    await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("b\n") }]);
    // spares ready, and more being made when the workspace closes, in the same tick (regression: the test closed
    // right after the call, whose few spares were sometimes all made by then: a pool was rightly left)
    await ws.reserve?.idle();
    expect(ws.reserve?.ready).toBeGreaterThan(0);
    ws.reserve?.want(RESERVE_MAX);
    closeWorkspace(ws);
    expect(temps(repo.root)).toEqual([]);
  });

  test("a one-shot workspace makes no spares and leaves nothing in .mcp/tmp when a call returns", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const ws = openWorkspace(repo.root);
    try {
      await applyChanges(ws, [
        { kind: "write", path: rp("a.txt"), bytes: enc("b\n") },
        { kind: "write", path: rp("c.txt"), bytes: enc("c\n") },
      ]);
      expect(temps(repo.root)).toEqual([]);
      expect(read(repo.root, "a.txt")).toBe("b\n");
      expect(ws.reserve!.ready).toBe(0);
    } finally {
      closeWorkspace(ws);
    }
    expect(temps(repo.root)).toEqual([]);
  });

  test("a one-shot workspace that hands off keeps the replaced files in .mcp/tmp until closed (or handed off), then nothing is left", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const ws = openWorkspace(repo.root, { handOff: true });
    try {
      await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("b\n") }]);
      expect(read(repo.root, "a.txt")).toBe("b\n");
      expect(temps(repo.root).map((n) => n.replace(/^[0-9]+-[0-9a-f]+-/, ""))).toEqual(["stage"]);
    } finally {
      closeWorkspace(ws);
    }
    expect(temps(repo.root)).toEqual([]);
  });
});

describe("TmpReserve", () => {
  test("spares of a process that died, and its staging directories, are removed by the next process's cleanup", async () => {
    await using repo = await tmpRepo();
    const tmp = join(repo.root, ".mcp", "tmp");
    const dead = 2 ** 22 - 3; // above Linux's default pid_max: never a live process here
    mkdirSync(join(tmp, `${dead}-spares`), { recursive: true });
    writeFileSync(join(tmp, `${dead}-spares`, "0"), "");
    mkdirSync(join(tmp, `${dead}-0123456789ab-stage`));
    writeFileSync(join(tmp, `${dead}-0123456789ab-stage`, "0"), "old bytes a crash left");
    expect(cleanStaleTemps(join(repo.root, ".mcp"))).toBe(2);
    expect(existsSync(join(tmp, `${dead}-spares`))).toBe(false);
    expect(existsSync(join(tmp, `${dead}-0123456789ab-stage`))).toBe(false);
  });

  test("wants stay within bounds, discards are removed in the background, a file in the way of the next spare stops spare-making and is left alone", async () => {
    await using repo = await tmpRepo();
    const tmp = join(repo.root, ".mcp", "tmp");
    mkdirSync(tmp, { recursive: true });
    const reserve = new TmpReserve(repo.root);
    reserve.want(3);
    await reserve.idle();
    expect(reserve.ready).toBe(RESERVE_MIN);
    const taken = reserve.take()!;
    const takenPath = join(reserve.sparesDir, taken.name);
    writeFileSync(takenPath, "used");
    // the next spare's name is taken by something else: making it fails, and the reserve stops making spares
    const inTheWay = join(reserve.sparesDir, String(RESERVE_MIN));
    writeFileSync(inTheWay, "not ours");
    reserve.discardSpare(taken.name);
    await reserve.idle();
    expect(existsSync(takenPath)).toBe(false);
    expect(reserve.ready).toBe(RESERVE_MIN - 1);
    reserve.want(RESERVE_MIN + 5);
    await reserve.idle();
    expect(reserve.ready).toBe(RESERVE_MIN - 1);
    expect(readFileSync(inTheWay, "utf8")).toBe("not ours");
    mkdirSync(join(tmp, "stage-dir"));
    writeFileSync(join(tmp, "stage-dir", "0"), "x");
    reserve.discardTemp("stage-dir");
    await reserve.idle();
    expect(existsSync(join(tmp, "stage-dir"))).toBe(false);
    reserve.close();
    expect(existsSync(reserve.sparesDir)).toBe(false);
    writeFileSync(join(tmp, "late"), "x");
    reserve.discardTemp("late");
    expect(existsSync(join(tmp, "late"))).toBe(false);
  });
});
