/**
 * Reader threads: read small files from disk, drop the ones that cannot
 * match, and scan the rest, in parallel with the main thread.
 *
 * Reading dominates grep over a tree of many small files (open/read/close per
 * file), and ripgrep does it on every core. Candidates that name their file
 * (`absPath`, as fileCandidate's do) are read here in batches: a thread opens
 * each file (and stats it, so the walk need not), reads it into a reused
 * buffer, applies the binary rule and the required literals, and, for a regex
 * it may run, scans the file with regexScan. A file over the limit is
 * streamed through the literal prefilter in pieces, so it comes back only if
 * it may match. Only text files that can match come back, with their match
 * offsets when scanned; the main thread turns those into matches. When asked,
 * a thread also hashes every text file it read whole (SHA-256), for the
 * caller's record of what was searched. The pool remembers each hash with
 * the file's stat stamp (device, inode, size, mtime, ctime, from the fstat of
 * the descriptor that was read), and a later read whose stamp is the same is
 * not hashed again. As in git, a stamp is remembered only when its mtime and
 * ctime were at least RACY_MARGIN_MS older than the read, so a change made
 * within the same clock tick as the read cannot hide behind it.
 *
 * Nothing that can run away runs here: byte search, and regexes whose
 * backtracking regex-analysis.ts bounds, outright or (RegexPlan.quadraticWays)
 * quadratically in the line length, on files where that bound is within
 * READER_TRIES. Any other regex or file is left to the main thread, which
 * hands it to a killable child process.
 */
import { availableParallelism } from "node:os";
import { NOT_REGULAR_FILE } from "../../repo/file-chunks";
import { RACY_MARGIN_MS, sharedHashMemory, type HashMemory } from "./hash-memory";
import { regexScan, type AsciiFold, type RegionScan } from "./regex-scan";
import { readToEnd } from "./read-to-end";
import { startWorker } from "../../repo/worker-start";

export type ReadOutcome =
  | { kind: "binary" }
  /** a text file holding no match: none of the required literals, or nothing found by the scan */
  | { kind: "skip"; sha256?: string }
  /** the file's bytes, not scanned here */
  /**
   * the file's bytes; with `lines`, only its lines that may hold a match (a reader asked for them:
   * NativeReader), back to back, and their 1-based numbers in the file
   */
  | { kind: "bytes"; bytes: Uint8Array; sha256?: string; lines?: Uint32Array }
  /** the file's bytes and its matches (offsets past a UTF-8 BOM, as the main thread's window) */
  | { kind: "scanned"; bytes: Uint8Array; scan: RegionScan; sha256?: string }
  /** larger than the limit and not ruled out by the literals: read it some other way */
  | { kind: "large" }
  /** lines too long to run the scan here (RegexPlan.quadraticWays): scan it some other way */
  | { kind: "long" };

/** What a reader does with a file before handing it over; one object per grep call. */
export interface ReadFilter {
  /** drop files holding none of these */
  literals: Uint8Array[] | null;
  /** and files lacking every string of one of these sets (RegexPlan.required) */
  required: Uint8Array[][];
  /**
   * scan with this planned regex (see RegexScanJob); only for regexes whose
   * backtracking is bounded outright (quadraticWays null) or quadratically
   * (a file over the budget comes back as "long", unscanned)
   */
  scan: { source: string; flags: string; perLine: boolean; quadraticWays: number | null; fold: AsciiFold | null } | null;
  /** files larger than this are not read whole: streamed through the literals, or left to the caller */
  limit: number;
  /**
   * For an ASCII fixed string searched case-insensitively (which has no
   * `literals`): the string in lowercase, to be found ASCII
   * case-insensitively, and the UTF-8 of the characters `iu` also folds its
   * letters to (AsciiFold guards), to be found exactly. A file or a line
   * holding none of them cannot match. Only the native reads use it
   * (nativeLiterals); reader threads read such files whole, as before.
   */
  folded?: { lower: Uint8Array; guards: Uint8Array[] } | null;
}

/** The literals a native read filters with: `literals`, or the folded string and its guards (the first `folded`). */
export function nativeLiterals(filter: ReadFilter): { literals: Uint8Array[] | null; folded: number } {
  if (filter.literals !== null || !filter.folded) return { literals: filter.literals, folded: 0 };
  return { literals: [filter.folded.lower, ...filter.folded.guards], folded: 1 };
}

