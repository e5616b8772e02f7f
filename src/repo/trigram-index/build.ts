/**
 * Building one segment of the trigram index from files: each file is read,
 * checked to hold the blob it should (git's blob id for a clean tracked file,
 * the SHA-256 for a stored blob), and its trigrams taken. On the native
 * module's threads (src/native/trigram_job.c, in the background at the lowest
 * priority, or in the foreground for `worksnap index build`), or here in
 * TypeScript, which writes the same segment and is what the tests compare the
 * native build with.
 *
 * Memory: a job stops reading new files once its files hold `pairCap`
 * trigrams (4 bytes each while the segment is built); the rest come back
 * DEFERRED, for the next job.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { BINARY_SNIFF_BYTES } from "../../core/binary";
import { joinPaths, lookLater, type NativeModule } from "../native";
import { workerEntry } from "../worker-entry";
import { startWorker } from "../worker-start";
import { encodeSegment, trigramsOf, type SegmentBlob } from "./segment";

/** What became of a file (the native TRI_* codes). */
export const TEXT = 0;
export const BINARY = 1;
export const MISMATCH = 2;
export const GONE = 3;
export const TOO_LARGE = 4;
export const DEFERRED = 5;
export const FAILED = 6;

/** What a file is checked against. */
export const EXPECT_GIT_SHA1 = 1;
export const EXPECT_GIT_SHA256 = 2;
export const EXPECT_SHA256 = 3;
/**
 * The SHA-256 of the bytes, where a capture verified the pair of it and the git blob id (`gitOid`, SHA-1 or
 * SHA-256 repositories): one hash a byte instead of two, the git id recorded as given.
 */
export const EXPECT_SHA256_OF_GIT_SHA1 = 4;
export const EXPECT_SHA256_OF_GIT_SHA256 = 5;
/** Bytes an item takes in the native job's expects (the module's TRI_EXPECT_SIZE). */
const EXPECT_SIZE = 65;

export interface BuildItem {
  /** relative to the build's root, or absolute when the root is "" */
  path: string;
  kind: typeof EXPECT_GIT_SHA1 | typeof EXPECT_GIT_SHA256 | typeof EXPECT_SHA256 | typeof EXPECT_SHA256_OF_GIT_SHA1 | typeof EXPECT_SHA256_OF_GIT_SHA256;
  /** the expected id, hex: git's blob id for kinds 1 and 2, the SHA-256 of the bytes otherwise */
  id: string;
  /** kinds 4 and 5: the git blob id recorded for the bytes, hex */
  gitOid?: string;
}

/** The git blob id a segment records for an item ("" for none). */
function recordedGitOid(item: BuildItem): string {
  if (item.kind === EXPECT_GIT_SHA1 || item.kind === EXPECT_GIT_SHA256) return item.id;
  return item.kind === EXPECT_SHA256 ? "" : (item.gitOid ?? "");
}

export interface BuildOptions {
  /** files larger than this are left out (TOO_LARGE) */
  fileLimit: number;
  /** trigrams held at once, summed over files, after which files are DEFERRED */
  pairCap: number;
  /** in the background: on the native module's low-priority threads, or without it on a worker thread */
  background: boolean;
  signal?: AbortSignal;
}

export interface BuildResult {
  /** the segment of the files indexed; null when none was */
  segment: Uint8Array | null;
  /** per item: TEXT, BINARY, MISMATCH, GONE, TOO_LARGE, DEFERRED or FAILED */
  status: Uint8Array;
  /** bytes of the files indexed */
  bytes: number;
}

/**
 * Builds one segment from `items` under `root`: natively when `m` is given; otherwise in TypeScript, on a worker
 * thread of its own in the background (a server without the native module: its calls are never held up by a
 * build), on this thread in the foreground.
 */
export async function buildSegment(m: NativeModule | null, root: string, items: readonly BuildItem[], opts: BuildOptions): Promise<BuildResult> {
  if (m) return buildNatively(m, root, items, opts);
  return opts.background ? buildInWorker(root, items, opts) : buildHere(root, items, opts);
}

