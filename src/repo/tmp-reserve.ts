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
 * exchanging their names (exchange.ts), which leaves the old file under the
 * staged name; the reserve removes those old files after the call has
 * answered, then makes spares for the next call (as many as the last call
 * staged, within RESERVE_MIN and RESERVE_MAX). All of it runs one file at a
 * time on the I/O threads, so the event loop never waits for it.
 *
 * Every name starts with the process id, so what a process that died left
 * behind is removed by the temp cleanup of the next one (state-dir.ts).
 */
import { mkdirSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { randomId128 } from "../core/hash";
import { writeNewFile } from "./atomic-write";

/** Spares kept once the workspace has written: at least this many, at most this many. */
export const RESERVE_MIN = 32;
export const RESERVE_MAX = 4096;
/** Permission bits of every spare. */
export const SPARE_PERM = 0o644;

const EMPTY = new Uint8Array(0);

export class TmpReserve {
  private readonly dir: string;
  private readonly spares: string[] = [];
  private readonly removals: string[] = [];
  private target = 0;
  private next = 0;
  private work: Promise<void> | null = null;
  private closed = false;
  /** Set when making a spare failed (disk full, permissions): no more are made. */
  private failed = false;

  constructor(tmpDir: string) {
    // Named after the process (the temp cleanup of a later one removes it), unique within it.
    this.dir = join(tmpDir, `${process.pid}-${randomId128().slice(0, 8)}-spares`);
  }

  /** Where the spares are made. */
  get sparesDir(): string {
    return this.dir;
  }

  /** An empty spare file, permission bits SPARE_PERM, or null when none is ready. */
  take(): string | null {
    return this.spares.pop() ?? null;
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

  /** A file or directory (with everything in it) to remove in the background. */
  discard(path: string): void {
    if (this.closed) rmSync(path, { recursive: true, force: true });
    else {
      this.removals.push(path);
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
    for (const p of this.removals.splice(0)) rmSync(p, { recursive: true, force: true });
    this.spares.length = 0;
    rmSync(this.dir, { recursive: true, force: true });
  }

  private kick(): void {
    if (this.work || this.closed) return;
    this.work = this.run().finally(() => {
      this.work = null;
    });
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const gone = this.removals.shift();
      if (gone !== undefined) {
        await rm(gone, { recursive: true, force: true }).catch(() => undefined);
        continue;
      }
      if (this.failed || this.spares.length >= this.target) return;
      const path = join(this.dir, String(this.next++));
      try {
        if (this.next === 1) mkdirSync(this.dir, { recursive: true });
        await writeNewFile(path, EMPTY, SPARE_PERM);
      } catch {
        this.failed = true;
        return;
      }
      if (this.closed) rmSync(path, { force: true });
      else this.spares.push(path);
    }
  }
}
