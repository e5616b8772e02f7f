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

  constructor(private readonly root: string) {}

  /** Where the spares are made (absolute; for tests and messages: the reserve itself reaches it through held directories). */
  get sparesDir(): string {
    return join(this.root, ".mcp", "tmp", this.dirName);
  }

  /** An empty spare file, permission bits SPARE_PERM, or null when none is ready. */
  take(): Spare | null {
    const name = this.spares.pop();
    return name === undefined || !this.dir ? null : { dir: this.dir, name };
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
    if (this.closed) this.removeNow(r);
    else {
      this.removals.push(r);
      this.kick();
    }
  }

  /** Resolves once the background work has caught up. */
  async idle(): Promise<void> {
    while (this.work) await this.work;
  }

  /** Removes the spares and what is still to be removed, now (best effort); later discards are removed on the spot. */
  close(): void {
    this.closed = true;
    for (const r of this.removals.splice(0)) this.removeNow(r);
    this.spares.length = 0;
    try {
      if (this.tmp) rmSync(this.tmp.removalPath(this.dirName), { recursive: true, force: true });
    } catch {
      // best effort: a later process's temp cleanup removes what is left
    }
    this.handles?.close();
    this.handles = this.tmp = this.dir = null;
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
    if (this.work || this.closed) return;
    this.work = this.run().finally(() => {
      this.work = null;
    });
  }

  /** `.mcp/tmp` and the spares directory, held open (made on first use). */
  private open(): DirHandle {
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
        const dir = this.open();
        const path = dir.asyncPath(name);
        if (path !== null) await writeNewFile(path, EMPTY, SPARE_PERM);
        else {
          const fd = dir.openFile(name, CREATE_OPEN, SPARE_PERM);
          try {
            fchmodSync(fd, SPARE_PERM);
          } finally {
            closeSync(fd);
          }
        }
      } catch {
        this.failed = true;
        return;
      }
      if (this.closed) this.removeNow({ from: "spares", name });
      else this.spares.push(name);
    }
  }
}
