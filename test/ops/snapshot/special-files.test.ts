import { describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, rmSync, symlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession } from "../../helpers/binary";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

/**
 * FIFOs, sockets and devices are never opened for reading in a way that can
 * wait: snapshot_file refuses them at once ("not a regular file"), and
 * whole-tree work skips one git lists (a tracked file replaced by a FIFO) and
 * names it, like a file it cannot read. Each test has a short timeout: a
 * regression hangs rather than fails.
 */
function mkfifo(path: string): void {
  expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
}

function mksocket(path: string): void {
  expect(Bun.spawnSync(["python3", "-c", `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(path)})`]).exitCode).toBe(0);
}

/** A FIFO held open for writing (and reading) by this process, so a reader finds a writer and no data: EAGAIN, not EOF. */
function heldFifo(path: string): { write(s: string): void } & Disposable {
  mkfifo(path);
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  return { write: (s) => void writeSync(fd, s), [Symbol.dispose]: () => closeSync(fd) };
}

function seed(repo: TmpRepo): void {
  repo.write("a.txt", "needle\n");
  repo.write("pipe.txt", "needle in a file that becomes a FIFO\n");
  repo.write("sock.txt", "needle in a file that becomes a socket\n");
  repo.commit();
}

describe("special files", () => {
  test("snapshot_file on a FIFO, a symlink to a FIFO, a FIFO with a writer and a socket answers at once: not a regular file", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    mkfifo(join(repo.root, "fifo"));
    symlinkSync("fifo", join(repo.root, "link-to-fifo"));
    using _held = heldFifo(join(repo.root, "held"));
    mksocket(join(repo.root, "sock"));
    await using s = await mcpSession(repo.root);
    for (const path of ["fifo", "link-to-fifo", "held", "sock"]) {
      for (const range of [{}, { start_line: 1, end_line: 2 }]) {
        const e = await s.callError("snapshot_file", { mode: "worktree", path, ...range });
        expect([path, e.code]).toEqual([path, "INVALID_ARGUMENT"]);
        expect(e.message).toContain("not a regular file");
      }
    }
    const cliRead = cli(["snapshot", "file", "fifo", "--root", repo.root]);
    expect(cliRead.code).toBe(1);
    expect(cliRead.stderr).toContain("not a regular file");
  }, 20_000);

  test("a tracked file replaced by a FIFO or a socket does not hang snapshot, grep or export: it is skipped and named", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    rmSync(join(repo.root, "pipe.txt"));
    using held = heldFifo(join(repo.root, "pipe.txt"));
    held.write("needle written into the pipe\n");
    rmSync(join(repo.root, "sock.txt"));
    mksocket(join(repo.root, "sock.txt"));
    // git lists both as modified, so they are candidates
    expect(repo.git("status", "--porcelain")).toContain(" M pipe.txt");
    await using s = await mcpSession(repo.root);
    const snap = await s.call("snapshot_create", { paths: ["."] });
    expect(snap).toMatchObject({ manifest_stats: { files: 1, unreadable: 2 }, unreadable: ["pipe.txt", "sock.txt"] });
    for (const fixed of [true, false]) {
      const g = await s.call("snapshot_grep", { mode: "worktree", pattern: "needle", fixed_strings: fixed });
      expect(g.matches.map((m: any) => m.path)).toEqual(["a.txt"]);
      expect(g.unreadable).toEqual(["pipe.txt", "sock.txt"]);
    }
    expect(await s.call("snapshot_export", { mode: "worktree" })).toMatchObject({ files: 1, unreadable: ["pipe.txt", "sock.txt"] });
    const list = await s.call("snapshot_list", { mode: "worktree" });
    expect(list.entries.map((e: any) => e.path)).toEqual(["a.txt"]);
    expect(list.unreadable).toEqual(["pipe.txt", "sock.txt"]);
    // the data written into the pipe is still there: nothing read it
    const fd = openSync(join(repo.root, "pipe.txt"), constants.O_RDONLY | constants.O_NONBLOCK);
    const buf = Buffer.alloc(100);
    const { readSync } = await import("node:fs");
    expect(buf.subarray(0, readSync(fd, buf)).toString()).toBe("needle written into the pipe\n");
    closeSync(fd);
  }, 30_000);

  test("the same with the TypeScript paths (no native module)", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    rmSync(join(repo.root, "pipe.txt"));
    using _held = heldFifo(join(repo.root, "pipe.txt"));
    const env = { WORKSNAP_NATIVE: "0" };
    const r = cli(["snapshot", "create", "--root", repo.root, "--json"], { env });
    expect(r.json()).toMatchObject({ manifest_stats: { files: 2, unreadable: 1 }, unreadable: ["pipe.txt"] });
    const g = cli(["snapshot", "grep", "need+le", "--root", repo.root, "--json"], { env }).json();
    expect(g.matches.map((m: any) => m.path)).toEqual(["a.txt", "sock.txt"]);
    expect(g.unreadable).toEqual(["pipe.txt"]);
  }, 30_000);

  test("a FIFO named .gitignore does not stop a walk outside git", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    mkfifo(join(repo.root, ".gitignore"));
    const r = cli(["snapshot", "list", "--root", repo.root, "--json"]);
    expect(r.json().entries.map((e: any) => e.path)).toEqual(["a.txt"]);
  }, 20_000);
});
