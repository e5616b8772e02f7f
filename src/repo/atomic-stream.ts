import { chmodSync, closeSync, constants, copyFileSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomId128 } from "../core/hash";
import { writeFully } from "../core/write-fully";
import { StagedFile, fsyncDir } from "./atomic-write";
import { fsyncAll } from "./durable";
import { errnoError, nativeModule, polled, type NativeJob, type NativeModule, type NativeSink } from "./native";
import { ensureStateDir, tempPath } from "./state-dir";

/** Bytes gathered before a write. */
const WRITE_BUFFER = 1 << 20;
/** Writes at least this large go out as they are, not through the gathering buffer. */
const DIRECT_MIN = 64 * 1024;
/** Scratch memory for small pieces made in place (scratch()). */
const SCRATCH_BYTES = 256 * 1024;
/** Bytes handed to the writer thread and not yet written, above which the producer waits (behind()). */
const QUEUE_MAX = 24 * 1024 * 1024;
const QUEUE_RESUME = 8 * 1024 * 1024;

/**
 * writeFileAtomic for output too large to hold in memory (export bundles):
 * chunks go to a temp file in `.mcp/tmp/`, and only `commit()` makes the
 * target appear, whole (fsync, rename, fsync the directory). `abort()` leaves
 * nothing behind. A target on another file system is staged beside it.
 * Small writes (a bundle is mostly tar headers, paddings and small files) are
 * gathered and written together. Everything written is
 * hashed (SHA-256, the bundle's digest). With the native module, the writes
 * and the hashing happen on a thread of their own (src/native/sink.h), so the
 * producer builds the next bytes meanwhile; it waits on `behind()` /
 * `caughtUp()` so the queue stays bounded; a second thread syncs the file
 * behind the writes, so `commit()`'s fsync has little left to wait for.
 * Without it, both happen here.
 *
 * With `stream`, the target is a pipe or a character device (`/dev/stdout`,
 * `/dev/null`, a FIFO) and the bytes are written into it as they come, as
 * `tar -f` does: no temp file, no flush, no rename (which would put a regular
 * file in place of the device), and nothing removed on abort.
 */
export class AtomicFileWriter {
  private fd: number | null;
  private readonly tmp: string;
  /** without the writer thread: pieces gathered by copy */
  private readonly pending = Buffer.allocUnsafe(WRITE_BUFFER);
  private used = 0;
  written = 0;
  private readonly m: NativeModule | null;
  private sink: NativeSink | null = null;
  private queued = 0;
  /** with the writer thread: pieces gathered by reference, not yet handed over */
  private pieces: Uint8Array[] = [];
  private pieceBytes = 0;
  /** the gathered pieces handed over for good (write's `release`) */
  private released: Uint8Array[] = [];
  /** scratch(): regions handed out since the gathered pieces were last copied */
  private scratchBuffer: Uint8Array | null = null;
  private scratchUsed = 0;
  private readonly hasher: Bun.CryptoHasher | null = null;
  private readonly stream: boolean;
  /** the descriptor is the caller's: never closed here */
  private borrowed = false;

  constructor(
    stateDir: string,
    private readonly target: string,
    private readonly mode = 0o644,
    opts: {
      /** hashed before the bytes written (not written): the digest is of both */
      hashPrefix?: Uint8Array;
      /** with the writer thread, writeback is started every this many bytes (default 8 MiB) */
      writebackStep?: number;
      /** with the writer thread, each writeback step is synced: the final fsync has only the last one to wait for */
      durableSteps?: boolean;
      /** the target is a pipe or a character device, written into as a stream (opening a FIFO waits for its reader) */
      stream?: boolean;
      /** with `stream`: the target is this descriptor of the process (its stdout), written into and left open */
      fd?: number;
    } = {},
  ) {
    this.stream = opts.stream === true;
    if (this.stream) {
      this.tmp = target;
      this.borrowed = opts.fd !== undefined;
      this.fd = opts.fd ?? openSync(target, constants.O_WRONLY | constants.O_NOCTTY);
    } else {
      ensureStateDir(stateDir);
      this.tmp = tempPath(stateDir, basename(target));
      this.fd = openSync(this.tmp, "wx", 0o600);
    }
    this.m = nativeModule();
    try {
      if (this.m) this.sink = this.m.sinkOpen(this.fd, opts.hashPrefix, opts.writebackStep, opts.durableSteps);
      else this.hasher = new Bun.CryptoHasher("sha256");
    } catch (err) {
      if (!this.borrowed) closeSync(this.fd);
      if (!this.stream) rmSync(this.tmp, { force: true });
      throw err;
    }
    if (opts.hashPrefix) this.hasher?.update(opts.hashPrefix);
  }

