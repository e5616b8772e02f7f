/**
 * The lock between worksnap processes (repo/file-lock.ts): one holder at a time, a dead holder's lock taken over
 * once stale and not before, a holder told when its lock was taken over, and the lock removed when its process
 * exits or is ended by a signal (not by kill -9: that one goes stale).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireFileLock, type FileLockOptions } from "../../src/repo/file-lock";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "ws-file-lock-"));
  dirs.push(d);
  return d;
}

class TimedOut extends Error {}

function options(over: Partial<FileLockOptions> = {}): FileLockOptions {
  return {
    staleMs: 2_000,
    updateMs: 200,
    waitMs: 300,
    onCompromised: () => undefined,
    failed: (err) => err as never,
    timedOut: () => new TimedOut("timed out") as never,
    ...over,
  };
}

const HOLDER = join(import.meta.dir, "..", "fixtures", "file-lock-holder.ts");

async function holder(file: string) {
  const proc = Bun.spawn([process.execPath, HOLDER, file], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toBe("locked\n");
  return proc;
}

describe("acquireFileLock", () => {
  test("one holder at a time: a second taker waits, times out, and gets the lock once it is released", async () => {
    const file = join(scratch(), "worktree");
    const release = await acquireFileLock(file, options());
    expect(statSync(`${file}.lock`).isDirectory()).toBe(true);
    await expect(acquireFileLock(file, options())).rejects.toBeInstanceOf(TimedOut);
    const waiting = acquireFileLock(file, options({ waitMs: 5_000 }));
    await Bun.sleep(50);
    await release();
    const again = await waiting;
    expect(existsSync(`${file}.lock`)).toBe(true);
    await again();
    expect(existsSync(`${file}.lock`)).toBe(false);
    await expect(again()).rejects.toMatchObject({ code: "ERELEASED" });
  });

  test("a lock whose holder stopped refreshing it is taken over once stale, not before", async () => {
    const file = join(scratch(), "worktree");
    mkdirSync(`${file}.lock`);
    const old = new Date(Date.now() - 1_000);
    utimesSync(`${file}.lock`, old, old);
    await expect(acquireFileLock(file, options({ staleMs: 5_000 }))).rejects.toBeInstanceOf(TimedOut);
    const stale = new Date(Date.now() - 10_000);
    utimesSync(`${file}.lock`, stale, stale);
    const release = await acquireFileLock(file, options({ staleMs: 5_000 }));
    expect(Date.now() - statSync(`${file}.lock`).mtimeMs).toBeLessThan(5_000);
    await release();
  });

  test("the holder refreshes its lock so that it never goes stale while held", async () => {
    const file = join(scratch(), "worktree");
    const release = await acquireFileLock(file, options({ staleMs: 600, updateMs: 100 }));
    await Bun.sleep(1_200);
    await expect(acquireFileLock(file, options({ staleMs: 600 }))).rejects.toBeInstanceOf(TimedOut);
    await release();
  });

  test("a holder whose lock was taken over, or removed, is told, and its release leaves the new holder's lock", async () => {
    const file = join(scratch(), "worktree");
    const told: Error[] = [];
    const release = await acquireFileLock(file, options({ updateMs: 100, onCompromised: (e) => void told.push(e) }));
    // another process took it over (as after this one stalled past staleMs): the mtime is not the one it set
    const other = new Date(Date.now() + 3_000);
    utimesSync(`${file}.lock`, other, other);
    for (let i = 0; i < 100 && told.length === 0; i++) await Bun.sleep(20);
    expect(told.length).toBe(1);
    await expect(release()).rejects.toMatchObject({ code: "ERELEASED" });
    expect(existsSync(`${file}.lock`)).toBe(true); // the other holder's

    const file2 = join(scratch(), "log");
    const told2: Error[] = [];
    await acquireFileLock(file2, options({ updateMs: 100, onCompromised: (e) => void told2.push(e) }));
    rmSync(`${file2}.lock`, { recursive: true });
    for (let i = 0; i < 100 && told2.length === 0; i++) await Bun.sleep(20);
    expect(told2.length).toBe(1);
  });

  test("a process that exits or is ended by SIGTERM, SIGINT or SIGHUP removes its lock; one killed -9 leaves it to go stale", async () => {
    const root = scratch();
    const exits = await holder(join(root, "a"));
    exits.stdin.write("go\n");
    await exits.stdin.flush();
    expect(await exits.exited).toBe(0);
    expect(existsSync(join(root, "a.lock"))).toBe(false);
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      const p = await holder(join(root, sig));
      p.kill(sig);
      await p.exited;
      expect(p.signalCode).toBe(sig); // ended by the signal, as without a lock
      expect(existsSync(join(root, `${sig}.lock`))).toBe(false);
    }
    const killed = await holder(join(root, "k"));
    killed.kill("SIGKILL");
    await killed.exited;
    expect(existsSync(join(root, "k.lock"))).toBe(true);
    const stale = new Date(Date.now() - 60_000);
    utimesSync(join(root, "k.lock"), stale, stale);
    const release = await acquireFileLock(join(root, "k"), options({ staleMs: 10_000 }));
    await release();
  });
});
