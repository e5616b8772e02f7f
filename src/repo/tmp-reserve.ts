/**
 * File-system work a server does between tool calls instead of during them:
 * empty files made ahead of time, and removals of what a call left behind.
 *
 * Where the time of a large write goes (bench/README.md,
 * workspace_apply_patch): giving a new file an inode, and freeing the inode
 * of a file that is replaced. Both depend on the state of the file system
 * more than on the bytes: on the ext4 the benchmarks run on, 500 new 16 KB
 * files take 30 ms in one part of the disk and 290-330 ms in another (the
 * allocator searches for free inodes), while filling 500 empty files made
 * beforehand takes 7-10 ms; freeing 500 replaced files takes about 50 ms.
 *
 * So a server (a long-lived workspace) keeps a reserve of empty files, its
 * spares, in `.mcp/tmp/{pid}-{id}-spares/`, and the write path stages new
 * contents in them; it publishes a staged file over an existing one by
 * exchanging their names (renameat2 RENAME_EXCHANGE, dir-handle.ts), which
 * leaves the old file under the staged name; the reserve removes those old
 * files after the call has
 * answered, then makes spares for the next call (as many as the last call
 * staged, within RESERVE_MIN and RESERVE_MAX). All of it runs one file at a
 * time on the I/O threads, so the event loop never waits for it.
 *
 * Every name starts with the process id, so what a process that died left
 * behind is removed by the temp cleanup of the next one (state-dir.ts).
 *
 * Spares outlive the process that made them: a server that closes leaves
 * its unused spares as a pool, `.mcp/tmp/carry-{id}/`, and so does the step
 * a one-shot CLI write leaves to run after it has answered (handOff, below:
 * it removes what the write replaced and makes spares for the next one). The
 * next process takes a pool whole by renaming it to its own spares directory
 * (one rename: two processes cannot both win it), so a CLI write or a
 * server's first write finds spares too. A pool only ever holds empty files
 * made for it, never a file a write replaced (a replaced file may still be
 * open or mapped by a reader, which must keep seeing its old bytes). A pool
 * nobody took is removed by the temp cleanup after 24 hours.
 */
