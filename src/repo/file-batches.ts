/**
 * Many small new files, written on the native module's threads in batches:
 * what an import stages its blobs through. Creating a file is most of an
 * import's time (the inode, the directory entry), the JavaScript thread has
 * the bundle to read and hash meanwhile, and two threads creating files in
 * different directories take about half the time one does (measured: 100,000
 * files of 10 KB in 256 directories, 3.5 s against 6.6 s, and 7.8 s against
 * 19.6 s an hour later). tar, the anchor, creates them one by one.
 *
 * A file is reserved (room for its bytes in the current batch), filled by the
 * caller (put), then committed; a full batch is handed to the module and
 * written while the next one fills. Each batch fills a block of the module's
 * (batchBlock), which the job borrows rather than copies (a gigabyte's memcpy
 * an import, into memory faulted in afresh): a block is filled again only
 * once the job that wrote it is done. At most two batches are in flight:
 * committing waits for the older one, and reports its first failure. Every file is
 * created beneath the directory given at the start without following a
 * symlink, and never over an existing entry (O_EXCL), as DirHandle.openFile
 * with CREATE_OPEN does.
 */
import type { DirHandle } from "./dir-handle";
import { sysError } from "./dir-handle";
import { type NativeJob, type NativeModule, nativeModule, polled } from "./native";

/** Bytes a batch holds; a larger file is not batched (FileBatches.fits). */
const BATCH_BYTES = 4 << 20;
/** Files a batch holds at most. */
const BATCH_FILES = 1024;
/** Batches written at once; committing waits beyond it. */
const IN_FLIGHT = 2;
/** The step of an item that failed, as create_job.h numbers them. */
const STEPS = ["", "open", "write", "close"] as const;

interface Batch {
  job: NativeJob;
  paths: string[];
  /** the block the job writes from: filled again once the job is done */
  block: Buffer;
}

export class FileBatches {
  /** the block being filled */
  private buf: Buffer;
  /** blocks whose batches are written, to fill next (at most IN_FLIGHT + 2 blocks exist) */
  private readonly spare: Buffer[] = [];
  private used = 0;
  private paths: string[] = [];
  private ends: number[] = [];
  private reserved: { path: string; start: number; end: number } | null = null;
  private readonly inFlight: Batch[] = [];
  private failure: Error | null = null;

  private constructor(
    private readonly m: NativeModule,
    private readonly dir: DirHandle,
    private readonly mode: number,
  ) {
    this.buf = m.batchBlock(BATCH_BYTES);
  }

  /** Batches of new files beneath `dir`, each with permission bits `mode`; null without the native module. */
  static open(dir: DirHandle, mode: number): FileBatches | null {
    const m = nativeModule();
    return m ? new FileBatches(m, dir, mode) : null;
  }

  /** Whether a file of `size` bytes is batched (larger ones are written by the caller). */
  static fits(size: number): boolean {
    return size <= BATCH_BYTES / 4;
  }

  /**
   * Room for the file `path` (relative to the directory: its directories must exist when the batch is written)
   * of exactly `size` bytes: fill it with put(), then commit() or drop() before the next reserve.
   */
  reserve(path: string, size: number): void {
    if (this.reserved) throw new Error("FileBatches: a reserved file was neither committed nor dropped");
    if (!FileBatches.fits(size)) throw new Error(`FileBatches: ${size} bytes is too large for a batch`);
    if (this.used + size > BATCH_BYTES) this.submit();
    this.reserved = { path, start: this.used, end: this.used + size };
  }

  /** Copies `bytes` into the reserved file, `at` bytes from its start. */
  put(bytes: Uint8Array, at: number): void {
    const r = this.reserved;
    if (!r) throw new Error("FileBatches: nothing reserved");
    if (!(at >= 0 && r.start + at + bytes.length <= r.end)) throw new Error("FileBatches: bytes beyond the reserved file");
    this.buf.set(bytes, r.start + at);
  }

  /**
   * The reserved file becomes part of the batch. Null when nothing is to be waited for; otherwise a promise that
   * settles once no more than two batches are being written. Throws (or rejects with) what failed.
   */
  commit(): Promise<void> | null {
    const r = this.reserved;
    if (!r) throw new Error("FileBatches: nothing reserved");
    this.reserved = null;
    this.paths.push(r.path);
    this.ends.push(r.end);
    this.used = r.end;
    if (this.paths.length >= BATCH_FILES) this.submit();
    if (this.failure) throw this.failure;
    return this.inFlight.length > IN_FLIGHT ? this.settleBeyond(IN_FLIGHT) : null;
  }

  /** Forgets the reserved file. */
  drop(): void {
    this.reserved = null;
  }

  /** Writes what is left and waits for every batch; throws the first failure. */
  async finish(): Promise<void> {
    this.drop();
    this.submit();
    await this.settleBeyond(0);
  }

  /** Waits until at most `max` batches are being written; throws the first failure. */
  private async settleBeyond(max: number): Promise<void> {
    while (this.inFlight.length > max) await this.settleOldest();
    if (this.failure) throw this.failure;
  }

  /** Waits for the batches being written (so nothing writes beneath the directory after this), without throwing. */
  async close(): Promise<void> {
    this.drop();
    this.paths = [];
    this.ends = [];
    this.used = 0;
    while (this.inFlight.length > 0) await this.settleOldest();
  }

  /** The current batch handed to the module (it borrows the block), then a new one starts in a spare block. */
  private submit(): void {
    if (this.paths.length === 0) return;
    const paths = this.paths;
    const joined = Buffer.from(`${paths.join("\0")}\0`, "utf8");
    const job = this.m.createStart(this.dir.fd, joined, paths.length, this.buf.subarray(0, this.used), Float64Array.from(this.ends), this.mode);
    this.inFlight.push({ job, paths, block: this.buf });
    this.buf = this.spare.pop() ?? this.m.batchBlock(BATCH_BYTES);
    this.paths = [];
    this.ends = [];
    this.used = 0;
  }

  private async settleOldest(): Promise<void> {
    const batch = this.inFlight[0] as Batch;
    try {
      const records = await polled(() => this.m.createRecords(batch.job));
      this.spare.push(batch.block); // the job is done with it: the next batch may fill it
      const L = this.m.layout;
      for (let i = 0; i < batch.paths.length && this.failure === null; i++) {
        const step = records.readInt32LE(i * L.CREATE_RECORD + L.CJ_STEP);
        if (step === 0) continue;
        const errno = records.readInt32LE(i * L.CREATE_RECORD + L.CJ_ERRNO);
        this.failure = sysError(errno, STEPS[step] ?? "create", `${this.dir.rel}/${batch.paths[i]}`);
      }
    } finally {
      this.inFlight.shift();
      this.m.release(batch.job);
    }
  }
}