  /**
   * Appends bytes. With the writer thread, small pieces are kept by reference
   * until a megabyte has gathered and then handed over at once: copied, or,
   * for a piece of an export's block of reads (slot_block.h), borrowed and
   * written from where it is. The caller must not change them after handing
   * them over. `release`
   * hands them over for good: once copied, bytes spanning a whole
   * ArrayBuffer (a file read for this write alone) have it detached and
   * their memory goes back at once rather than when collected (a gigabyte
   * export otherwise waits on the collector to reuse what it read); they
   * read as empty afterwards.
   */
  write(bytes: Uint8Array, release = false): void {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    this.written += bytes.length;
    if (this.sink) {
      if (bytes.length >= DIRECT_MIN) {
        this.flush();
        this.out(bytes, release);
        return;
      }
      this.pieces.push(bytes);
      if (release) this.released.push(bytes);
      this.pieceBytes += bytes.length;
      if (this.pieceBytes >= WRITE_BUFFER) this.flush();
      return;
    }
    if (this.used + bytes.length <= this.pending.length) {
      this.pending.set(bytes, this.used);
      this.used += bytes.length;
      return;
    }
    this.flush();
    if (bytes.length < DIRECT_MIN) {
      this.pending.set(bytes, 0);
      this.used = bytes.length;
    } else this.out(bytes);
  }

  /**
   * `n` bytes (at most 256 KiB) of the writer's own memory for the caller to fill and then write(), before it
   * asks again: a small piece made there (a tar header) allocates nothing. The memory is used again once the
   * writer has copied what was written from it.
   */
  scratch(n: number): Uint8Array {
    if (n > SCRATCH_BYTES) throw new RangeError(`AtomicFileWriter.scratch: ${n} bytes asked, at most ${SCRATCH_BYTES}`);
    this.scratchBuffer ??= new Uint8Array(SCRATCH_BYTES); // not a Buffer: its slice() would be a view, not a copy
    // without the writer thread, write() copies at once; with it, the gathered pieces are copied at flush()
    if (!this.sink) this.scratchUsed = 0;
    else if (this.scratchUsed + n > SCRATCH_BYTES) this.flush();
    const at = this.scratchUsed;
    this.scratchUsed += n;
    return this.scratchBuffer.subarray(at, at + n);
  }

  /**
   * Hands over memory the caller is done with once what was written from it has been copied (an export's window
   * of reads, whose views went out through write()): with the writer thread it goes back at the next copy of the
   * gathered pieces, the whole ArrayBuffer detached (it reads as empty afterwards); without it, to the collector.
   */
  giveBack(whole: Uint8Array): void {
    if (this.sink) this.released.push(whole);
  }

  /**
   * Queues the run of an export's verified reads that starts at item `from` of a scan job (items up to `to`
   * finished), headers and paddings included, without a piece passing through here (sinkPutScanned): the
   * pieces gathered so far are handed over first, so the order holds. The entries put (0 at an item that must be
   * written the ordinary way, and always 0 without the writer thread).
   */
  putScanned(job: NativeJob, from: number, to: number, digests: Uint8Array, modes: Uint8Array, prefix: Uint8Array): number {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    if (!this.sink || !this.m) return 0;
    this.flush();
    const [count, bytes, queued] = this.m.sinkPutScanned(this.sink, job, from, to, digests, modes, prefix);
    this.written += bytes;
    this.queued = queued;
    return count;
  }

