/**
 * Where an export's small blobs come from, read ahead of the bundle writer in
 * manifest order, each verified against its id before it is handed over.
 *
 * A blob is content addressed, so any bytes that hash to its id are its
 * bytes, wherever they were read. The snapshot usually describes the work
 * tree it sits in (the export of a fresh capture, or of a recent one), so the
 * path's file in the work tree is tried first: read and hashed on the native
 * module's threads (no inflating of git's compressed objects, no round trip
 * through `git cat-file`), and taken when its SHA-256 is the blob's id and its
 * length the blob's size. The native threads read a window's files into the
 * slots of one block laid out from the blobs' sizes (a file of another size is
 * not read), which the bundle's writer lets go once it has written the window
 * (from the block itself: src/native/slot_block.h):
 * one allocation, one object and one free a window, where a buffer for each
 * file cost an object, a finalizer and a free for each of 100,000 files. Any
 * other outcome (changed, gone, a symlink, a special file, not readable)
 * reads the blob from the store, which verifies it the same way. The bytes
 * written are the bytes that were hashed: the work tree changing meanwhile can
 * only send a blob to the store.
 *
 * When the work tree holds few of a window's blobs (an old snapshot), the
 * following windows read from the store alone, and one in STORE_RUN + 1 tries
 * the work tree again (a snapshot can differ from the tree in one part only).
 * Without the native module (the darwin executables) the work tree's files
 * are read and hashed on worker threads (repo/verified-reads.ts) for an
 * export of WORKER_READS_MIN files or more, and for a smaller one here,
 * TREE_READS at a time off the event loop's thread, hashed on it: the store's
 * reads inflate git's objects through `git cat-file`, which made such an
 * export 2-3x the native one.
 */
import { join } from "node:path";
import { internal, notFound, WorksnapError } from "../../core/errors";
import { Semaphore } from "../../core/semaphore";
import { blobIdOf, hexOfBlobId, type BlobId } from "../../core/hash";
import { readRegularSized } from "../../repo/file-chunks";
import { VerifiedReads } from "../../repo/verified-reads";
import { BUNDLE_MODE, joinPaths, nativeModule, waitReady, type NativeJob, type NativeModule } from "../../repo/native";
import type { SnapshotId } from "../../repo/manifest";
import type { SideEntry } from "./tree-side";
import type { Workspace } from "../workspace";

/**
 * Blobs up to this size are read whole (a window of their own when larger
 * than WINDOW_BYTES); larger ones are streamed by the writer from the store.
 */
export const WHOLE_READ_MAX = 64 * 1024 * 1024;
/** One window: at most this many bytes or files read ahead together. */
const WINDOW_BYTES = 4 * 1024 * 1024;
const WINDOW_FILES = 512;
/** Windows in flight: one being written while the next is read. */
const WINDOWS_AHEAD = 4;
/** Below this share of a window's blobs found in the work tree, the next window reads from the store. */
const MIN_TREE_SHARE = 0.5;
/** Windows read from the store alone before the work tree is tried again. */
const STORE_RUN = 8;

const KIND_BYTES = 2;
/** Without the native module: work-tree files being read at once (each holds a descriptor). */
const TREE_READS = 8;
/** Without the native module, from this many entries the work tree is read on workers (their start-up then pays). */
export const WORKER_READS_MIN = 2000;
/** A batch a worker is sent: at most this many files or bytes (a window is cut into several, spread over the workers). */
const WORKER_BATCH_FILES = 256;
const WORKER_BATCH_BYTES = 4 * 1024 * 1024;

interface Window {
  from: number;
  to: number;
  /** reading the work tree: the job, and how many of its results were collected */
  job: NativeJob | null;
  /** the block the job reads the files into (each a view of it once collected) */
  block: Buffer | null;
  /** with the job: each entry's blob SHA-256 (32 bytes) and BUNDLE_MODE, for a run put straight into the bundle (putVerified) */
  digests: Buffer | null;
  modes: Uint8Array | null;
  collected: number;
  /** per entry of the window (index - from): verified bytes, or the store's read */
  got: (Uint8Array | Promise<Uint8Array> | undefined)[];
  treeHits: number;
  /** without the native module: the entries whose work-tree read has settled */
  treeSettled: number;
}