/** A ReadFilter as posted: literals as plain arrays, which clone several times faster than typed arrays. */
type PostedFilter = Omit<ReadFilter, "literals" | "required"> & { literals: number[][] | null; required: number[][][] };

/** Error code of a path that holds a FIFO, socket or device instead of a regular file (a directory: EISDIR). */
export const NOT_REGULAR = NOT_REGULAR_FILE;

interface Request {
  path: string;
  maxRecords: number;
  /** also return the SHA-256 of a text file's bytes (skip, bytes, scanned) */
  hash: boolean;
  /** with hash: the remembered stamp and hash of the file, if any */
  known: { stamp: string; sha256: string } | undefined;
  filter: ReadFilter;
  done: ReadDone;
}

/** Called once per read, from the reply's message handler: no promise per file. */
export type ReadDone = (err: unknown, outcome: ReadOutcome | null) => void;

/** What the engine reads files through: reader threads (ReaderPool) or the native module (NativeReader). */
export interface FileReader {
  /**
   * Reads one file; `maxRecords` bounds the match offsets a scan returns (the
   * count is always whole); `hash` asks for the SHA-256 of a text file read whole.
   */
  read(path: string, filter: ReadFilter, maxRecords: number, hash: boolean, done: ReadDone): void;
}

interface Slot {
  worker: Worker | null;
  /** batches posted and not answered yet, oldest first (the worker answers in order) */
  busy: Request[][];
  /** the filter the worker holds */
  filter: ReadFilter | null;
}

/**
 * Batches a worker holds at once: the next one is queued before the current
 * one is answered, so a worker never waits for the main thread to get the CPU
 * back (on a loaded machine it often does not at once).
 */
const BATCHES_PER_WORKER = 2;

/**
 * A batch's answer, packed so that posting it is one transfer rather than a
 * clone of many small objects (which costs about a millisecond per batch):
 * per file in `meta`: kind, [when a hash was asked for and the kind is skip,
 * bytes or scanned: offset of the 32-byte SHA-256 in `data`, or -1 when the
 * stamp was the one remembered; after an offset, 1 and the 5 stamp fields
 * when the stamp may be remembered, else 0], offset and length in `data`,
 * count, n, n starts, n ends, n line indexes; kinds are the indexes of KINDS;
 * errors are listed in order apart.
 */
type Reply = { meta: Float64Array; data: ArrayBuffer; errors: { message: string; code?: string }[] };
const KINDS = ["binary", "skip", "bytes", "scanned", "large", "error", "long"] as const;

const BATCH_FILES = 256;
/** worst-case backtracking tries a reader thread spends on one file: well under a second */
export const READER_TRIES = 2e8;

/**
 * Stringified into the worker: self-contained. Messages in: a PostedFilter
 * (kept for the batches after it), or a batch as one string (cloned far
 * faster than arrays): per file "maxRecords,hash,stamp:path" (stamp: the
 * remembered one, or empty), joined by NUL.
 */