/**
 * The TypeScript build holds 12 bytes a pair while it encodes a segment (each file's trigrams, then every pair
 * sorted as one number) where the native build holds 8, besides the worker's own heap: a worker's job takes
 * this share of the pairs a native job may hold. On the release trees: a server's peak RSS 267-283 MB during
 * the build, 25 segments (394 MB and 13 segments with the native jobs' share).
 */
const WORKER_PAIR_SHARE = 2;

/**
 * A worker that builds in the background without the native module: one per indexer (its abort signal), made on
 * first use and ended once it has had no job for BUILDER_IDLE_MS (a pass sends its jobs one after the other, so
 * a pass keeps one worker; its heap goes with it after the pass), so an indexer that closes drops its own jobs only.
 */
interface Builder {
  worker: Worker;
  /** jobs sent and not answered yet, in order (the worker answers in order) */
  waiting: { resolve(r: BuildResult): void; reject(err: unknown): void }[];
  idle?: ReturnType<typeof setTimeout>;
}
const BUILDER_IDLE_MS = 1000;
const builders = new Map<AbortSignal | undefined, Builder>();

function builderFor(signal: AbortSignal | undefined): Builder {
  const known = builders.get(signal);
  if (known) return known;
  const worker = startWorker(workerEntry("repo/trigram-index/build-worker.ts"));
  worker.unref();
  const b: Builder = { worker, waiting: [] };
  const end = (err?: unknown) => {
    clearTimeout(b.idle);
    if (builders.get(signal) === b) builders.delete(signal);
    signal?.removeEventListener("abort", abort);
    worker.terminate();
    for (const w of b.waiting.splice(0)) w.reject(err ?? new Error("index build worker ended"));
  };
  // closed: the worker and every job it holds are dropped
  const abort = () => end(signal?.reason ?? new Error("aborted"));
  signal?.addEventListener("abort", abort, { once: true });
  worker.onmessage = (e: MessageEvent<BuildResult & { message?: string }>) => {
    if (e.data.message !== undefined) return end(new Error(`index build failed: ${e.data.message}`));
    b.waiting.shift()?.resolve({ segment: e.data.segment, status: e.data.status, bytes: e.data.bytes });
    if (b.waiting.length === 0) {
      b.idle = setTimeout(() => end(), BUILDER_IDLE_MS);
      b.idle.unref?.();
    }
  };
  worker.onerror = (e) => end(new Error(`index build worker failed: ${e.message}`));
  builders.set(signal, b);
  return b;
}

function buildInWorker(root: string, items: readonly BuildItem[], opts: BuildOptions): Promise<BuildResult> {
  opts.signal?.throwIfAborted();
  const b = builderFor(opts.signal);
  clearTimeout(b.idle);
  return new Promise<BuildResult>((resolve, reject) => {
    b.waiting.push({ resolve, reject });
    b.worker.postMessage({ root, items, fileLimit: opts.fileLimit, pairCap: Math.max(1, Math.floor(opts.pairCap / WORKER_PAIR_SHARE)) });
  });
}

function expectsOf(m: NativeModule, items: readonly BuildItem[]): Uint8Array {
  if (m.layout.TRI_EXPECT_SIZE !== EXPECT_SIZE) throw new Error(`the native module expects ${m.layout.TRI_EXPECT_SIZE} bytes an item, not ${EXPECT_SIZE}`);
  const out = Buffer.alloc(items.length * EXPECT_SIZE);
  items.forEach((item, i) => {
    out[i * EXPECT_SIZE] = item.kind;
    out.write(item.id, i * EXPECT_SIZE + 1, "hex");
    if (item.kind === EXPECT_SHA256_OF_GIT_SHA1 || item.kind === EXPECT_SHA256_OF_GIT_SHA256) out.write(item.gitOid ?? "", i * EXPECT_SIZE + 33, "hex");
  });
  return out;
}

