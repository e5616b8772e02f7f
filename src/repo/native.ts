/**
 * The native module (src/native/*.c, built into build/native/worksnap.node
 * by build.ts and embedded in the compiled binary): file reading and hashing
 * on a pool of threads, with SHA-256 and SHA-1 on the CPU's SHA extensions.
 * It is optional: without a C compiler at build time, or with
 * WORKSNAP_NATIVE=0, every caller takes its TypeScript path, which gives the
 * same answers (the tests run both and compare).
 *
 * Jobs never block the event loop: a job's files are read on the module's
 * threads in index order, and `waitReady` polls how many are finished from
 * the first, so a caller can use a growing prefix of results.
 */
import { constants } from "node:os";
import { internal } from "../core/errors";
import { loadEmbeddedCopy } from "./native-copy";

/** An opaque running job. */
export type NativeJob = { readonly __nativeJob: unique symbol };
/** An opaque writer thread (src/native/sink.h). */
export type NativeSink = { readonly __nativeSink: unique symbol };
/** A syncfs running on a thread of its own (syncfsStart). */
export type NativeSyncfs = { readonly __nativeSyncfs: unique symbol };

export interface NativeLayout {
  HASH_RECORD: number;
  HR_STATUS: number;
  HR_EXEC: number;
  HR_HASHED: number;
  HR_TRUSTED: number;
  HR_ERRNO: number;
  HR_SIZE: number;
  HR_MTIME: number;
  HR_CTIME: number;
  HR_INO: number;
  HR_SHA256: number;
  HR_GIT: number;
  SCAN_RECORD: number;
  SR_KIND: number;
  SR_DIGEST: number;
  SR_SAME: number;
  SR_REMEMBER: number;
  SR_ERRNO: number;
  SR_LENGTH: number;
  SR_STAMP: number;
  SR_SHA256: number;
  SR_OFFSET: number;
  TRI_EXPECT_SIZE: number;
  TRIGRAM_RECORD: number;
  TR_STATUS: number;
  TR_ERRNO: number;
  TR_SIZE: number;
  TR_COUNT: number;
  TR_SHA256: number;
  STAT_RECORD: number;
  SJ_STATUS: number;
  SJ_SIZE: number;
  SJ_MTIME: number;
  SJ_CTIME: number;
  SJ_INO: number;
  CREATE_RECORD: number;
  CJ_STEP: number;
  CJ_ERRNO: number;
  /** listingRecords: values per record, and its path flags */
  LR_FIELDS: number;
  LR_NON_ASCII: number;
  LR_MAY_BE_RESERVED: number;
}

/** The memory a joinBytes array lies in (opaque; holds it while referenced). */
export type JoinedBlock = { readonly __joinedBlock: unique symbol };