function readerMain(scan: typeof regexScan, readWhole: typeof readToEnd, fs: typeof import("node:fs"), sniff: number, budget: number, notRegular: string, racyMs: number): void {
  const [BINARY, SKIP, BYTES, SCANNED, LARGE, ERROR, LONG] = [0, 1, 2, 3, 4, 5, 6];
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
  let buf: Buffer = Buffer.allocUnsafe(1 << 20);
  const cache = new Map<string, RegExp>();
  let filter: PostedFilter | null = null;
  let literals: Uint8Array[] | null = null;
  let required: Uint8Array[][] = [];
  const holds = (view: Buffer): boolean =>
    (!literals || literals.some((lit) => view.indexOf(lit) >= 0)) && required.every((set) => set.some((lit) => view.indexOf(lit) >= 0));
  /** ways x longest line x length (the worst-case tries) within the budget */
  const affordable = (view: Buffer, ways: number | null): boolean => {
    if (ways === null) return true;
    let longest = 0;
    let start = 0;
    for (let nl = view.indexOf(10); nl >= 0; nl = view.indexOf(10, nl + 1)) {
      if (nl - start > longest) longest = nl - start;
      start = nl + 1;
    }
    return ways * Math.max(longest, view.length - start) * view.length <= budget;
  };
  /** searched line by line, only the lines holding a literal: ways x the sum of their squared lengths within the budget */
  const affordableByLine = (view: Buffer, ways: number): boolean => {
    let tries = 0;
    let pos = 0;
    while (pos < view.length) {
      let p = -1;
      for (const lit of literals!) {
        const q = view.indexOf(lit, pos);
        if (q >= 0 && (p < 0 || q < p)) p = q;
      }
      if (p < 0) break;
      const ls = p === 0 ? 0 : view.lastIndexOf(10, p - 1) + 1;
      let le = view.indexOf(10, p);
      if (le < 0) le = view.length;
      tries += ways * (le - ls) * (le - ls);
      if (tries > budget) return false;
      pos = le + 1;
    }
    return true;
  };
  const digestOf = (bytes: Uint8Array): Uint8Array => new Bun.CryptoHasher("sha256").update(bytes).digest();
  /**
   * A file over the limit, in pieces through `buf`: BINARY, SKIP (no literal
   * anywhere; its digest when hashing) or LARGE (a literal is there).
   */
  const stream = (fd: number, hash: boolean): { kind: number; digest: Uint8Array | null } => {
    const hasher = hash ? new Bun.CryptoHasher("sha256") : null;
    const overlap = Math.max(...literals!.map((l) => l.length)) - 1;
    let carry = 0;
    let first = true;
    for (;;) {
      const got = fs.readSync(fd, buf, carry, buf.length - carry, null);
      if (got === 0) break;
      const end = carry + got;
      if (first && buf.subarray(0, Math.min(sniff, end)).indexOf(0) >= 0) return { kind: BINARY, digest: null };
      first = false;
      const piece = buf.subarray(0, end);
      // required sets may lie in different pieces: only the primary literals rule a large file in
      if (literals!.some((lit) => piece.indexOf(lit) >= 0)) return { kind: LARGE, digest: null };
      hasher?.update(buf.subarray(carry, end));
      const keep = Math.min(overlap, end);
      buf.copy(buf, 0, end - keep, end);
      carry = keep;
    }
    return { kind: SKIP, digest: hasher ? hasher.digest() : null };
  };
  (globalThis as unknown as { onmessage: (e: MessageEvent) => void }).onmessage = (event: MessageEvent) => {
    if (typeof event.data !== "string") {
      filter = event.data as PostedFilter;
      literals = filter.literals ? filter.literals.map((l) => new Uint8Array(l)) : null;
      required = filter.required.map((set) => set.map((l) => new Uint8Array(l)));
      if (cache.size > 16) cache.clear();
      return;
    }
    const { limit } = filter!;
    const plan = filter!.scan;
    const meta: number[] = [];
    const errors: { message: string; code?: string }[] = [];
    // allocated on demand: most batches keep nothing, and a buffer per batch is garbage the collector lags behind on
    let data = new Uint8Array(new ArrayBuffer(0));
    let used = 0;
    const keep = (bytes: Uint8Array): number => {
      if (used + bytes.length > data.length) {
        const grown = new Uint8Array(new ArrayBuffer(Math.max(2 * data.length, used + bytes.length, 64 * 1024)));
        grown.set(data.subarray(0, used));
        data = grown;
      }
      data.set(bytes, used);
      used += bytes.length;
      return used - bytes.length;
    };
    for (const entry of (event.data as string).split("\0")) {
      const comma = entry.indexOf(",");
      const comma2 = entry.indexOf(",", comma + 1);
      const colon = entry.indexOf(":", comma2);
      const maxRecords = Number(entry.slice(0, comma));
      const hash = entry.charCodeAt(comma + 1) === 49; // "1"
      const knownStamp = entry.slice(comma2 + 1, colon);
      const path = entry.slice(colon + 1);
      let fd = -1;
      try {
        // never follow a symlink; never wait on a FIFO that replaced the file, never take a terminal
        fd = fs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        const st = fs.fstatSync(fd);
        if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: st.isDirectory() ? "EISDIR" : notRegular });
        const fields = [st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs];
        const same = hash && knownStamp !== "" && knownStamp === fields.join(";");
        const settled = Date.now() - racyMs;
        const rememberable = st.mtimeMs < settled && st.ctimeMs < settled;
        /** a text file's kind and, when asked for, its digest (not for LONG or LARGE: read again elsewhere) */
        const push = (kind: number, digest: () => Uint8Array) => {
          if (!hash) meta.push(kind);
          else if (same) meta.push(kind, -1);
          else if (rememberable) meta.push(kind, keep(digest()), 1, ...fields);
          else meta.push(kind, keep(digest()), 0);
        };
        if (st.size > limit) {
          if (!literals) {
            meta.push(LARGE);
            continue;
          }
          const r = stream(fd, hash && !same);
          if (r.kind === SKIP) push(SKIP, () => r.digest!);
          else meta.push(r.kind);
          continue;
        }
        const whole = readWhole(fs, fd, buf, limit);
        buf = whole.buf;
        const len = whole.len;
        if (len > limit) {
          meta.push(LARGE); // it grew since the stat
          continue;
        }
        const view = buf.subarray(0, len);
        if (view.subarray(0, sniff).indexOf(0) >= 0) {
          meta.push(BINARY);
          continue;
        }
        const sha = () => digestOf(view);
        if (!holds(view)) {
          push(SKIP, sha);
          continue;
        }
        let perLine = plan?.perLine ?? false;
        if (plan && !affordable(view, plan.quadraticWays)) {
          // long lines: still fine when only the lines holding a literal are searched, and those are short
          if (!literals || !affordableByLine(view, plan.quadraticWays!)) {
            meta.push(LONG);
            continue;
          }
          perLine = true;
        }
        if (plan) {
          const bom = view[0] === 0xef && view[1] === 0xbb && view[2] === 0xbf ? 3 : 0;
          const region = view.subarray(bom);
          const job = { source: plan.source, flags: plan.flags, perLine, literals, required, fold: plan.fold, region, maxRecords, wantLines: true };
          const found = scan(job, cache);
          if (found.count === 0) {
            push(SKIP, sha);
            continue;
          }
          push(SCANNED, sha);
          meta.push(keep(view), len, found.count, found.starts.length);
          for (const x of found.starts) meta.push(x); // not spread: there may be more than an argument list holds
          for (const x of found.ends) meta.push(x);
          for (const x of found.lines!) meta.push(x);
          continue;
        }
        push(BYTES, sha);
        meta.push(keep(view), len);
      } catch (err) {
        const e = err as { message?: string; code?: string };
        errors.push({ message: String(e?.message ?? err), code: e?.code });
        meta.push(ERROR);
      } finally {
        if (fd >= 0) fs.closeSync(fd);
      }
    }
    const packed = new Float64Array(meta);
    postMessage({ meta: packed, data: data.buffer, errors }, [packed.buffer, data.buffer]);
  };
}