export class ExportReads {
  private readonly m: NativeModule | null;
  private readonly windows: Window[] = [];
  private next = 0;
  private useTree: boolean;
  private readonly treeReads = new Semaphore(TREE_READS);
  /** windows read from the store alone since the work tree was last tried */
  private storeRun = 0;
  /** the work-tree reads the workers handed out: memory of this export alone (isOwn) */
  private readonly own = new WeakSet<Uint8Array>();
  /** without the native module, for a large export: the workers that read the work tree */
  private readonly workers: VerifiedReads | null;

  constructor(
    private readonly ws: Workspace,
    private readonly entries: SideEntry[],
    private readonly sizes: number[],
    private readonly snapshotId: SnapshotId,
    /** Takes a retired window's block of reads: the bundle's writer lets it go once it has copied the views it was given. */
    private readonly giveBack: (block: Uint8Array) => void = () => {},
  ) {
    this.m = nativeModule();
    this.useTree = true;
    this.workers = !this.m && entries.length >= WORKER_READS_MIN ? new VerifiedReads() : null;
  }

  /** True when the writer streams entry i itself (a file larger than WHOLE_READ_MAX). */
  streamed(i: number): boolean {
    return (this.entries[i] as SideEntry).mode !== "120000" && (this.sizes[i] as number) > WHOLE_READ_MAX;
  }

  /** Entry i's verified bytes (a symlink's target); entries must be taken in order, streamed ones skipped. */
  async take(i: number): Promise<Uint8Array> {
    if (this.streamed(i)) throw internal("a large blob was read ahead");
    while (this.windows.length > 0 && (this.windows[0] as Window).to <= i) this.retire(this.windows.shift() as Window);
    if (this.windows.length === 0 && this.next <= i) this.next = i;
    this.fill();
    const w = this.windows[0] as Window;
    if (i < w.from) throw internal("export reads taken out of order");
    let got = w.got[i - w.from];
    if (got === undefined && w.job) {
      await this.collect(w, i - w.from + 1);
      got = w.got[i - w.from];
    }
    if (got === undefined) got = this.fromStore(i);
    w.got[i - w.from] = undefined;
    return got;
  }

  /**
   * Puts the run of entries from i that the work tree gave verified (read whole with the blob's size and
   * SHA-256, regular files) straight into the bundle through `put` (AtomicFileWriter.putScanned), without a
   * piece passing through this thread; waits for entry i's read. The entries put: 0 when entry i must be taken
   * the ordinary way (take), as a symlink, a streamed blob, a file the work tree does not hold as the blob, a
   * window read from the store, or without the native module.
   */
  async putVerified(i: number, put: (job: NativeJob, from: number, to: number, digests: Uint8Array, modes: Uint8Array) => number): Promise<number> {
    if (!this.m || this.streamed(i)) return 0;
    while (this.windows.length > 0 && (this.windows[0] as Window).to <= i) this.retire(this.windows.shift() as Window);
    if (this.windows.length === 0 && this.next <= i) this.next = i;
    this.fill();
    const w = this.windows[0] as Window;
    const k = i - w.from;
    if (k < 0) throw internal("export reads taken out of order");
    if (!w.job || k !== w.collected || !w.digests || !w.modes) return 0;
    const job = w.job;
    let ready = this.m.ready(job);
    if (ready <= k) ready = await waitReady(this.m, job, k + 1);
    const n = w.to - w.from;
    const count = put(job, k, ready, w.digests.subarray(32 * k), w.modes.subarray(k));
    if (count === 0) return 0;
    w.collected += count;
    w.treeHits += count;
    if (w.collected === n) this.finished(w);
    return count;
  }

  /**
   * Whether `bytes`, taken from here, were read from the work tree for this
   * export alone by the workers (without the native module): nothing else
   * holds them, so the bundle's writer may give their memory back once it has
   * copied them. A blob read from the store may be one a cache holds too; the
   * native reads are views of a block given back whole (giveBack).
   */
  isOwn(bytes: Uint8Array): boolean {
    return this.own.has(bytes);
  }

  /** Stops the reads still running (native jobs, workers); idempotent. */
  close(): void {
    for (const w of this.windows.splice(0)) this.retire(w);
    this.workers?.close();
  }