export interface NativeModule {
  version: number;
  layout: NativeLayout;
  /**
   * Hashes clean tracked files under `root` (NUL-separated relative paths), git's ids `idBytes` long (20: SHA-1;
   * 32: SHA-256); see src/native/hash_job.c.
   */
  hashStart(root: string, paths: Uint8Array, count: number, trustBeforeMs: number, streamThreshold: number, idBytes: number): NativeJob;
  /**
   * hashStart over the leaders of a `git ls-files -s -v -z` listing, planned natively (src/native/listing_plan.c;
   * git's ids as long as the listing's):
   * the job (null without a plain record) and the plan: the plain records' count p, the leaders' count l, each
   * plain record's leader (p entries), each leader's plain record (l entries).
   */
  hashStartListing(root: string, listing: Uint8Array, trustBeforeMs: number, streamThreshold: number): [NativeJob | null, Int32Array];
  /**
   * The records of such a listing as the planner splits it, for the parse (tree-scan.ts): per record, its start,
   * its three spaces' and its tab's offsets, its end, and its path's flags (layout.LR_NON_ASCII,
   * layout.LR_MAY_BE_RESERVED). null for a listing of 2 GiB or more.
   */
  listingRecords(listing: Uint8Array): Int32Array | null;
  /** grep's reads of absolute paths; see src/native/scan_job.c. */
  scanStart(
    paths: Uint8Array,
    count: number,
    /** per file (bit 0: hash), or one value for every file */
    flags: Uint8Array | number,
    /** remembered stamps, 5 a file (NaN: none), or null for none at all */
    known: Float64Array | null,
    limit: number,
    sniff: number,
    racyMs: number,
    literals: Uint8Array[] | null,
    required: Uint8Array[][],
    needleBytes: number,
    /**
     * what to keep of a file that may match: true, its bytes; 2, only its lines that may hold a match, numbered
     * (a u32 count n, n u32 1-based line numbers, then the lines with their newlines; scan_job.c); false,
     * nothing (marked only, unhashed, for the caller to read); or the size expected of each file, which is read
     * into its slot of one block (scanBlock) when it has that size (an export's reads)
     */
    keep: boolean | 2 | Float64Array,
    /** directory the paths are relative to; "" for absolute paths */
    root: string,
    /** how many of the first literals are found ASCII case-insensitively (given in lowercase) */
    folded?: number,
  ): NativeJob;
  /** Items finished, from the first, without a gap. */
  ready(job: NativeJob): number;
  hashRecords(job: NativeJob, from: number, to: number): Buffer;
  /** The kinds of finished items written into kinds[from..to); the records of those that may match (BYTES), in order. */
  scanKinds(job: NativeJob, from: number, to: number, kinds: Uint8Array): Buffer;
  /** Records of finished items, and the kept files' bytes (a record's SR_OFFSET indexes them), handed over without a copy. */
  scanCollect(job: NativeJob, from: number, to: number): [Buffer, Buffer[]];
  /**
   * The block a scan started with expected sizes reads into, without a copy: a record of kind BYTES has its bytes
   * at SR_OFFSET, SR_LENGTH long (ready items only). Freed once both it and the job are let go; detaching it (a
   * writer's release) lets go of it at once.
   */
  scanBlock(job: NativeJob): Buffer;
  /** The blocks (and their bytes) kept for an export's next windows: none once no export is reading. */
  slotSpares(): [number, number];
  /** `fn` runs on this thread whenever a watched item finishes (see watch); once per job. */
  notify(job: NativeJob, fn: () => void): void;
  /** True when item `index` is finished already; otherwise notify's function runs once it is (the event loop stays up meanwhile). */
  watch(job: NativeJob, index: number): boolean;
  /** Stops the items not started and lets the job go; idempotent. */
  release(job: NativeJob): void;
  sha256(bytes: Uint8Array): Buffer;
  /** The SHA-256 of each array, 32 bytes each in one Buffer, on up to `threads` threads (the call blocks). */
  sha256Many(list: Uint8Array[], threads: number): Buffer;
  /** The longest stretch of `bytes` without `byte`. */
  longestRun(bytes: Uint8Array, byte: number): number;
  /** Occurrences of `byte` in bytes[from, to). */
  countByte(bytes: Uint8Array, byte: number, from: number, to: number): number;
  gitBlobId(bytes: Uint8Array): Buffer;
  /**
   * Directory-descriptor operations (src/native/dirfd.c; src/repo/dir-handle.ts wraps them). Names are single
   * components; numbers are a descriptor, 0, or an errno (negated where a descriptor could have been returned).
   */
  /** The directory `rel` beneath `rootfd`, no symlink followed on the way (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or an O_NOFOLLOW walk). */
  dirOpenBeneath(rootfd: number, rel: string): number;
  openAt(dirfd: number, name: string, flags: number, mode: number): number;
  mkdirAt(dirfd: number, name: string, mode: number): number;
  unlinkAt(dirfd: number, name: string, directory: boolean): number;
  /** flags: 0, 1 (RENAME_NOREPLACE) or 2 (RENAME_EXCHANGE; ENOSYS where the platform has none). */
  renameAt(fromfd: number, from: string, tofd: number, to: string, flags: number): number;
  symlinkAt(target: Uint8Array, dirfd: number, name: string): number;
  readlinkAt(dirfd: number, name: string): Buffer | number;
  /** [dev, ino, mode, size, mtimeMs, ctimeMs, nlink] of the name itself, or an errno. */
  lstatAt(dirfd: number, name: string): Float64Array | number;
  /**
   * `name` opened with `flags`, its fstat (as lstatAt's numbers) and its bytes to the end, in one call: the bytes
   * are null when it is not a regular file. The errno when the open fails, -errno when fstat or a read does.
   */
  readFileAt(dirfd: number, name: string, flags: number): [Float64Array, Uint8Array | null] | number;
  /**
   * For each (fds[k], names[k]) the name's lstat and, when it is a regular file, the file opened with `flags`, its
   * fstat and its bytes, read on up to `threads` threads (src/native/read_many.c): numbers holds 14 per entry (the
   * lstat, then the fstat, as lstatAt gives them), errors 3 (lstat's errno; the open's errno, or -errno of fstat or a
   * read; 1 when the file was opened), bytes a regular file's bytes or null, digests 32 bytes per entry: the SHA-256
   * of its bytes, hashed on the thread that read them (zeros where there are none).
   */
  readManyAt(fds: Int32Array, names: string[], flags: number, threads: number): [numbers: Float64Array, errors: Int32Array, bytes: (Uint8Array | null)[], digests: Buffer];
  /**
   * The unified diff of `a` to `b` rendered from `changes` ((oldStart, oldEnd, newStart, newEnd) quadruples, 0-based
   * lines, sorted) after the bytes of `head`, with `context` lines around each group of changes: the bytes of
   * src/ops/diff/placed-diff.ts's renderer; null when the changes do not turn `a` into `b`.
   */
  placedDiff(a: Uint8Array, b: Uint8Array, changes: Int32Array, head: Uint8Array, context: number): Buffer | null;
  /** Whether descriptor `fd` is a terminal. */
  isatty(fd: number): boolean;
  /**
   * Where the string literals of a JSON text whose source is at least minBytes long are: [start, end, ascii, ...]
   * (the opening quote, one past the closing one, 1 when the value is ASCII); null when the text must be parsed as
   * it is (src/native/json_strings.h). The text is only read.
   */
  jsonLongStrings(text: Uint8Array, minBytes: number): Float64Array | null;
  /**
   * The strings jsonLongStrings found, decoded in place in the text (overwriting them there), each followed by its
   * UTF-8 bytes (a view of the text): [string, bytes, ...]. `block`: what joinBytes gave with the text, or null
   * (an ASCII string in a joined text is made over its bytes there instead of copied).
   */
  jsonDecodeStrings(text: Uint8Array, spans: Float64Array, block: JoinedBlock | null): (string | Uint8Array)[];
  /**
   * A stored manifest as columns when it is exactly as repo/manifest.ts writes one and holds no escape
   * (src/native/manifest_columns.h): [count, rows (4 an entry: where its blob id starts in the text, where its path
   * starts, the path's length in bytes, the first entry with the same blob id), modes (0 none, 1 "100755", 2
   * "120000")]; null for any other text.
   */
  manifestColumns(text: Uint8Array): [number, Uint32Array, Uint8Array] | null;
  /**
   * The size of the blob of each id ("sha256:" and 64 lowercase hex digits) in `records` (a blob's SHA-256 at
   * shaAt, its size a double at sizeAt); -1 when not there, -2 for an id not of that form (look it up as it is).
   */
  recordSizes(records: Uint8Array, recordBytes: number, shaAt: number, sizeAt: number, ids: readonly string[]): Float64Array;
  /** The arrays' bytes joined in one array whose pages were made present in one call, and its block; null when none could be mapped. */
  joinBytes(parts: Uint8Array[]): [Buffer, JoinedBlock] | null;
  /** Where each line of `bytes` starts, then its length (patch/lines.ts FileLines); null from 4 GiB on. */
  lineStarts(bytes: Uint8Array): Uint32Array | null;
  /**
   * The hunks of a patch (its bytes and their lineStarts) that read plainly, as patch/parse-hunk.ts parseHunkAt
   * would read them without a warning or a reject: six numbers each, the header's line, oldStart, statedOld,
   * newStart, statedNew, the line after the body.
   */
  patchHunks(patch: Uint8Array, starts: Uint32Array): Int32Array;
  /**
   * One file's hunks applied as patch/apply.ts applyHunks applies them, hunk k's body being patch lines
   * [spec[3k], spec[3k+1]) and its stated old start spec[3k+2]: the new bytes, and each hunk's offset followed by
   * the placed line changes as quadruples; null when a hunk does not fit or needs the TypeScript path's rules.
   */
  patchApply(file: Uint8Array, patch: Uint8Array, starts: Uint32Array, spec: Int32Array): [Uint8Array, Int32Array] | null;
  /**
   * patchApply for many files of one patch at once, on up to `threads` threads: each file's result as patchApply
   * gives it, and 64 bytes per file, the SHA-256 of its old bytes (zeros where `known` is not 0: not hashed) then
   * of its new bytes (zeros when declined).
   */
  patchApplyMany(files: Uint8Array[], patch: Uint8Array, starts: Uint32Array, specs: Int32Array[], threads: number, known: Uint8Array): [([Uint8Array, Int32Array] | null)[], Buffer];
  describe(): { sha256: "sha-ni" | "portable"; threads: number };
  /**
   * The trigram index's build of `files` files under `root` ("" for absolute paths): each checked against its
   * expected blob (TRI_EXPECT_SIZE bytes a file in `expects`: the kind, 1 git SHA-1 id, 2 git SHA-256 id, 3 SHA-256
   * of the bytes, 4 and 5 the SHA-256 of the bytes with their git SHA-1 or SHA-256 id recorded beside it; then the
   * id zero padded to 32, and for 4 and 5 the git id zero padded to 32), then one segment of the blobs
   * (src/native/trigram_job.c). Files after
   * `pairCap` trigrams are deferred; `background` runs it on the low-priority threads. Item `files` is the segment.
   */
  trigramStart(root: string, paths: Uint8Array, files: number, expects: Uint8Array, fileLimit: number, pairCap: number, sniff: number, background: boolean): NativeJob;
  /** Every file's record (TRIGRAM_RECORD bytes each), once the job is done. */
  trigramRecords(job: NativeJob): Buffer;
  /** The segment, once; null when it was not built (cancelled, out of memory). */
  trigramSegment(job: NativeJob): Buffer | null;
  /** lstat of each path under `root` (NUL-separated relative paths); see src/native/stat_job.c. */
  statStart(root: string, paths: Uint8Array, count: number): NativeJob;
  /** Every path's record (STAT_RECORD bytes each) once the job is done; null while it runs. */
  statRecords(job: NativeJob): Buffer | null;
  /**
   * New files beneath the directory `dirfd` (the job holds its own duplicate), written on the pool's threads:
   * item i at paths[i] (NUL-separated, relative, no symlink followed; never over an existing entry) holding
   * data[ends[i-1], ends[i]), permission bits `mode`; see src/native/create_job.h. Data in a batchBlock is borrowed
   * until the job is let go (its filler must not change it meanwhile); any other is copied.
   */
  createStart(dirfd: number, paths: Uint8Array, count: number, data: Uint8Array, ends: Float64Array, mode: number): NativeJob;
  /** A Buffer over a new block of `length` bytes, for createStart to borrow from (FileBatches' batches). */
  batchBlock(length: number): Buffer;
  /** Every item's record (CREATE_RECORD bytes each: the step that failed, 0 for none, and its errno) once done; null while it runs. */
  createRecords(job: NativeJob): Buffer | null;
  /**
   * A thread that writes to `fd` what it is given, in order, hashing it (SHA-256) as it goes (src/native/sink.h):
   * the digest covers `prefix` (not written) first; writeback is started every `writebackStep` bytes (default 8
   * MiB), and with `durableSteps` each step is synced (fdatasync). Keep `fd` open until sinkFree has returned.
   */
  sinkOpen(fd: number, prefix?: Uint8Array, writebackStep?: number, durableSteps?: boolean): NativeSink;
  /**
   * Queues a copy of `bytes`; the bytes queued and not yet written. With `release`, bytes that span their whole
   * ArrayBuffer have it detached once copied: its memory goes back now, not when collected (reads as empty after).
   */
  sinkWrite(sink: NativeSink, bytes: Uint8Array, release?: boolean): number;
  /** Queues a copy of the pieces (`total` bytes in all), in order, then releases those of `release` as sinkWrite does. */
  sinkWritev(sink: NativeSink, pieces: Uint8Array[], total: number, release?: Uint8Array[]): number;
  /**
   * Queues the run of an export's scan items from `from` (all of [from, to) finished) read whole with the blob's
   * size and SHA-256 (`digests`: 32 bytes an item from `from`; `modes`: a BUNDLE_MODE an item), each as its tar
   * header named `prefix` + its path, its bytes (borrowed from the window's block) and its padding; stops at the
   * first that is not (src/native/bundle_put.h): [entries put, their bytes, the bytes queued and not yet written].
   */
  sinkPutScanned(sink: NativeSink, job: NativeJob, from: number, to: number, digests: Uint8Array, modes: Uint8Array, prefix: Uint8Array): [number, number, number];
  sinkQueued(sink: NativeSink): number;
  /** Nothing more will come. */
  sinkClose(sink: NativeSink): void;
  /** Once closed and everything written (or a write failed): [errno (0: none), bytes written, SHA-256]; null before. */
  sinkResult(sink: NativeSink): [number, number, Buffer] | null;
  /** Drops what is still queued and waits for the thread; idempotent. */
  sinkFree(sink: NativeSink): void;
  /** SHA extensions on or off (tests of both implementations); true when they are on. Only while no job runs. */
  accelerate(on: boolean): boolean;
  /** Gives the C heap's free memory (the jobs' threads' arenas) back to the system; whether any was (glibc only). */
  trimMemory(): boolean;
  /** From now on, the C heap keeps freed memory for reuse instead of giving it back (glibc only); whether it could. */
  keepFreedMemory(): boolean;
  /** Starts a syncfs(2) of the file system `fd` is on, on a thread of its own (Linux only). */
  syncfsStart?(fd: number): NativeSyncfs;
  /** null while that flush runs, then its errno (0: every write-back succeeded). */
  syncfsResult?(flush: NativeSyncfs): number | null;
}

