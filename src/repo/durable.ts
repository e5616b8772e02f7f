/**
 * Durability for many files at once. The rule stays the one atomic write
 * (temp file, flush, rename, flush the directory); what changes is how many
 * flushes a change set pays for.
 *
 * A DurableBatch collects new temp files and makes all of them durable with
 * one flush: a single `syncfs(2)` of their file system where that is safe and
 * worthwhile, otherwise one fsync per file, issued in parallel (the file
 * system commits concurrent fsyncs together).
 *
 * syncfs is used only when all of this holds:
 * - Linux 5.8 or later: older kernels return 0 from syncfs even when the
 *   write-back of a file failed; since 5.8 it reports every write-back error
 *   on the file system since the descriptor it is called on was opened, so
 *   the batch opens that descriptor before it writes its first file;
 * - libc's syncfs can be reached through bun:ffi (also in the compiled binary);
 * - the batch has at least SYNCFS_MIN_FILES files: below that, per-file
 *   fsyncs cost about as much and never wait for anybody else's data;
 * - the dirty page cache of the whole machine (/proc/meminfo Dirty +
 *   Writeback) is not much larger than the batch itself: syncfs writes back
 *   everything dirty on the file system, so on a machine where other
 *   processes have hundreds of megabytes pending it would wait for them.
 * Everything else takes the per-file path, with the same guarantee.
 *
 * `WORKSNAP_SYNCFS=0` in the environment, or configureDurability, turns
 * syncfs off.
 */
import { closeSync, fchmodSync, fsync, openSync, readFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { release } from "node:os";
import { DISK_FULL_ERRNOS, diskFull, internal } from "../core/errors";
import { nativeModule, polled } from "./native";

/** Below this many files a batch fsyncs each one. */
export const SYNCFS_MIN_FILES = 8;
/** syncfs is skipped when other dirty data on the machine exceeds the batch's own bytes by more than this. */
export const SYNCFS_MAX_FOREIGN_DIRTY = 64 * 1024 * 1024;
/** Concurrent fsyncs of the per-file path. */
const FSYNC_PARALLELISM = 64;

export type FlushMethod = "syncfs" | "fsync";

interface Syncfs {
  call(fd: number): { ok: true } | { ok: false; errno: number };
}

let enabled = process.env.WORKSNAP_SYNCFS !== "0";
let syncfsImpl: Syncfs | null | undefined;

/** Turns the syncfs path on or off for this process (tests and benchmarks compare the two). */
export function configureDurability(opts: { syncfs: boolean }): void {
  enabled = opts.syncfs;
}

let available: boolean | undefined;

/**
 * Whether this process can use syncfs at all (platform, kernel, libc), regardless of configuration: through the
 * native module (no bun:ffi, whose dlopen compiles trampolines, about 4 ms of a one-shot command's start) or
 * else through bun:ffi (loadSyncfs).
 */
export function syncfsSupported(): boolean {
  if (available !== undefined) return available;
  if (process.platform !== "linux" || !kernelAtLeast(release(), 5, 8)) return (available = false);
  const m = nativeModule();
  return (available = (m?.syncfsStart !== undefined && m.syncfsResult !== undefined) || loadSyncfs() !== null);
}

function loadSyncfs(): Syncfs | null {
  if (syncfsImpl !== undefined) return syncfsImpl;
  syncfsImpl = null;
  if (process.platform !== "linux" || !kernelAtLeast(release(), 5, 8)) return null;
  for (const name of ["libc.so.6", "libc.so"]) {
    try {
      // Loaded on first use only: bun:ffi compiles its trampolines when dlopen is called.
      const { dlopen, FFIType, read } = require("bun:ffi") as typeof import("bun:ffi");
      const lib = dlopen(name, {
        syncfs: { args: [FFIType.i32], returns: FFIType.i32 },
        __errno_location: { args: [], returns: FFIType.ptr },
      });
      syncfsImpl = {
        call(fd) {
          if (lib.symbols.syncfs(fd) === 0) return { ok: true };
          const at = lib.symbols.__errno_location();
          return { ok: false, errno: at ? read.i32(at, 0) : 0 };
        },
      };
      return syncfsImpl;
    } catch {
      // not this name, or no FFI here: try the next, then fall back to fsync
    }
  }
  return null;
}

export function kernelAtLeast(version: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > major || (maj === major && min >= minor);
}

/** Dirty + Writeback of the whole machine in bytes, or null when unknown. */
function machineDirtyBytes(): number | null {
  try {
    const text = readFileSync("/proc/meminfo", "latin1");
    let total = 0;
    for (const key of ["Dirty", "Writeback"]) {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text);
      if (!m) return null;
      total += Number(m[1]) * 1024;
    }
    return total;
  } catch {
    return null;
  }
}

/**
 * Chooses how to flush `files` new files holding `bytes` bytes. Exported for
 * tests; callers use DurableBatch.
 */
export function chooseFlush(files: number, bytes: number, dirtyBytes: number | null = machineDirtyBytes()): FlushMethod {
  if (!enabled || files < SYNCFS_MIN_FILES || !syncfsSupported()) return "fsync";
  if (dirtyBytes === null || dirtyBytes - bytes > SYNCFS_MAX_FOREIGN_DIRTY) return "fsync";
  return "syncfs";
}