let readerUrl: string | null = null;

function newReader(sniff: number): Worker {
  // `__name` covers bundlers that wrap functions to keep their names
  readerUrl ??= URL.createObjectURL(
    new Blob(
      [
        `var __name = (f) => f;\n(${readerMain.toString()})(${regexScan.toString()}, ${readToEnd.toString()}, require("node:fs"), ${sniff}, ${READER_TRIES}, ${JSON.stringify(NOT_REGULAR)}, ${RACY_MARGIN_MS});`,
      ],
      { type: "application/javascript" },
    ),
  );
  const worker = startWorker(readerUrl);
  worker.unref();
  return worker;
}

export class ReaderPool implements FileReader {
  private readonly slots: Slot[];
  private queue: Request[] = [];

  constructor(
    size: number,
    private readonly sniff: number,
    private readonly memory: HashMemory,
  ) {
    this.slots = Array.from({ length: Math.max(1, size) }, () => ({ worker: null, busy: [], filter: null }));
  }

  /**
   * Reads one file; `maxRecords` bounds the match offsets a scan returns (the
   * count is always whole); `hash` asks for the SHA-256 of a text file read whole.
   */
  read(path: string, filter: ReadFilter, maxRecords: number, hash: boolean, done: ReadDone): void {
    this.queue.push({ path, maxRecords, hash, known: hash ? this.memory.remembered(path) : undefined, filter, done });
    if (this.queue.length === 1) queueMicrotask(() => this.dispatch());
    else if (this.queue.length >= BATCH_FILES) this.dispatch();
  }