  /** True when the writer thread has fallen far enough behind for the producer to wait (caughtUp). */
  behind(): boolean {
    return this.sink !== null && this.queued > QUEUE_MAX;
  }

  /** Resolves once the writer thread's queue is down to a few chunks. */
  async caughtUp(): Promise<void> {
    if (!this.sink || !this.m) return;
    while ((this.queued = this.m.sinkQueued(this.sink)) > QUEUE_RESUME) await Bun.sleep(1);
  }

  private flush(): void {
    if ((this.pieces.length > 0 || this.released.length > 0) && this.sink && this.m) {
      this.queued = this.m.sinkWritev(this.sink, this.pieces, this.pieceBytes, this.released);
      this.pieces = [];
      this.pieceBytes = 0;
      this.released = [];
      this.scratchUsed = 0;
    }
    if (this.used === 0 || this.fd === null) return;
    this.out(this.pending.subarray(0, this.used));
    this.used = 0;
  }

  /** To the writer thread (which copies), or written and hashed here. */
  private out(bytes: Uint8Array, release = false): void {
    if (this.sink && this.m) {
      this.queued = this.m.sinkWrite(this.sink, bytes, release);
      return;
    }
    this.hasher?.update(bytes);
    writeFully(this.fd as number, bytes);
  }

  /** Everything written, then the target made to appear; the SHA-256 of the bytes, in hex. */
  async commit(): Promise<string> {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    let sha256: string;
    try {
      this.flush();
      sha256 = await this.drained();
      if (!this.stream) fsyncSync(this.fd);
    } finally {
      this.freeSink();
      if (!this.borrowed) closeSync(this.fd);
      this.fd = null;
    }
    if (this.stream) return sha256;
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
    return sha256;
  }

  /**
   * Everything written, staged for writeFilesAtomic rather than made to appear: `staged.flushed` resolves once
   * the bytes are on the disk (the fsync runs on the I/O threads), and `sha256` is the digest, in hex. A failure
   * of either removes the file.
   */
  stage(): { staged: StagedFile; sha256: Promise<string> } {
    if (this.fd === null) throw new Error("AtomicFileWriter used after commit/abort");
    if (this.stream) throw new Error("AtomicFileWriter: a stream is not staged");
    const fd = this.fd;
    let sha256: Promise<string>;
    try {
      this.flush();
      this.fd = null;
      sha256 = this.drained().finally(() => {
        this.freeSink();
        closeSync(fd);
      });
    } catch (err) {
      this.fd = null;
      this.freeSink();
      closeSync(fd);
      rmSync(this.tmp, { force: true });
      throw err;
    }
    const flushed = sha256
      .then(() => {
        chmodSync(this.tmp, this.mode);
        return fsyncAll([this.tmp]);
      })
      .catch((err) => {
        rmSync(this.tmp, { force: true });
        throw err;
      });
    sha256.catch(() => {}); // its failure is the staged file's too, reported to whoever waits for either
    return { staged: new StagedFile(this.tmp, flushed), sha256 };
  }

  /** The writer thread's end: every byte written (or its error thrown), and the digest. */
  private async drained(): Promise<string> {
    if (!this.sink || !this.m) return (this.hasher as Bun.CryptoHasher).digest("hex");
    const { m, sink } = this;
    m.sinkClose(sink);
    const [errno, bytes, digest] = await polled(() => m.sinkResult(sink));
    if (errno !== 0) throw errnoError(errno, basename(this.target));
    if (bytes !== this.written) throw new Error(`the writer thread wrote ${bytes} of ${this.written} bytes`);
    return digest.toString("hex");
  }

  private freeSink(): void {
    if (this.sink && this.m) this.m.sinkFree(this.sink);
    this.sink = null;
  }

  abort(): void {
    this.freeSink(); // the thread is done with the descriptor before it is closed
    if (this.fd !== null) {
      if (!this.borrowed) closeSync(this.fd);
      this.fd = null;
    }
    if (!this.stream) rmSync(this.tmp, { force: true });
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