import { closeSync, fchmodSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { randomId128 } from "../core/hash";
import { writeNewFile } from "./atomic-write";
import { CREATE_OPEN, type DirHandle, TreeHandles } from "./dir-handle";

/** Spares kept once the workspace has written: at least this many, at most this many. */
export const RESERVE_MIN = 32;
export const RESERVE_MAX = 4096;
/** Permission bits of every spare. */
export const SPARE_PERM = 0o644;
/** Spares a server makes at start-up, before its first write, when no pool was left for it. */
export const RESERVE_START = 512;
/** How the name of a pool of spares left for the next process starts (`.mcp/tmp/carry-{id}`). */
export const POOL_PREFIX = "carry-";
/** Pools kept at most: a process leaving spares when this many are waiting removes its own instead. */
const POOLS_MAX = 2;

/**
 * What a one-shot workspace leaves to do once its command has answered
 * (TmpReserve.handOff): entries of `.mcp/tmp` to remove (staging directories
 * holding the files the writes replaced), its spares directory with the
 * spares it used to remove from it, and how many spares to leave as a pool
 * for the next process. Every name starts with the id of the process that
 * handed it off.
 */
export interface HandOff {
  entries: string[];
  pool: string | null;
  spent: string[];
  spares: number;
}

const EMPTY = new Uint8Array(0);

/** A spare file: a name in the reserve's directory, held open (`.mcp/tmp/{pid}-{id}-spares/`). */
export interface Spare {
  dir: DirHandle;
  name: string;
}

export class TmpReserve {
  /** Its directory's name in `.mcp/tmp`: named after the process (the temp cleanup of a later one removes it), unique within it. */
  private readonly dirName = `${process.pid}-${randomId128().slice(0, 8)}-spares`;
  /** The root, `.mcp/tmp` and the spares directory, opened on first use and held until close. */
  private handles: TreeHandles | null = null;
  private tmp: DirHandle | null = null;
  private dir: DirHandle | null = null;
  private readonly spares: string[] = [];
  private readonly removals: { from: "tmp" | "spares"; name: string }[] = [];
  private target = 0;
  private next = 0;
  private work: Promise<void> | null = null;
  private closed = false;
  /** Set when making a spare failed (disk full, permissions): no more are made. */
  private failed = false;
  /** Whether a pool left by an earlier process was looked for (once). */
  private claimTried = false;
  /** Spares taken by calls, by name: what a hand-off removes from the spares directory. */
  private readonly spent: string[] = [];
  private readonly background: boolean;
  private readonly defer: boolean;

  /**
   * `background` (a server): spares are made and removals done between calls
   * on the I/O threads. Without (a one-shot command): nothing runs in the
   * background; spares come only from a pool an earlier process left, and
   * what a call replaced is removed before it returns, or with `defer` (a
   * command that hands off, the CLI's apply) waits for close or handOff.
   */
  constructor(
    private readonly root: string,
    opts: { background?: boolean; defer?: boolean } = {},
  ) {
    this.background = opts.background ?? true;
    this.defer = !this.background && opts.defer === true;
  }

  /** Where the spares are made (absolute; for tests and messages: the reserve itself reaches it through held directories). */
  get sparesDir(): string {
    return join(this.root, ".mcp", "tmp", this.dirName);
  }

  /** An empty spare file, permission bits SPARE_PERM, or null when none is ready. */
  take(): Spare | null {
    if (!this.claimTried && !this.closed) this.claimPool();
    const name = this.spares.pop();
    if (name === undefined || !this.dir) return null;
    if (!this.background) this.spent.push(name);
    return { dir: this.dir, name };
  }

  /**
   * Takes a pool of spares an earlier process left (`carry-*`) as this
   * reserve's spares directory, by renaming it: once, before the first spare
   * is taken or made. Best effort: without a pool (or .mcp/tmp) there is
   * nothing to take.
   */
  private claimPool(): void {
    this.claimTried = true;
    if (this.dir) return;
    try {
      const tmp = this.tmpDir();
      for (const name of tmp.list()) {
        if (!name.startsWith(POOL_PREFIX)) continue;
        try {
          tmp.rename(name, tmp, this.dirName, true);
        } catch {
          continue; // another process took it first
        }
        this.dir = tmp.openDir(this.dirName);
        for (const spare of this.dir.list()) {
          const n = Number(spare);
          if (Number.isInteger(n) && n >= this.next) this.next = n + 1;
          // Only an empty regular file is a spare: anything else in a pool is removed, never written to.
          const st = this.dir.lstat(spare);
          if (st?.isFile() && st.size === 0) this.spares.push(spare);
          else rmSync(this.dir.removalPath(spare), { recursive: true, force: true });
        }
        return;
      }
    } catch {
      // .mcp/tmp cannot be opened: the call stages in new files
    }
  }

  /** Spares ready now. */
  get ready(): number {
    return this.spares.length;
  }

  /** After a call that staged `n` files: keep that many (within the bounds) ready for the next one. */
  want(n: number): void {
    this.target = Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, n, this.target));
    this.kick();
  }

  /** A spare taken by a call, to remove in the background (it holds what the call left under its name). */
  discardSpare(name: string): void {
    this.discard({ from: "spares", name });
  }

  /** An entry of `.mcp/tmp` (a call's staging directory, with everything in it) to remove in the background. */
  discardTemp(name: string): void {
    this.discard({ from: "tmp", name });
  }

  private discard(r: { from: "tmp" | "spares"; name: string }): void {
    if (this.closed || (!this.background && !this.defer)) this.removeNow(r);
    else if (!this.background) {
      // a spare taken is in `spent` already; a staging directory waits for close or the hand-off
      if (r.from === "tmp") this.removals.push(r);
    } else {
      this.removals.push(r);
      this.kick();
    }
  }

  /** Resolves once the background work has caught up. */
  async idle(): Promise<void> {
    while (this.work) await this.work;
  }

  /**
   * Removes what is still to be removed, now (best effort), and leaves the
   * spares not used as a pool for the next process (or removes them when
   * enough pools are waiting); later discards are removed on the spot.
   */
  close(): void {
    this.closed = true;
    for (const r of this.removals.splice(0)) this.removeNow(r);
    try {
      if (this.tmp && this.dir) {
        for (const name of this.spent.splice(0)) rmSync(this.dir.removalPath(name), { force: true });
        // (with spare-making or a removal under way, the directory is not left: it could hold a half-removed file)
        if (this.spares.length === 0 || this.work !== null || !leavePool(this.tmp, this.dirName)) rmSync(this.tmp.removalPath(this.dirName), { recursive: true, force: true });
      }
    } catch {
      // best effort: a later process's temp cleanup removes what is left
    }
    this.spares.length = 0;
    this.handles?.close();
    this.handles = this.tmp = this.dir = null;
  }

  /**
   * A one-shot workspace's remaining file-system work, handed to a step that
   * runs after the command has answered (finishHandOff); this reserve then
   * has nothing left to remove. Null when there is nothing to do.
   */
  handOff(): HandOff | null {
    if (!this.defer || this.closed) return null;
    const entries = this.removals.filter((r) => r.from === "tmp").map((r) => r.name);
    const h: HandOff = { entries, pool: this.dir ? this.dirName : null, spent: [...this.spent], spares: this.target };
    if (h.entries.length === 0 && h.pool === null && h.spares === 0) return null;
    this.removals.length = 0;
    this.spent.length = 0;
    this.spares.length = 0;
    this.handles?.close();
    this.handles = this.tmp = this.dir = null;
    this.closed = true;
    return h;
  }

  private pathOf(r: { from: "tmp" | "spares"; name: string }): string | null {
    const dir = r.from === "tmp" ? this.tmpDir() : this.dir;
    return dir ? dir.removalPath(r.name) : null;
  }

  /** `.mcp/tmp`, held open from first use. */
  private tmpDir(): DirHandle {
    this.handles ??= TreeHandles.open(this.root);
    this.tmp ??= this.handles.ensureDir(".mcp/tmp");
    return this.tmp;
  }

  private removeNow(r: { from: "tmp" | "spares"; name: string }): void {
    try {
      if (this.handles) {
        const p = this.pathOf(r);
        if (p !== null) rmSync(p, { recursive: true, force: true });
        return;
      }
      if (r.from === "spares") return; // the spares directory went with close()
      const handles = TreeHandles.open(this.root);
      try {
        const tmp = handles.dir(".mcp/tmp");
        if (tmp) rmSync(tmp.removalPath(r.name), { recursive: true, force: true });
      } finally {
        handles.close();
      }
    } catch {
      // best effort
    }
  }

  private kick(): void {
    if (this.work || this.closed || !this.background) return;
    this.work = this.run().finally(() => {
      this.work = null;
    });
  }

  /** `.mcp/tmp` and the spares directory, held open (a pool taken, or made, on first use). */
  private open(): DirHandle {
    if (!this.claimTried) this.claimPool();
    if (this.dir) return this.dir;
    const tmp = this.tmpDir();
    tmp.mkdir(this.dirName);
    this.dir = tmp.openDir(this.dirName);
    return this.dir;
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const gone = this.removals.shift();
      if (gone !== undefined) {
        let p: string | null = null;
        try {
          p = this.pathOf(gone);
        } catch {
          // .mcp/tmp cannot be opened (gone, or not a directory): nothing of ours to remove there
        }
        if (p !== null) await rm(p, { recursive: true, force: true }).catch(() => undefined);
        continue;
      }
      if (this.failed || this.spares.length >= this.target) return;
      const name = String(this.next++);
      try {
        await makeSpare(this.open(), name);
      } catch {
        this.failed = true;
        return;
      }
      if (this.closed) this.removeNow({ from: "spares", name });
      else this.spares.push(name);
    }
  }
}

