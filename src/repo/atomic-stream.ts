import { chmodSync, closeSync, copyFileSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomId128 } from "../core/hash";
import { fsyncDir } from "./atomic-write";
import { ensureStateDir, tempPath } from "./state-dir";

/**
 * writeFileAtomic for output too large to hold in memory (export bundles):
 * chunks go to a temp file in `.mcp/tmp/`, and only `commit()` makes the
 * target appear, whole (fsync, rename, fsync the directory). `abort()` leaves
 * nothing behind. A target on another file system is staged beside it.
 */
export class AtomicFileWriter {
  private fd: number | null;
  private readonly tmp: string;
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
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
    this.written += bytes.length;
  }

  commit(): void {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    try {
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