const MODULE_VERSION = 22;
let loaded: NativeModule | null | undefined;
let loadError = "";
/** Where the module was loaded from when the runtime's own extraction failed (native-copy.ts). */
let loadedFrom: string | null = null;

/** The module, or null when it was not built, cannot load here, or WORKSNAP_NATIVE=0. */
export function nativeModule(): NativeModule | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.env.WORKSNAP_NATIVE === "0") {
    loadError = "disabled by WORKSNAP_NATIVE=0";
    return null;
  }
  // an executable built without the module (darwin targets, no compiler at build time) says why
  const built = typeof WORKSNAP_BUILD === "object" && WORKSNAP_BUILD ? WORKSNAP_BUILD.nativeNote : "";
  if (built) {
    loadError = built;
    return null;
  }
  let m: NativeModule | undefined;
  try {
    // a literal path, so that bun build embeds the module in the executable
    m = require("../../build/native/worksnap.node") as NativeModule;
  } catch (err) {
    loadError = err instanceof Error ? err.message.split("\n")[0]! : String(err);
    // the temporary directory the runtime writes it to may not run code (noexec): a copy of the user's may
    const copy = loadEmbeddedCopy();
    if (typeof copy === "string") loadError += `; a copy failed too (${copy})`;
    else {
      m = copy.exports as NativeModule;
      loadedFrom = copy.dir;
    }
  }
  if (m === undefined) return null;
  if (m.version === MODULE_VERSION) loaded = m;
  else loadError = `unexpected module version ${String(m.version)}`;
  return loaded;
}

