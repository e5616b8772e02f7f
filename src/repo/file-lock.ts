/**
 * Locks across worksnap processes, and queues inside one. A lock is the
 * directory `<file>.lock`, made by an atomic `mkdir`, whose mtime the holder
 * refreshes every `updateMs` (the protocol of proper-lockfile, which earlier
 * versions used, so the two take turns correctly). A holder that crashed stops
 * refreshing it; after `staleMs` the next process removes it and proceeds, so
 * a kill -9 never wedges a repository. A holder that finds the mtime is no
 * longer the one it set (its lock was taken over while it stalled past
 * `staleMs`) or the directory gone is told (onCompromised). A process that
 * exits, or is ended by SIGINT, SIGTERM or SIGHUP, removes the locks it holds.
 * Inside one process, waiters queue on a promise chain (withQueue) instead of
 * polling the directory.
 *
 * Written here rather than loaded: proper-lockfile brought graceful-fs and
 * signal-exit, whose loading cost every writing command about 10 ms of its
 * start-up.
 */
import { mkdir, rmdir, stat, utimes } from "node:fs/promises";
import { rmdirSync } from "node:fs";
import type { WorksnapError } from "../core/errors";

const queues = new Map<string, Promise<unknown>>();

/** In-process mutual exclusion on a key: callers run one at a time, in call order. */
export async function withQueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}

export interface FileLockOptions {
  /** a lock not refreshed for this long is taken over */
  staleMs: number;
  /** how often the holder refreshes it */
  updateMs: number;
  /** how long to wait for another holder before giving up */
  waitMs: number;
  /** told when another process took the lock over while it was held (this process stalled past staleMs) */
  onCompromised: (err: Error) => void;
  /** runs between attempts while the lock is held elsewhere (to clear a dead holder's lock sooner) */
  betweenAttempts?: () => void;
  /** the error for a failure to take the lock other than "held elsewhere" */
  failed: (err: Error) => WorksnapError;
  /** the error when the wait runs out */
  timedOut: () => WorksnapError;
}

/** Takes the lock on `file` (the directory `<file>.lock`), retrying with backoff; resolves to its release. */
export async function acquireFileLock(file: string, opts: FileLockOptions): Promise<() => Promise<void>> {
  const deadline = Date.now() + opts.waitMs;
  let delay = 5;
  for (;;) {
    let taken: HeldLock | null;
    try {
      taken = await tryLock(`${file}.lock`, opts.staleMs);
    } catch (err) {
      throw opts.failed(err as Error);
    }
    if (taken) return hold(taken, opts);
    if (Date.now() > deadline) throw opts.timedOut();
    opts.betweenAttempts?.();
    await Bun.sleep(delay);
    delay = Math.min(delay * 2, 250);
  }
}

interface HeldLock {
  dir: string;
  /** The lock's mtime as this holder last set it (read back: the file system's precision). */
  mtimeMs: number;
  lastUpdate: number;
  timer: ReturnType<typeof setTimeout> | null;
  released: boolean;
}

/** The locks this process holds, removed if it exits holding them. */
const held = new Set<HeldLock>();

/** One attempt: the lock, or null while another live holder has it. A stale lock is removed and taken. */
async function tryLock(dir: string, staleMs: number): Promise<HeldLock | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir);
    } catch (err) {
      if (code(err) !== "EEXIST") throw err;
      if (attempt > 0) return null; // taken again by someone else after a removal: held
      let st;
      try {
        st = await stat(dir);
      } catch (e) {
        if (code(e) === "ENOENT") continue; // released meanwhile: one more try
        throw e;
      }
      if (st.mtimeMs >= Date.now() - staleMs) return null;
      // stale: its holder stopped refreshing it; removed, then taken unless someone else is quicker
      await rmdir(dir).catch((e) => {
        if (code(e) !== "ENOENT") throw e;
      });
      continue;
    }
    try {
      return { dir, mtimeMs: (await stat(dir)).mtimeMs, lastUpdate: Date.now(), timer: null, released: false };
    } catch (err) {
      await rmdir(dir).catch(() => undefined); // made but not known: not left behind to go stale
      throw err;
    }
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function hold(lock: HeldLock, opts: FileLockOptions): () => Promise<void> {
  held.add(lock);
  watchExit();
  const compromised = (err: Error) => {
    if (lock.released) return;
    lock.released = true;
    if (lock.timer) clearTimeout(lock.timer);
    held.delete(lock);
    opts.onCompromised(err);
  };
  const schedule = (ms: number) => {
    lock.timer = setTimeout(() => void refresh(), ms);
    lock.timer.unref?.();
  };
  const refresh = async () => {
    lock.timer = null;
    if (lock.released) return;
    const over = () => lock.lastUpdate + opts.staleMs < Date.now();
    try {
      const st = await stat(lock.dir);
      if (lock.released) return;
      if (st.mtimeMs !== lock.mtimeMs) return compromised(new Error("Unable to update lock within the stale threshold"));
      const now = new Date();
      await utimes(lock.dir, now, now);
      const back = await stat(lock.dir);
      if (lock.released) return;
      lock.mtimeMs = back.mtimeMs;
      lock.lastUpdate = Date.now();
      schedule(opts.updateMs);
    } catch (err) {
      if (lock.released) return;
      if (code(err) === "ENOENT" || over()) return compromised(err as Error);
      schedule(1000);
    }
  };
  schedule(opts.updateMs);
  return async () => {
    if (lock.released) throw Object.assign(new Error("Lock is already released"), { code: "ERELEASED" });
    lock.released = true;
    if (lock.timer) clearTimeout(lock.timer);
    held.delete(lock);
    await rmdir(lock.dir).catch((err) => {
      if (code(err) !== "ENOENT") throw err;
    });
  };
}

const EXIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let exitWatched = false;

/**
 * Once a lock is taken: the locks still held are removed when the process
 * exits; on SIGINT, SIGTERM or SIGHUP too, when nothing else listens for the
 * signal, after which the process ends by that signal as it would have.
 */
function watchExit(): void {
  if (exitWatched) return;
  exitWatched = true;
  process.on("exit", removeHeld);
  for (const sig of EXIT_SIGNALS) {
    const onSignal = () => {
      if (process.listenerCount(sig) > 1) return; // someone else handles it
      removeHeld();
      process.off(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

function removeHeld(): void {
  for (const lock of held) {
    lock.released = true;
    if (lock.timer) clearTimeout(lock.timer);
    try {
      rmdirSync(lock.dir);
    } catch {
      // gone already
    }
  }
  held.clear();
}