  private dispatch(): void {
    for (let round = 0; round < BATCHES_PER_WORKER; round++) {
      for (const slot of this.slots) {
        if (this.queue.length === 0) return;
        if (slot.busy.length > round) continue;
        const head = this.queue[0]!;
        const take = this.queue.findIndex((r, k) => k >= BATCH_FILES || r.filter !== head.filter);
        this.start(slot, this.queue.splice(0, take < 0 ? this.queue.length : take));
      }
    }
  }

  private start(slot: Slot, batch: Request[]): void {
    if (!slot.worker) {
      let worker: Worker;
      try {
        worker = newReader(this.sniff);
      } catch (err) {
        // no thread to read them (no descriptors to spare for one, EMFILE): each read fails with that, after this
        // dispatch (a failed read may ask for another)
        queueMicrotask(() => {
          for (const r of batch) r.done(err, null);
        });
        return;
      }
      slot.worker = worker;
      slot.filter = null;
      worker.onmessage = (e: MessageEvent<Reply>) => this.finish(slot, worker, e.data);
      worker.onerror = (e: ErrorEvent) => this.crash(slot, worker, e.message);
    }
    slot.busy.push(batch);
    slot.worker.ref();
    const filter = batch[0]!.filter;
    if (slot.filter !== filter) {
      slot.filter = filter;
      const posted: PostedFilter = {
        ...filter,
        literals: filter.literals?.map((l) => [...l]) ?? null,
        required: filter.required.map((set) => set.map((l) => [...l])),
      };
      slot.worker.postMessage(posted);
    }
    let text = "";
    for (const r of batch) text += `${text ? "\0" : ""}${r.maxRecords},${r.hash ? 1 : 0},${r.known ? r.known.stamp : ""}:${r.path}`;
    slot.worker.postMessage(text);
  }

  private finish(slot: Slot, worker: Worker, reply: Reply): void {
    if (slot.worker !== worker || slot.busy.length === 0) return;
    const batch = slot.busy.shift()!;
    if (slot.busy.length === 0) worker.unref();
    const { meta, errors } = reply;
    const data = new Uint8Array(reply.data);
    let at = 0;
    let failed = 0;
    for (const req of batch) {
      const kind = KINDS[meta[at++]!]!;
      let sha256: string | undefined;
      if (req.hash && (kind === "skip" || kind === "bytes" || kind === "scanned")) {
        const d = meta[at++]!;
        if (d < 0) sha256 = req.known!.sha256;
        else {
          sha256 = Buffer.from(data.buffer, data.byteOffset + d, 32).toString("hex");
          if (meta[at++] === 1) {
            this.memory.remember(req.path, meta.subarray(at, at + 5), data.subarray(d, d + 32));
            at += 5;
          }
        }
      }
      if (kind === "error") {
        const e = errors[failed++]!;
        req.done(Object.assign(new Error(e.message), { code: e.code, path: req.path }), null);
      } else if (kind === "bytes" || kind === "scanned") {
        const bytes = data.subarray(meta[at]!, meta[at]! + meta[at + 1]!);
        at += 2;
        if (kind === "bytes") req.done(null, { kind, bytes, sha256 });
        else {
          const count = meta[at++]!;
          const n = meta[at++]!;
          const starts = Array.from(meta.subarray(at, at + n));
          const ends = Array.from(meta.subarray(at + n, at + 2 * n));
          const lines = Array.from(meta.subarray(at + 2 * n, at + 3 * n));
          at += 3 * n;
          req.done(null, { kind, bytes, scan: { starts, ends, count, lines }, sha256 });
        }
      } else if (kind === "skip") req.done(null, { kind, sha256 });
      else req.done(null, { kind });
    }
    this.dispatch();
  }

  private crash(slot: Slot, worker: Worker, message: string): void {
    if (slot.worker !== worker) return;
    const batches = slot.busy;
    slot.worker = null;
    slot.busy = [];
    worker.terminate();
    for (const batch of batches) for (const req of batch) req.done(new Error(`file reader thread failed: ${message}`), null);
    this.dispatch();
  }
}

let shared: ReaderPool | null = null;

/** One pool per process: a thread per core, at most 4 (the main thread searches too). */
export function sharedReaderPool(sniff: number): ReaderPool {
  shared ??= new ReaderPool(Math.min(4, availableParallelism()), sniff, sharedHashMemory());
  return shared;
}
