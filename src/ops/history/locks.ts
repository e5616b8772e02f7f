/**
 * Log locks. Every history write already runs under the work-tree lock (the
 * recorder is called by the write path with it held; reviews take it), which
 * serialises all worksnap processes on a repository. Each conversation's log
 * is additionally rewritten only under its own lock, as spec 002 section 7
 * asks, so a log is never written by two hands even if a future caller forgets
 * the outer lock.
 *
 * The lock is a file lock (repo/file-lock.ts): a crashed holder stops
 * refreshing it, and after LOG_LOCK_STALE_MS the next process removes it and
 * proceeds.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { internal, repoChanged } from "../../core/errors";
import { acquireFileLock, withQueue } from "../../repo/file-lock";
import { shownStatePath } from "../../repo/state-dir";

export const LOG_LOCK_STALE_MS = 10_000;
const UPDATE_MS = 2_000;
const WAIT_MS = 60_000;

/**
 * Runs fn holding every lock in `files` (lock directories `<file>.lock`), taken in the given order. `what` names the
 * locks in errors (the task layer's state uses the same locks).
 */
export async function withFileLocks<T>(files: string[], fn: () => Promise<T>, what = "history log lock"): Promise<T> {
  if (files.length === 0) return fn();
  const [first, ...rest] = files as [string, ...string[]];
  return withQueue(first, async () => {
    const compromised: Error[] = [];
    const unlock = await acquire(first, compromised, what);
    try {
      const result = await withFileLocks(rest, fn, what);
      if (compromised.length > 0) {
        throw internal(`the ${what} ${shownStatePath(`${first}.lock`)} was lost while held: ${compromised[0]!.message}`, { lock: shownStatePath(`${first}.lock`) });
      }
      return result;
    } finally {
      await unlock().catch(() => undefined); // a compromised lock is no longer ours to remove
    }
  });
}

function acquire(file: string, compromised: Error[], what: string): Promise<() => Promise<void>> {
  mkdirSync(dirname(file), { recursive: true });
  const lock = shownStatePath(`${file}.lock`);
  return acquireFileLock(file, {
    staleMs: LOG_LOCK_STALE_MS,
    updateMs: UPDATE_MS,
    waitMs: WAIT_MS,
    onCompromised: (err) => void compromised.push(err),
    failed: (err) => internal(`cannot take the ${what} ${lock}: ${err.message}`, { lock }),
    timedOut: () => repoChanged(`another worksnap process has held the ${what} ${lock} for over ${WAIT_MS / 1000}s; try again`, { lock }),
  });
}