/**
 * New files made durable together. Open it before writing the first file
 * (syncfs reports write-back errors since its descriptor was opened), write
 * or add the files, flush once, then rename them into place and flush their
 * directories (syncDirs).
 */
export class DurableBatch {
  private readonly files: string[] = [];
  private bytes = 0;
  private anchor: number | null = null;
  /** How the last flush was done (tests read it). */
  lastMethod: FlushMethod | null = null;

  /** `dir` is a directory on the file system the files are written to (`.mcp/tmp`). */
  constructor(dir: string) {
    if (enabled && syncfsSupported()) this.anchor = openSync(dir, "r");
  }

  get size(): number {
    return this.files.length;
  }

  /**
   * Writes a new file (it must not exist) with exactly `perm` as its
   * permission bits, not yet durable.
   */
  writeFile(path: string, bytes: Uint8Array, perm: number): void {
    const fd = openSync(path, "wx", 0o600);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      // open()'s mode passes through the umask; the recorded mode must be exact.
      fchmodSync(fd, perm);
    } finally {
      closeSync(fd);
    }
    this.add(path, bytes.length);
  }

  /** A file written by the caller that this batch must make durable. */
  add(path: string, bytes: number): void {
    this.files.push(path);
    this.bytes += bytes;
  }

  /** Every file written or added so far is durable when this returns. */
  async flush(): Promise<void> {
    if (this.files.length === 0) return;
    const method = this.anchor === null ? "fsync" : chooseFlush(this.files.length, this.bytes);
    this.lastMethod = method;
    if (method === "syncfs") await flushFileSystem(this.anchor!);
    else await fsyncAll(this.files);
    this.files.length = 0;
    this.bytes = 0;
  }

  /**
   * Makes renames into these directories durable: one syncfs when there are
   * many (same rule as files, with nothing of ours dirty but metadata),
   * otherwise one fsync per directory, in parallel. Directories that refuse
   * fsync (some file systems) are skipped: the renames are atomic regardless.
   */
  async syncDirs(dirs: Iterable<string>): Promise<void> {
    const list = [...new Set(dirs)];
    if (list.length === 0) return;
    if (this.anchor !== null && chooseFlush(list.length, 0) === "syncfs") return flushFileSystem(this.anchor);
    await syncDirsEach(list);
  }

  /** syncDirs for directories held open (dir-handle.ts), by their descriptors. */
  async syncDirFds(fds: number[]): Promise<void> {
    if (fds.length === 0) return;
    if (this.anchor !== null && chooseFlush(fds.length, 0) === "syncfs") return flushFileSystem(this.anchor);
    await Promise.all(fds.map((fd) => new Promise<void>((resolve) => fsync(fd, () => resolve())))); // a refusal is not an error (see syncDirs)
  }

  close(): void {
    if (this.anchor !== null) closeSync(this.anchor);
    this.anchor = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * syncfs of the file system `fd` is on. With the native module it runs on a
 * thread of its own while this thread goes on (polled every millisecond): a
 * change set's flush takes 100 ms and more, which the history's diffs of the
 * same call and other sessions' requests use. Without it, through bun:ffi on
 * this thread.
 */
async function flushFileSystem(fd: number): Promise<void> {
  const m = nativeModule();
  if (!m?.syncfsStart || !m.syncfsResult) return syncfsOrThrow(fd);
  const flush = m.syncfsStart(fd);
  throwIfFailed(await polled(() => m.syncfsResult!(flush)));
}

function syncfsOrThrow(fd: number): void {
  const r = loadSyncfs()!.call(fd);
  if (!r.ok) throwIfFailed(r.errno);
}

function throwIfFailed(errno: number): void {
  if (errno === 0) return;
  const code = errno === 5 ? "EIO" : errno === 28 ? "ENOSPC" : errno === 122 ? "EDQUOT" : `errno ${errno}`;
  if (DISK_FULL_ERRNOS.includes(code)) throw diskFull("data written before it could not all be stored", code);
  throw internal(`syncfs failed (${code}): data written before it may not be on disk`, { errno: code });
}

/**
 * One syncfs of the file system holding `dir`, whatever the batch rules say:
 * false when syncfs is unavailable here. For checking that the mechanism
 * works where it runs (the compiled binary included).
 */
export function syncFileSystem(dir: string): boolean {
  if (loadSyncfs() === null) return false;
  const fd = openSync(dir, "r");
  try {
    syncfsOrThrow(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** fsync of each file, FSYNC_PARALLELISM at a time. */
export async function fsyncAll(paths: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) await fsyncPath(paths[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(FSYNC_PARALLELISM, paths.length) }, worker));
}

/** fsync of each directory in parallel; a directory that cannot be fsynced is skipped. */
export async function syncDirsEach(dirs: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < dirs.length) {
      try {
        await fsyncPath(dirs[next++]!);
      } catch {
        // Some file systems refuse fsync on a directory; the renames are atomic regardless.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FSYNC_PARALLELISM, dirs.length) }, worker));
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