async function buildNatively(m: NativeModule, root: string, items: readonly BuildItem[], opts: BuildOptions): Promise<BuildResult> {
  const files = items.length;
  const job = m.trigramStart(root, joinPaths(items.map((i) => i.path)), files, expectsOf(m, items), opts.fileLimit, opts.pairCap, BINARY_SNIFF_BYTES, opts.background);
  try {
    await new Promise<void>((resolve, reject) => {
      let backstop: ReturnType<typeof setTimeout> | undefined;
      const settle = (fail?: unknown) => {
        clearTimeout(backstop);
        opts.signal?.removeEventListener("abort", abort);
        if (fail === undefined) resolve();
        else reject(fail);
      };
      const abort = () => settle(opts.signal?.reason ?? new Error("aborted"));
      if (opts.signal?.aborted) return abort();
      opts.signal?.addEventListener("abort", abort, { once: true });
      m.notify(job, () => settle());
      // the segment is the job's last item: asked for again after each WAKE_BACKSTOP_MS without a wake-up
      const look = () => (m.watch(job, files) ? settle() : (backstop = lookLater(look)));
      look();
    });
    const L = m.layout;
    const records = m.trigramRecords(job);
    const status = new Uint8Array(files);
    let bytes = 0;
    for (let i = 0; i < files; i++) {
      const at = i * L.TRIGRAM_RECORD;
      status[i] = records[at + L.TR_STATUS] as number;
      if (status[i] === TEXT || status[i] === BINARY) bytes += records.readDoubleLE(at + L.TR_SIZE);
    }
    const segment = m.trigramSegment(job);
    const indexed = status.some((s) => s === TEXT || s === BINARY);
    return { segment: indexed && segment ? new Uint8Array(segment.buffer, segment.byteOffset, segment.length) : null, status, bytes };
  } finally {
    m.release(job);
  }
}

/** The TypeScript build: the same checks and the same segment, one file at a time on the calling thread. */
export function buildHere(root: string, items: readonly BuildItem[], opts: BuildOptions): BuildResult {
  const status = new Uint8Array(items.length);
  const blobs: SegmentBlob[] = [];
  const seen = new Uint8Array(1 << 21);
  let pairs = 0;
  let bytes = 0;
  items.forEach((item, i) => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
    if (pairs >= opts.pairCap) {
      status[i] = DEFERRED;
      return;
    }
    const read = readItem(root === "" ? item.path : join(root, item.path), opts.fileLimit);
    if (typeof read === "number") {
      status[i] = read;
      return;
    }
    const sha256 = new Bun.CryptoHasher("sha256").update(read).digest();
    if (!holdsExpected(item, read, sha256)) {
      status[i] = MISMATCH;
      return;
    }
    const trigrams = trigramsOf(read, seen);
    status[i] = trigrams ? TEXT : BINARY;
    pairs += trigrams?.length ?? 0;
    bytes += read.length;
    const gitOid = Buffer.from(recordedGitOid(item), "hex");
    blobs.push({ sha256, gitOid, size: read.length, binary: trigrams === null, trigrams: trigrams ?? new Uint32Array(0) });
  });
  return { segment: blobs.length > 0 ? encodeSegment(blobs) : null, status, bytes };
}

function readItem(abs: string, limit: number): Uint8Array | number {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return goneOrFailed(err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return GONE;
    if (st.size > limit) return TOO_LARGE;
    const buf = Buffer.allocUnsafe(st.size);
    let len = 0;
    while (len < st.size) {
      const n = readSync(fd, buf, len, st.size - len, null);
      if (n === 0) break;
      len += n;
    }
    // grown meanwhile: not the size git hashed, so not the blob
    if (len === st.size && readSync(fd, Buffer.alloc(1), 0, 1, null) > 0) return MISMATCH;
    return len === st.size ? buf : MISMATCH;
  } catch (err) {
    return goneOrFailed(err);
  } finally {
    closeSync(fd);
  }
}

function goneOrFailed(err: unknown): number {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return ["ENOENT", "ENOTDIR", "ELOOP", "EISDIR"].includes(code) ? GONE : FAILED;
}

function holdsExpected(item: BuildItem, bytes: Uint8Array, sha256: Buffer): boolean {
  if (item.kind !== EXPECT_GIT_SHA1 && item.kind !== EXPECT_GIT_SHA256) return sha256.toString("hex") === item.id;
  const git = new Bun.CryptoHasher(item.kind === EXPECT_GIT_SHA1 ? "sha1" : "sha256");
  git.update(`blob ${bytes.length}\0`);
  git.update(bytes);
  return git.digest("hex") === item.id;
}
