/**
 * The staging half of the one write path (write-path.ts): where a change
 * set's new contents are written, and made durable together, before anything
 * is published.
 */
import { closeSync, constants, fchmodSync, fsync, fstatSync, rmSync, writeFile as writeFd } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { randomId128 } from "../../core/hash";
import { ancestorsOf, ROOT, type RepoPath } from "../../core/repo-path";
import { writeNewFile } from "../../repo/atomic-write";
import { CREATE_OPEN, type DirHandle, type TreeHandles } from "../../repo/dir-handle";
import { DurableBatch } from "../../repo/durable";
import { mountOf } from "../../repo/mount-of";
import { ensureStateDir } from "../../repo/state-dir";
import { SPARE_PERM, type TmpReserve } from "../../repo/tmp-reserve";
import { processUmask } from "../../repo/umask";
import type { PathState } from "./edit-recorder";
import type { WorktreeAccess } from "./target";
import type { Workspace } from "../workspace";

/** A staged file: a name in a directory held open. */
export interface Staged {
  dir: DirHandle;
  name: string;
}

/** Where a step's file is or goes: its path, its directory when that exists, and the path of that directory. */
interface StepTarget {
  path: RepoPath;
  dir: DirHandle | null;
  parent: RepoPath;
}

/** What staging needs of a step of the write path's plan; it sets `staged`. */
export interface StagedStep {
  /** New content; null removes the path (nothing to stage). */
  after: PathState;
  /**
   * A move without new content renames the file itself (nothing to stage);
   * staging clears it for a move from one mount to another, which no rename
   * can make: the file's bytes are then written there and the source removed.
   */
  plainRename: boolean;
  dest: { target: StepTarget };
  source?: { target: StepTarget };
  perm: number;
  staged?: Staged;
}

/**
 * Where one call stages its files: the reserve's spares when it has them
 * (tmp-reserve.ts), otherwise new files in a directory of the call's own,
 * `.mcp/tmp/{pid}-{id}-stage/`, made on first use (creating files costs more
 * the larger a directory has ever grown, and `.mcp/tmp` is shared). Both are
 * reached through directories held open (`.mcp` and `.mcp/tmp` opened beneath
 * the root without following symlinks), never by name from the root. After
 * the call, the staged files hold what was not published and the old files
 * that exchanges left under their names; all of it is removed, by the
 * reserve in the background after a success when there is one, otherwise
 * before the call answers.
 */
export class StagingArea {
  private tmp: DirHandle | null = null;
  private dir: DirHandle | null = null;
  private dirName = "";
  private count = 0;
  private readonly spares: Staged[] = [];

  constructor(
    private readonly handles: TreeHandles,
    private readonly reserve: TmpReserve | null,
  ) {}

  /** Files staged. */
  get files(): number {
    return this.count + this.spares.length;
  }

  /** A place for a regular file: a spare (empty, SPARE_PERM) when the reserve has one, else a new name. */
  nextFile(): { staged: Staged; spare: boolean } {
    const spare = this.reserve?.take();
    if (spare) {
      this.spares.push(spare);
      return { staged: spare, spare: true };
    }
    return { staged: this.next(), spare: false };
  }

  /** A new name (nothing there yet) in the call's staging directory. */
  next(): Staged {
    if (this.dir === null) {
      this.tmp = this.handles.ensureDir(".mcp/tmp");
      const name = `${process.pid}-${randomId128().slice(0, 12)}-stage`;
      this.tmp.mkdir(name);
      this.dirName = name;
      this.dir = this.tmp.openDir(name);
    }
    return { dir: this.dir, name: String(this.count++) };
  }