/**
 * Renames a spares directory (an entry of `tmp`) to a pool for the next
 * process, unless POOLS_MAX pools are waiting already; whether it did.
 */
function leavePool(tmp: DirHandle, name: string): boolean {
  if (tmp.list().filter((n) => n.startsWith(POOL_PREFIX)).length >= POOLS_MAX) return false;
  try {
    tmp.rename(name, tmp, `${POOL_PREFIX}${randomId128().slice(0, 12)}`, true);
    return true;
  } catch {
    return false;
  }
}

/** Spares made at once by finishHandOff (it runs alone, after the command that handed off has answered). */
const HANDOFF_PARALLEL = 32;

/**
 * The step a one-shot command hands off (TmpReserve.handOff), run by another
 * process once the command has answered (the CLI starts it detached): the
 * entries are taken over (renamed to carry this process's id, so no temp
 * cleanup takes them for a dead process's leftovers meanwhile) and removed,
 * the spent spares removed from the spares directory, the rest topped up
 * with new spares to `spares`, and the directory left as a pool. Best
 * effort throughout: what is left is a dead process's, which the next temp
 * cleanup removes.
 */
export async function finishHandOff(root: string, h: HandOff): Promise<void> {
  let handles: TreeHandles;
  try {
    handles = TreeHandles.open(root);
  } catch {
    return; // the root is gone or not ours to open: nothing to tidy
  }
  try {
    const tmp = handles.dir(".mcp/tmp");
    if (!tmp) return;
    const mine = (name: string) => `${process.pid}-${name.slice(name.indexOf("-") + 1)}`;
    const takeOver = (name: string): string | null => {
      if (!/^[0-9]+-[A-Za-z0-9-]+$/.test(name)) return null; // only names a process made
      if (name === mine(name)) return name; // run by the process that handed off (tests, benchmarks)
      try {
        tmp.rename(name, tmp, mine(name), true);
        return mine(name);
      } catch {
        return null; // gone already (a temp cleanup removed it)
      }
    };
    const pool = h.pool === null ? null : takeOver(h.pool);
    await Promise.all(
      h.entries.map((e) => {
        const name = takeOver(e);
        return name === null ? undefined : rm(tmp.removalPath(name), { recursive: true, force: true }).catch(() => undefined);
      }),
    );
    const want = Math.min(RESERVE_MAX, h.spares);
    if (tmp.list().filter((n) => n.startsWith(POOL_PREFIX)).length >= POOLS_MAX || want === 0) {
      if (pool !== null) await rm(tmp.removalPath(pool), { recursive: true, force: true }).catch(() => undefined);
      return;
    }
    const dirName = pool ?? `${process.pid}-${randomId128().slice(0, 8)}-spares`;
    if (pool === null) tmp.mkdir(dirName);
    const dir = tmp.openDir(dirName);
    for (const name of h.spent) {
      if (/^[0-9]+$/.test(name)) await rm(dir.removalPath(name), { force: true }).catch(() => undefined);
    }
    const have = dir.list();
    let next = have.reduce((m, n) => Math.max(m, Number.isInteger(Number(n)) ? Number(n) + 1 : m), 0);
    const names: string[] = [];
    for (let n = have.length; n < want; n++) names.push(String(next++));
    for (let i = 0; i < names.length; i += HANDOFF_PARALLEL) {
      await Promise.all(names.slice(i, i + HANDOFF_PARALLEL).map((name) => makeSpare(dir, name)));
    }
    if (!leavePool(tmp, dirName)) rmSync(tmp.removalPath(dirName), { recursive: true, force: true });
  } catch {
    // best effort
  } finally {
    handles.close();
  }
}

/** One empty spare, permission bits SPARE_PERM (less the umask when made by path: a spare's bits are set as it is filled), through the held directory. */
async function makeSpare(dir: DirHandle, name: string): Promise<void> {
  const path = dir.asyncPath(name);
  if (path !== null) return writeNewFile(path, EMPTY, SPARE_PERM);
  const fd = dir.openFile(name, CREATE_OPEN, SPARE_PERM);
  try {
    fchmodSync(fd, SPARE_PERM);
  } finally {
    closeSync(fd);
  }
}