  /** Opens windows until WINDOWS_AHEAD are in flight; a window ends before a streamed entry. */
  private fill(): void {
    const { entries } = this;
    while (this.windows.length < WINDOWS_AHEAD && this.next < entries.length) {
      while (this.next < entries.length && this.streamed(this.next)) this.next++;
      if (this.next >= entries.length) return;
      const from = this.next;
      let to = from;
      let bytes = 0;
      while (to < entries.length && !this.streamed(to) && to - from < WINDOW_FILES && (to === from || bytes + (this.sizes[to] as number) <= WINDOW_BYTES)) {
        bytes += this.sizes[to] as number;
        to++;
      }
      this.next = to;
      const w: Window = { from, to, job: null, block: null, digests: null, modes: null, collected: 0, got: new Array(to - from), treeHits: 0, treeSettled: 0 };
      if (this.useTree || this.storeRun >= STORE_RUN) {
        this.storeRun = 0;
        if (this.m) {
          const paths = entries.slice(from, to).map((e) => e.path);
          // each file read into its slot of one block when it has the blob's size (another size is not the blob)
          const expect = new Float64Array(this.sizes.slice(from, to));
          w.job = this.m.scanStart(joinPaths(paths), paths.length, 1, null, WHOLE_READ_MAX, 0, 0, null, [], 0, expect, this.ws.repo.root);
          w.block = this.m.scanBlock(w.job);
          w.digests = Buffer.allocUnsafe(32 * (to - from));
          w.modes = new Uint8Array(to - from);
          for (let k = 0; k < to - from; k++) {
            const e = entries[from + k] as SideEntry;
            w.digests.write(hexOfBlobId(e.blob), 32 * k, "hex");
            w.modes[k] = e.mode === "100644" ? BUNDLE_MODE.file : e.mode === "100755" ? BUNDLE_MODE.exec : BUNDLE_MODE.other;
          }
        } else if (this.workers) this.readTreeOnWorkers(w, this.workers);
        else this.readTree(w);
      } else {
        this.storeRun++;
        for (let k = from; k < to; k++) w.got[k - from] = this.fromStore(k);
      }
      this.windows.push(w);
    }
  }

  /** Collects the work tree's results of w up to `upTo` (window-relative): verified bytes kept, the rest asked of the store. */
  private async collect(w: Window, upTo: number): Promise<void> {
    const m = this.m as NativeModule;
    const job = w.job as NativeJob;
    const n = w.to - w.from;
    let ready = m.ready(job);
    if (ready < upTo) ready = await waitReady(m, job, upTo);
    // no further than asked: the entries after it may go straight into the bundle (putVerified)
    ready = Math.min(ready, upTo);
    if (ready <= w.collected) return;
    const L = m.layout;
    const [records] = m.scanCollect(job, w.collected, ready);
    const block = w.block as Buffer;
    for (let k = w.collected; k < ready; k++) {
      const at = (k - w.collected) * L.SCAN_RECORD;
      const i = w.from + k;
      const e = this.entries[i] as SideEntry;
      const ok =
        e.mode !== "120000" &&
        records[at + L.SR_KIND] === KIND_BYTES &&
        records[at + L.SR_DIGEST] === 1 &&
        records.toString("hex", at + L.SR_SHA256, at + L.SR_SHA256 + 32) === hexOfBlobId(e.blob);
      const slot = records.readDoubleLE(at + L.SR_OFFSET);
      const bytes = records[at + L.SR_KIND] === KIND_BYTES ? block.subarray(slot, slot + records.readDoubleLE(at + L.SR_LENGTH)) : null;
      if (ok && bytes && bytes.length === this.sizes[i]) {
        w.got[k] = bytes;
        w.treeHits++;
      } else {
        w.got[k] = this.fromStore(i);
      }
    }
    w.collected = ready;
    if (ready === n) this.finished(w);
  }

  /** Every result of w's job is in: the job let go, and the share found in the work tree decides where the next windows read. */
  private finished(w: Window): void {
    const n = w.to - w.from;
    if (w.job) this.m?.release(w.job);
    w.job = null;
    this.useTree = w.treeHits >= MIN_TREE_SHARE * n;
  }