  /**
   * Removes every staged file (and the directory): now when `now` (a failed
   * call answers with nothing left behind) or without a reserve, otherwise by
   * the reserve between calls.
   */
  remove(now: boolean): void {
    const background = this.reserve !== null && !now;
    for (const s of this.spares) {
      if (background) this.reserve!.discardSpare(s.name);
      else rmSync(s.dir.removalPath(s.name), { force: true });
    }
    if (this.dir !== null && this.tmp !== null) {
      if (background) this.reserve!.discardTemp(this.dirName);
      else rmSync(this.tmp.removalPath(this.dirName), { recursive: true, force: true });
      this.dir.close();
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
export async function stageAll(ws: Workspace, access: WorktreeAccess, steps: StagedStep[], area: StagingArea): Promise<void> {
  ensureStateDir(ws.repo.stateDir);
  const tmpDir = join(ws.repo.stateDir, "tmp");
  const tmp = access.handles.ensureDir(".mcp/tmp");
  const tmpDev = fstatSync(tmp.fd).dev;
  const mounts = new Mounts(access, tmpDev);
  const tmpMount = mounts.of(tmp);
  // Opened before the first write: a syncfs reports write-back errors since then.
  const batch = new DurableBatch(tmpDir);
  const writes: Promise<void>[] = [];
  try {
    try {
      for (const s of steps) {
        if (s.after === null) continue;
        if (s.plainRename) {
          if (mounts.ofTarget(s.source!.target) === mounts.ofTarget(s.dest.target)) continue;
          s.plainRename = false; // to another mount: its bytes are written there
        }
        if (mounts.ofTarget(s.dest.target) !== tmpMount) continue; // staged beside the target at publish time
        const bytes = s.after.bytes;
        if (s.after.mode === "120000" && access.symlinks) {
          // A symlink cannot be opened to fsync it (open follows it): a syncfs covers it; per-file flushing leaves
          // it, as before, to the flush of the directory it is renamed into.
          const staged = area.next();
          s.staged = staged;
          staged.dir.symlink(bytes, staged.name);
          continue;
        }
        const { staged, spare } = area.nextFile();
        s.staged = staged;
        const path = staged.dir.asyncPath(staged.name);
        if (path !== null) writes.push((spare ? fillSpare(path, bytes, s.perm) : writeNewFile(path, bytes, s.perm)).then(() => batch.add(path, bytes.length)));
        else writes.push(writeThroughDescriptor(staged, spare, bytes, s.perm));
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
  if (perm !== SPARE_PERM || (SPARE_PERM & processUmask()) !== 0) await chmod(path, perm);
}

/**
 * Where no path reaches a held directory (no /proc): the file is opened
 * through the descriptor, written by the I/O threads, its mode set exactly,
 * and flushed on its own.
 */
async function writeThroughDescriptor(staged: Staged, spare: boolean, bytes: Uint8Array, perm: number): Promise<void> {
  const fd = staged.dir.openFile(staged.name, spare ? SPARE_OPEN : CREATE_OPEN, 0o600);
  try {
    await new Promise<void>((resolve, reject) => writeFd(fd, bytes, (err) => (err ? reject(err) : resolve())));
    fchmodSync(fd, perm);
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
  } finally {
    closeSync(fd);
  }
}

/**
 * The mount of the directory a target is or goes in (its nearest existing
 * ancestor when that directory is still to be made; mount-of.ts): a file is
 * staged in `.mcp/tmp` only when a rename can bring it from there. Another
 * device is another mount without asking /proc.
 */
class Mounts {
  private readonly byDir = new Map<string, string>();

  constructor(
    private readonly access: WorktreeAccess,
    private readonly tmpDev: number,
  ) {}

  of(dir: DirHandle): string {
    const dev = fstatSync(dir.fd).dev;
    return dev === this.tmpDev ? mountOf(dir.fd) : `${dev}`;
  }

  ofTarget(target: StepTarget): string {
    let mount = this.byDir.get(target.parent);
    if (mount !== undefined) return mount;
    let dir = target.dir;
    if (!dir) {
      const up = [ROOT as RepoPath, ...ancestorsOf(target.parent)];
      for (let i = up.length - 1; i >= 0 && !dir; i--) dir = this.access.handles.dir(up[i]!);
    }
    mount = dir ? this.of(dir) : "";
    this.byDir.set(target.parent, mount);
    return mount;
  }
}

export async function settled(promises: Promise<unknown>[]): Promise<void> {
  await Promise.allSettled(promises);
}

export function throwFirstFailure(results: PromiseSettledResult<unknown>[]): void {
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}
