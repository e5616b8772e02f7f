import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { chmod, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { randomId128 } from "../core/hash";
import { fsyncAll } from "./durable";
import { tempPath } from "./state-dir";
import { processUmask } from "./umask";

/**
 * The one atomic write: temp file, write, fsync, rename over the target, fsync
 * the directory. Readers see the old bytes or the new bytes, never a torn file.
 * The temp file lives in `.mcp/tmp/` (ignored by git, cleaned on start); when
 * the target sits on another file system (EXDEV) it is staged beside the target.
 */
export function writeFileAtomic(stateDir: string, target: string, bytes: Uint8Array, mode = 0o644): void {
  const tmp = tempPath(stateDir, basename(target));
  writeAndSync(tmp, bytes, mode);
  try {
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    const beside = join(dirname(target), `.${basename(target)}.worksnap-${process.pid}-${randomId128().slice(0, 8)}`);
    writeAndSync(beside, bytes, mode);
    try {
      renameSync(beside, target);
    } catch (err2) {
      rmSync(beside, { force: true });
      throw err2;
    }
  }
  fsyncDir(dirname(target));
}

/**
 * Several files written as writeFileAtomic writes one, flushed together: each
 * to its temp file, every temp file fsynced at once by the I/O threads (a
 * file system that batches journal commits, as ext4 does, makes them one),
 * then each renamed over its target in the order given, and each target
 * directory fsynced once. A later file is in place only with the earlier
 * ones, after a crash too: the order marks completion (a snapshot's metadata
 * after its manifest). A failure leaves no temp file; a target renamed before
 * it stays.
 */
export async function writeFilesAtomic(stateDir: string, files: readonly { target: string; bytes: Uint8Array | StagedFile }[], mode = 0o644): Promise<void> {
  const temps: string[] = [];
  const written: string[] = [];
  const flushes: Promise<void>[] = [];
  try {
    for (const f of files) {
      if (f.bytes instanceof StagedFile) {
        temps.push(f.bytes.path);
        flushes.push(f.bytes.flushed);
        continue;
      }
      const tmp = tempPath(stateDir, basename(f.target));
      writeAndSync(tmp, f.bytes, mode, false);
      temps.push(tmp);
      written.push(tmp);
    }
    flushes.push(fsyncAll(written));
    const failed = (await Promise.allSettled(flushes)).find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  } catch (err) {
    for (const t of temps) rmSync(t, { force: true });
    throw err;
  }
  const dirs = new Set<string>();
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as { target: string };
    try {
      renameSync(temps[i] as string, f.target);
    } catch (err) {
      // the targets sit on another file system than .mcp/tmp: the rest are written one by one, beside them
      const rest = (err as NodeJS.ErrnoException).code === "EXDEV" ? files.slice(i).map((f) => ({ target: f.target, bytes: f.bytes instanceof StagedFile ? f.bytes.content() : f.bytes })) : [];
      for (const t of temps.slice(i)) rmSync(t, { force: true });
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      for (const d of dirs) fsyncDir(d);
      for (const f of rest) writeFileAtomic(stateDir, f.target, f.bytes, mode);
      return;
    }
    dirs.add(dirname(f.target));
  }
  for (const d of dirs) fsyncDir(d);
}

/**
 * A file written to a temp file of `.mcp/tmp` before its name is known (a snapshot's manifest, while it is
 * encoded and its id hashed): writeFilesAtomic renames it into place; `discard` removes it when it is not used.
 * A failed write leaves nothing behind.
 */
export class StagedFile {
  /** A temp file of `.mcp/tmp` being written (AtomicFileWriter.stage), durable once `flushed` resolves; a failure removes it. */
  constructor(
    readonly path: string,
    readonly flushed: Promise<void>,
  ) {
    this.flushed.catch(() => {}); // reported to writeFilesAtomic, or dropped with the file by discard
  }

  /** The staged bytes, read back: for a target on another file system. */
  content(): Uint8Array {
    return readFileSync(this.path);
  }

  async discard(): Promise<void> {
    await this.flushed.catch(() => {});
    rmSync(this.path, { force: true });
  }
}

function writeAndSync(path: string, bytes: Uint8Array, mode: number, flush = true): void {
  const fd = openSync(path, "wx", mode);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    if (flush) fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw err;
  }
  closeSync(fd);
  // openSync's mode is filtered by the umask; the recorded mode must be exact.
  chmodSync(path, mode);
}

/**
 * A file replaced whole but not flushed: temp file in `.mcp/tmp/`, rename over
 * the target. Readers see the old or the new bytes, never a torn file; after
 * a crash the file may be the old one or missing, so only state that is
 * checked when read, or corrected by something flushed, is written this way.
 * A write that fails (a full disk half way) leaves no temp file behind.
 */
export function writeFileUnflushed(stateDir: string, target: string, bytes: Uint8Array | string, mode = 0o644): void {
  const tmp = tempPath(stateDir, basename(target));
  try {
    writeFileSync(tmp, bytes, { mode });
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** writeFileUnflushed on the I/O threads (a capture's loose blobs, written while it reads the next files). */
export async function writeFileUnflushedAsync(stateDir: string, target: string, bytes: Uint8Array, mode = 0o644): Promise<void> {
  const tmp = tempPath(stateDir, basename(target));
  try {
    await writeFile(tmp, bytes, { mode });
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A new file (it must not exist) with exactly `perm` as its permission bits,
 * written by the I/O threads, not flushed (the caller's batch is: durable.ts).
 * If its mode cannot be set, nothing of it is left.
 */
export async function writeNewFile(path: string, bytes: Uint8Array, perm: number): Promise<void> {
  await writeFile(path, bytes, { flag: "wx", mode: perm });
  // open()'s mode passes through the umask: when the umask would clear bits of `perm`, they are set afterwards.
  if ((perm & processUmask()) === 0) return;
  try {
    await chmod(path, perm);
  } catch (err) {
    rmSync(path, { force: true });
    throw err;
  }
}