  /** Without the native module: each file of w read from the work tree and taken when it is the blob, else the store's read. */
  private readTree(w: Window): void {
    for (let i = w.from; i < w.to; i++) {
      const e = this.entries[i] as SideEntry;
      const size = this.sizes[i] as number;
      const tree = (async () => {
        if (e.mode === "120000") return null;
        const release = await this.treeReads.acquire();
        let bytes: Buffer | null;
        try {
          bytes = await readRegularSized(join(this.ws.repo.root, e.path), size);
        } finally {
          release();
        }
        return bytes && blobIdOf(bytes) === e.blob ? (bytes as Uint8Array) : null;
      })();
      this.treeOrStore(w, i, tree, false);
    }
  }

  /**
   * Without the native module, a large export: w's files read and verified on the workers, a batch at a time
   * (a symlink is the store's read).
   */
  private readTreeOnWorkers(w: Window, workers: VerifiedReads): void {
    let batch: number[] = [];
    let bytes = 0;
    const send = () => {
      const found = workers.read(
        batch.map((i) => ({ abs: join(this.ws.repo.root, (this.entries[i] as SideEntry).path), size: this.sizes[i] as number, sha256: hexOfBlobId((this.entries[i] as SideEntry).blob) })),
      );
      batch.forEach((i, k) => this.treeOrStore(w, i, found.then((f) => f[k] ?? null), true));
      batch = [];
      bytes = 0;
    };
    for (let i = w.from; i < w.to; i++) {
      if ((this.entries[i] as SideEntry).mode === "120000") {
        this.treeOrStore(w, i, Promise.resolve(null), true);
        continue;
      }
      batch.push(i);
      bytes += this.sizes[i] as number;
      if (batch.length >= WORKER_BATCH_FILES || bytes >= WORKER_BATCH_BYTES) send();
    }
    if (batch.length > 0) send();
  }

  /**
   * Entry i of w: `tree`'s bytes (the work tree's, already verified as the blob; null for none) or else the
   * store's read; `own` when the tree's bytes are this export's alone. Once all of w's entries are in, the share
   * found in the work tree decides where the windows after it read.
   */
  private treeOrStore(w: Window, i: number, tree: Promise<Uint8Array | null>, own: boolean): void {
    const read = tree
      .then((bytes) => {
        if (!bytes) return this.fromStore(i);
        w.treeHits++;
        if (own) this.own.add(bytes);
        return bytes;
      })
      .finally(() => {
        const n = w.to - w.from;
        if (++w.treeSettled === n) this.useTree = w.treeHits >= MIN_TREE_SHARE * n;
      });
    read.catch(() => undefined); // reported when taken
    w.got[i - w.from] = read;
  }

  private retire(w: Window): void {
    if (w.job) this.m?.release(w.job);
    w.job = null;
    if (w.block) this.giveBack(w.block);
    w.block = null;
  }

  private fromStore(i: number): Promise<Uint8Array> {
    const p = readVerified(this.ws, this.entries[i] as SideEntry, this.sizes[i] as number, this.snapshotId);
    p.catch(() => undefined); // reported when taken
    return p;
  }
}

async function readVerified(ws: Workspace, e: SideEntry, size: number, snapshotId: SnapshotId): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await ws.blobs.read(e.blob);
  } catch (err) {
    throw asMissing(err, e, snapshotId);
  }
  const hex = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  if (hex !== hexOfBlobId(e.blob) || bytes.length !== size) throw corruptBlob(e.blob, e.path);
  return bytes;
}

export function asMissing(err: unknown, e: SideEntry, snapshotId: SnapshotId): unknown {
  return err instanceof WorksnapError && err.code === "NOT_FOUND" ? missingBlob(e, snapshotId) : err;
}

export function missingBlob(e: SideEntry, snapshotId: SnapshotId): WorksnapError {
  return notFound(`blob ${e.blob} of ${e.path} is missing from the blob store; snapshot ${snapshotId} cannot be exported`, {
    blob: e.blob,
    path: e.path,
    snapshot_id: snapshotId,
  });
}

export function corruptBlob(blob: BlobId, path: string): WorksnapError {
  return internal(`blob ${blob} of ${path} does not match its id in the store; the export was abandoned`, { blob, path });
}
