import { acquireFileLock, withQueue } from "../../repo/file-lock";
import { writeFileUnflushed } from "../../repo/atomic-write";
import { processAlive, shownStatePath } from "../../repo/state-dir";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { WorksnapError, busy, internal } from "../../core/errors";
import { randomId128 } from "../../core/hash";
import type { Workspace } from "../workspace";

/**
 * The work-tree lock: one writer at a time per repository, across every
 * worksnap process (several `serve` processes, the CLI). It is a file lock
 * (repo/file-lock.ts) on `.mcp/locks/worktree` (of the work tree's top, for a
 * root below it), refreshed every UPDATE_MS and
 * taken over after STALE_MS; a dead holder on this host is recognised sooner
 * by its owner file (RECOVER_MS).
 *
 * Inside one process, waiters queue instead of polling the directory, and a
 * call made while the current async context already holds the lock runs
 * directly (re-entrant), so the edit history can take the lock and call the
 * write path's `...Locked` functions inside it.
 */
export const STALE_MS = 10_000;
const UPDATE_MS = 2_000;
/** A dead local holder's lock is removed once it has not been refreshed for this long. */
const RECOVER_MS = UPDATE_MS + 1_000;
/** How long a writer waits for another writer before giving up. */
export const LOCK_WAIT_MS = 120_000;

interface Held {
  lockDir: string;
  /** Set when another process took the lock over (we stalled past STALE_MS). */
  compromised: Error | null;
}

const held = new AsyncLocalStorage<Held>();

/** `.mcp/locks` of the root, or of the top of the git work tree the root lies below (RepoRoot.lockStateDir). */
export function lockDirOf(ws: Workspace): string {
  return join(ws.repo.lockStateDir, "locks");
}

/** True when the calling async context holds the work-tree lock of `ws`. */
export function holdsWorktreeLock(ws: Workspace): boolean {
  return held.getStore()?.lockDir === lockDirOf(ws);
}

/**
 * Throws when the lock was lost while held (the process stalled longer than
 * STALE_MS and another writer took over): the caller must not publish writes.
 */
export function assertLockIntact(ws: Workspace): void {
  const h = held.getStore();
  if (!h || h.lockDir !== lockDirOf(ws)) throw internal("the work-tree lock is not held by this operation");
  if (h.compromised) throw internal(`the work-tree lock was lost while writing: ${h.compromised.message}`, { lock: shownStatePath(h.lockDir) });
}

/**
 * Runs `fn` holding the work-tree lock. Each time this process takes the lock,
 * the workspace's `onLocked` runs first (completing writes a crashed process
 * left half recorded: history/interrupted.ts), so no write or review ever
 * starts from such a state.
 */
export async function withWorktreeLock<T>(ws: Workspace, fn: () => Promise<T>): Promise<T> {
  const lockDir = lockDirOf(ws);
  if (held.getStore()?.lockDir === lockDir) return fn();
  return withQueue(lockDir, () =>
    withProcessLock(lockDir, async () => {
      await ws.onLocked?.();
      return fn();
    }),
  );
}

interface Owner {
  pid: number;
  host: string;
  token: string;
}

async function withProcessLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(lockDir, { recursive: true });
  const state: Held = { lockDir, compromised: null };
  const file = join(lockDir, "worktree");
  const unlock = await acquire(file, state);
  const owner: Owner = { pid: process.pid, host: hostname(), token: randomId128() };
  try {
    writeOwner(join(lockDir, ".."), `${file}.owner`, owner);
    return await held.run(state, fn);
  } finally {
    if (readOwner(file)?.token === owner.token) rmSync(`${file}.owner`, { force: true });
    await unlock().catch(() => undefined); // a compromised lock is no longer ours to remove
  }
}

/**
 * The owner file is replaced atomically (temp file, rename: a reader sees the
 * old or the new owner, never a torn one) but not flushed: it only tells a
 * waiter on this host whether the holder is alive, and after a power loss no
 * holder is; a missing or older owner file makes a waiter fall back to the
 * lock's staleness (STALE_MS), the same as an unreadable one. This saves two
 * fsyncs per locked operation.
 */
function writeOwner(stateDir: string, target: string, owner: Owner): void {
  writeFileUnflushed(stateDir, target, JSON.stringify(owner));
}

function readOwner(file: string): Owner | null {
  try {
    const o = JSON.parse(readFileSync(`${file}.owner`, "utf8")) as Owner;
    return typeof o.pid === "number" && typeof o.host === "string" && typeof o.token === "string" ? o : null;
  } catch {
    return null;
  }
}

/** The lock's owner when it is a process of this host that has died and the lock has gone unrefreshed. */
function deadOwner(file: string): Owner | null {
  const o = readOwner(file);
  if (!o || o.host !== hostname() || o.pid === process.pid || processAlive(o.pid)) return null;
  try {
    if (Date.now() - statSync(`${file}.lock`).mtimeMs < RECOVER_MS) return null;
  } catch {
    return null;
  }
  return o;
}

/** Removes a dead local holder's lock, one recoverer at a time. */
function recoverFromDeadOwner(file: string): void {
  if (!deadOwner(file)) return;
  const guard = `${file}.recover`;
  try {
    mkdirSync(guard);
  } catch {
    try {
      if (Date.now() - statSync(guard).mtimeMs > STALE_MS) rmdirSync(guard); // a recoverer that died
    } catch {
      // gone meanwhile
    }
    return;
  }
  try {
    const o = deadOwner(file);
    if (!o) return;
    rmdirSync(`${file}.lock`);
    if (readOwner(file)?.token === o.token) rmSync(`${file}.owner`, { force: true });
  } catch {
    // taken or removed by someone else meanwhile: the next attempt sees the truth
  } finally {
    rmdirSync(guard);
  }
}

function acquire(file: string, state: Held): Promise<() => Promise<void>> {
  return acquireFileLock(file, {
    staleMs: STALE_MS,
    updateMs: UPDATE_MS,
    waitMs: LOCK_WAIT_MS,
    onCompromised: (err) => {
      state.compromised = err;
    },
    betweenAttempts: () => recoverFromDeadOwner(file),
    failed: (err) => (err instanceof WorksnapError ? err : internal(`cannot take the work-tree lock: ${err.message}`, { lock: shownStatePath(`${file}.lock`) })),
    timedOut: () =>
      busy(`another worksnap process has held the work-tree lock for over ${LOCK_WAIT_MS / 1000}s; nothing was written; try again`, { reason: "lock", lock: shownStatePath(`${file}.lock`) }),
  });
}