/** One line for `--version` and diagnostics. */
export function nativeSummary(): string {
  const m = nativeModule();
  if (!m) return `native: off (${loadError || "not built"})`;
  const d = m.describe();
  return `native: on (sha256 ${d.sha256}, ${d.threads} threads${loadedFrom !== null ? `; loaded from ${loadedFrom}: the runtime's own copy would not load, ${loadError}` : ""})`;
}

/**
 * How long a wait on a job's wake-up (notify/watch) goes before the waiter
 * looks for itself: a wake-up that never comes costs that long, never the
 * whole wait (docs/decisions.md, "A read's answer never waits on one wake-up
 * alone").
 */
export const WAKE_BACKSTOP_MS = 50;

/** An entry's mode as sinkPutScanned takes it (src/native/bundle_put.h): anything but a regular file stops its run. */
export const BUNDLE_MODE = { file: 0, exec: 1, other: 2 } as const;

/** Calls `look` after WAKE_BACKSTOP_MS unless cleared first; the timer never keeps the process up. */
export function lookLater(look: () => void): ReturnType<typeof setTimeout> {
  return setTimeout(look, WAKE_BACKSTOP_MS).unref();
}

/**
 * Resolves once `want` items of `job` are finished, polling every
 * millisecond; `onReady` hears the finished count as it grows. Aborting
 * `signal` rejects with its reason (the caller releases the job).
 */
