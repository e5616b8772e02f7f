/**
 * Log locks. Every history write already runs under the work-tree lock (the
 * recorder is called by the write path with it held; reviews take it), which
 * serialises all worksnap processes on a repository. Each conversation's log
 * is additionally rewritten only under its own lock, as spec 002 section 7
 * asks, so a log is never written by two hands even if a future caller forgets
 * the outer lock.
 *
 * The lock is proper-lockfile's (an atomic `mkdir`, its mtime refreshed by the
 * holder): a crashed holder stops refreshing, and after STALE_MS the next
 * process removes it and proceeds. Inside one process, waiters queue on a
 * promise chain instead of polling.
 */
import { properLockfile } from "../lazy-lockfile";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { internal, repoChanged } from "../../core/errors";

export const LOG_LOCK_STALE_MS = 10_000;
const UPDATE_MS = 2_000;
const WAIT_MS = 60_000;

const queues = new Map<string, Promise<unknown>>();

/** In-process mutual exclusion on a key. */
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

/** Runs fn holding every lock in `files` (lock directories `<file>.lock`), taken in the given order. */
export async function withFileLocks<T>(files: string[], fn: () => Promise<T>): Promise<T> {
  if (files.length === 0) return fn();
  const [first, ...rest] = files as [string, ...string[]];
  return withQueue(first, async () => {
    const compromised: Error[] = [];
    const unlock = await acquire(first, compromised);
    try {
      const result = await withFileLocks(rest, fn);
      if (compromised.length > 0) throw internal(`the history log lock ${first}.lock was lost while held: ${compromised[0]!.message}`, { lock: `${first}.lock` });
      return result;
    } finally {
      await unlock().catch(() => undefined); // a compromised lock is no longer ours to remove
    }
  });
}

async function acquire(file: string, compromised: Error[]): Promise<() => Promise<void>> {
  mkdirSync(dirname(file), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  let delay = 5;
  for (;;) {
    try {
      return await (await properLockfile()).lock(file, {
        realpath: false,
        stale: LOG_LOCK_STALE_MS,
        update: UPDATE_MS,
        retries: 0,
        onCompromised: (err: Error) => void compromised.push(err),
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw internal(`cannot take the history lock ${file}.lock: ${(err as Error).message}`, { lock: `${file}.lock` });
      if (Date.now() > deadline) {
        throw repoChanged(`another worksnap process has held the history lock ${file}.lock for over ${WAIT_MS / 1000}s; try again`, { lock: `${file}.lock` });
      }
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }
}
