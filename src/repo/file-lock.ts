/**
 * Locks across worksnap processes, and queues inside one. A lock is
 * proper-lockfile's: an atomic `mkdir` of `<file>.lock`, whose mtime the
 * holder refreshes every `updateMs`. A holder that crashed stops refreshing
 * it; after `staleMs` the next process removes it and proceeds, so a kill -9
 * never wedges a repository. Inside one process, waiters queue on a promise
 * chain (withQueue) instead of polling the directory.
 *
 * proper-lockfile is loaded on first use: it pulls in graceful-fs, whose
 * set-up costs tens of milliseconds, and read-only commands never take a lock.
 */
import type lockfileModule from "proper-lockfile";
import type { WorksnapError } from "../core/errors";

let loaded: Promise<typeof lockfileModule> | null = null;

function properLockfile(): Promise<typeof lockfileModule> {
  loaded ??= import("proper-lockfile").then((m) => m.default);
  return loaded;
}

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
    try {
      return await (await properLockfile()).lock(file, {
        realpath: false,
        stale: opts.staleMs,
        update: opts.updateMs,
        retries: 0,
        onCompromised: opts.onCompromised,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw opts.failed(err as Error);
      if (Date.now() > deadline) throw opts.timedOut();
      opts.betweenAttempts?.();
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }
}