export async function waitReady(m: NativeModule, job: NativeJob, want: number, onReady?: (n: number) => void, signal?: AbortSignal): Promise<number> {
  let seen = -1;
  for (;;) {
    const n = m.ready(job);
    if (n !== seen) {
      seen = n;
      onReady?.(n);
    }
    if (n >= want) return n;
    if (signal?.aborted) throw signal.reason ?? internal("aborted");
    await Bun.sleep(1);
  }
}

/**
 * What `read` returns once it is no longer null: a result of the module's threads (a job's records, a flush, a
 * writer's end), asked every millisecond while this thread goes on. Aborting `signal` rejects with its reason.
 */
export async function polled<T>(read: () => T | null, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== null) return value;
    if (signal?.aborted) throw signal.reason ?? internal("aborted");
    await Bun.sleep(1);
  }
}

/** A stat job's records (statStart), polled until done; aborting `signal` rejects with its reason. */
export async function statRecordsOf(m: NativeModule, root: string, paths: readonly string[], signal?: AbortSignal): Promise<Buffer> {
  const job = m.statStart(root, joinPaths(paths), paths.length);
  try {
    return await polled(() => m.statRecords(job), signal);
  } finally {
    m.release(job);
  }
}

const joined = new WeakMap<readonly string[], Uint8Array>();

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n as number, name]));

/** An Error like node:fs throws, for an errno the module reports about `path`. */
export function errnoError(errno: number, path: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`${code}: cannot read ${path} (errno ${errno})`), { code, errno, path });
}

/** Paths joined by NUL, as the module takes them; the same bytes again for the same array (a server's listing). */
export function joinPaths(paths: readonly string[]): Uint8Array {
  let bytes = joined.get(paths);
  if (!bytes) joined.set(paths, (bytes = Buffer.from(paths.join("\0") + "\0", "utf8")));
  return bytes;
}

/**
 * For the rest of a process that ends soon after its work (a CLI command), the native module's freed C heap is
 * kept for its next allocations rather than given back to the system (nativeModule().keepFreedMemory): an export's
 * reads, each freed once written, reuse memory already touched. False without the module or off glibc.
 */
export function keepFreedNativeMemory(): boolean {
  return nativeModule()?.keepFreedMemory() ?? false;
}

/** Gives the native module's freed C heap back to the system, where it can (nativeModule().trimMemory); false without the module. */
export function trimNativeMemory(): boolean {
  return nativeModule()?.trimMemory() ?? false;
}
