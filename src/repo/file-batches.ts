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
 * caller, then committed; a full batch is copied to the module and written
 * while the next one fills. At most two batches are in flight: committing
 * waits for the older one, and reports its first failure. Every file is
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
}

export class FileBatches {
  private buf = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  private paths: string[] = [];
  private ends: number[] = [];
  private reserved: { path: string; end: number } | null = null;
  private readonly inFlight: Batch[] = [];
  private failure: Error | null = null;

  private constructor(
    private readonly m: NativeModule,
    private readonly dir: DirHandle,
    private readonly mode: number,
  ) {}

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
   * of exactly `size` bytes: fill it, then commit() or drop() before the next reserve.
   */
  reserve(path: string, size: number): Uint8Array {
    if (this.reserved) throw new Error("FileBatches: a reserved file was neither committed nor dropped");
    if (!FileBatches.fits(size)) throw new Error(`FileBatches: ${size} bytes is too large for a batch`);
    if (this.used + size > BATCH_BYTES) this.submit();
    this.reserved = { path, end: this.used + size };
    return this.buf.subarray(this.used, this.used + size);
  }

  /** The reserved file becomes part of the batch; waits while two batches are being written, and throws what failed. */
  async commit(): Promise<void> {
    const r = this.reserved;
    if (!r) throw new Error("FileBatches: nothing reserved");
    this.reserved = null;
    this.paths.push(r.path);
    this.ends.push(r.end);
    this.used = r.end;
    if (this.paths.length >= BATCH_FILES) this.submit();
    while (this.inFlight.length > IN_FLIGHT) await this.settleOldest();
    if (this.failure) throw this.failure;
  }

  /** Forgets the reserved file. */
  drop(): void {
    this.reserved = null;
  }

  /** Writes what is left and waits for every batch; throws the first failure. */
  async finish(): Promise<void> {
    this.drop();
    this.submit();
    while (this.inFlight.length > 0) await this.settleOldest();
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

  /** The current batch handed to the module (it copies the bytes), then a new one starts in the same buffer. */
  private submit(): void {
    if (this.paths.length === 0) return;
    const paths = this.paths;
    const joined = Buffer.from(`${paths.join("\0")}\0`, "utf8");
    const job = this.m.createStart(this.dir.fd, joined, paths.length, this.buf.subarray(0, this.used), Float64Array.from(this.ends), this.mode);
    this.inFlight.push({ job, paths });
    this.paths = [];
    this.ends = [];
    this.used = 0;
  }

  private async settleOldest(): Promise<void> {
    const batch = this.inFlight[0] as Batch;
    try {
      const records = await polled(() => this.m.createRecords(batch.job));
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
