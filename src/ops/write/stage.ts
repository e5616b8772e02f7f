/**
 * The staging half of the one write path (write-path.ts): where a change
 * set's new contents are written, and made durable together, before anything
 * is published.
 */
import { constants, mkdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { RepoPath } from "../../core/repo-path";
import { writeNewFile } from "../../repo/atomic-write";
import { DurableBatch } from "../../repo/durable";
import { ensureStateDir, tempPath } from "../../repo/state-dir";
import { SPARE_PERM, type TmpReserve } from "../../repo/tmp-reserve";
import type { PathState } from "./edit-recorder";
import type { Workspace } from "../workspace";

/** What staging needs of a step of the write path's plan; it sets `staged`. */
export interface StagedStep {
  /** New content; null removes the path (nothing to stage). */
  after: PathState;
  /** A move without new content renames the file itself (nothing to stage). */
  plainRename: boolean;
  dest: { target: { path: RepoPath } };
  perm: number;
  staged?: string;
}

/**
 * Where one call stages its files: the reserve's spares when it has them
 * (tmp-reserve.ts), otherwise new files in a directory of the call's own,
 * `.mcp/tmp/{pid}-{id}-stage/`, made on first use (creating files costs more
 * the larger a directory has ever grown, and `.mcp/tmp` is shared). After
 * the call, the staged files hold what was not published and the old files
 * that exchanges left under their names; all of it is removed, by the
 * reserve in the background when there is one, otherwise before returning.
 */
export class StagingArea {
  private dir: string | null = null;
  private count = 0;
  private readonly spares: string[] = [];

  constructor(
    private readonly stateDir: string,
    private readonly reserve: TmpReserve | null,
  ) {}

  /** Files staged. */
  get files(): number {
    return this.count + this.spares.length;
  }

  /** A place for a regular file: a spare (empty, SPARE_PERM) when the reserve has one, else a new path. */
  nextFile(): { path: string; spare: boolean } {
    const spare = this.reserve?.take();
    if (spare) {
      this.spares.push(spare);
      return { path: spare, spare: true };
    }
    return { path: this.next(), spare: false };
  }

  /** A new path (nothing there yet). */
  next(): string {
    if (this.dir === null) {
      const dir = tempPath(this.stateDir, "stage");
      mkdirSync(dir);
      this.dir = dir;
    }
    return join(this.dir, String(this.count++));
  }

  /** Removes every staged file (and the directory). */
  remove(): void {
    const paths = this.dir === null ? this.spares : [...this.spares, this.dir];
    for (const p of paths) {
      if (this.reserve) this.reserve.discard(p);
      else rmSync(p, { recursive: true, force: true });
    }
    this.spares.length = 0;
    this.dir = null;
  }
}

/**
 * Writes every new content to a file of the staging area (when it is on the
 * same file system as the target; others are written beside the target at
 * publish time) and makes all of them durable with one flush. The files are
 * written by asynchronous writes (the I/O threads), all started before the
 * first await, so the caller's work meanwhile overlaps them; the promise
 * settles only after every write has finished, failed or not.
 */
export async function stageAll(ws: Workspace, steps: StagedStep[], area: StagingArea): Promise<void> {
  ensureStateDir(ws.repo.stateDir);
  const tmpDir = join(ws.repo.stateDir, "tmp");
  const tmpDev = statSync(tmpDir).dev;
  // Opened before the first write: a syncfs reports write-back errors since then.
  const batch = new DurableBatch(tmpDir);
  const devices = new Map<string, number>();
  const writes: Promise<void>[] = [];
  try {
    try {
      for (const s of steps) {
        if (s.after === null || s.plainRename) continue;
        if (deviceOf(ws.repo.root, s.dest.target.path, devices) !== tmpDev) continue; // staged beside the target at publish time
        const bytes = s.after.bytes;
        if (s.after.mode === "120000") {
          // A symlink cannot be opened to fsync it (open follows it): a syncfs covers it; per-file flushing leaves
          // it, as before, to the flush of the directory it is renamed into.
          const tmp = area.next();
          s.staged = tmp;
          symlinkSync(Buffer.from(s.after.bytes.buffer, s.after.bytes.byteOffset, s.after.bytes.byteLength), tmp);
          continue;
        }
        const { path: tmp, spare } = area.nextFile();
        s.staged = tmp;
        writes.push((spare ? fillSpare(tmp, bytes, s.perm) : writeNewFile(tmp, bytes, s.perm)).then(() => batch.add(tmp, bytes.length)));
      }
    } finally {
      await settled(writes);
    }
    throwFirstFailure(await Promise.allSettled(writes));
    // All data reaches the disk before the first rename publishes any of it.
    await batch.flush();
  } finally {
    batch.close();
  }
}

/** Opening a spare: never through a symlink put in its place; made again if it went missing. */
const SPARE_OPEN = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

/** A spare (empty, permission bits SPARE_PERM) filled with `bytes`, by the I/O threads. */
async function fillSpare(path: string, bytes: Uint8Array, perm: number): Promise<void> {
  await writeFile(path, bytes, { flag: SPARE_OPEN, mode: SPARE_PERM });
  // (a spare made again passed its mode through the umask)
  if (perm !== SPARE_PERM || (SPARE_PERM & process.umask()) !== 0) await chmod(path, perm);
}

function deviceOf(root: string, path: string, cache: Map<string, number>): number {
  const dir = dirname(join(root, path));
  let dev = cache.get(dir);
  if (dev === undefined) {
    dev = deviceOfDir(dir);
    cache.set(dir, dev);
  }
  return dev;
}

function deviceOfDir(dir: string): number {
  let cur = dir;
  for (;;) {
    try {
      return statSync(cur).dev;
    } catch {
      const up = dirname(cur);
      if (up === cur) return -1;
      cur = up;
    }
  }
}

export async function settled(promises: Promise<unknown>[]): Promise<void> {
  await Promise.allSettled(promises);
}

export function throwFirstFailure(results: PromiseSettledResult<unknown>[]): void {
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

