import { chmodSync, closeSync, copyFileSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomId128 } from "../core/hash";
import { fsyncDir } from "./atomic-write";
import { ensureStateDir, tempPath } from "./state-dir";

/** Bytes gathered before a write. */
const WRITE_BUFFER = 1 << 20;

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * writeFileAtomic for output too large to hold in memory (export bundles):
 * chunks go to a temp file in `.mcp/tmp/`, and only `commit()` makes the
 * target appear, whole (fsync, rename, fsync the directory). `abort()` leaves
 * nothing behind. A target on another file system is staged beside it.
 * Small writes (a bundle is mostly tar headers, paddings and small files) are
 * gathered into one buffer and written together.
 */
export class AtomicFileWriter {
  private fd: number | null;
  private readonly tmp: string;
  private readonly pending = Buffer.allocUnsafe(WRITE_BUFFER);
  private used = 0;
  written = 0;

  constructor(
    stateDir: string,
    private readonly target: string,
    private readonly mode = 0o644,
  ) {
    ensureStateDir(stateDir);
    this.tmp = tempPath(stateDir, basename(target));
    this.fd = openSync(this.tmp, "wx", 0o600);
  }

  write(bytes: Uint8Array): void {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    this.written += bytes.length;
    if (this.used + bytes.length <= this.pending.length) {
      this.pending.set(bytes, this.used);
      this.used += bytes.length;
      return;
    }
    this.flush();
    if (bytes.length < this.pending.length) {
      this.pending.set(bytes, 0);
      this.used = bytes.length;
    } else writeAll(this.fd, bytes);
  }

  private flush(): void {
    if (this.used === 0 || this.fd === null) return;
    writeAll(this.fd, this.pending.subarray(0, this.used));
    this.used = 0;
  }

  commit(): void {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    try {
      this.flush();
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = null;
    }
    try {
      chmodSync(this.tmp, this.mode);
      renameSync(this.tmp, this.target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") {
        rmSync(this.tmp, { force: true });
        throw err;
      }
      this.publishAcrossDevices();
    }
    fsyncDir(dirname(this.target));
  }

  abort(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    rmSync(this.tmp, { force: true });
  }

  private publishAcrossDevices(): void {
    const beside = join(dirname(this.target), `.${basename(this.target)}.worksnap-${process.pid}-${randomId128().slice(0, 8)}`);
    try {
      copyFileSync(this.tmp, beside);
      const fd = openSync(beside, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      chmodSync(beside, this.mode);
      renameSync(beside, this.target);
    } catch (err) {
      rmSync(beside, { force: true });
      throw err;
    } finally {
      rmSync(this.tmp, { force: true });
    }
  }
}
