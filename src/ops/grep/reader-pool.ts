/**
 * Reader threads: read small files from disk, drop the ones that cannot
 * match, and scan the rest, in parallel with the main thread.
 *
 * Reading dominates grep over a tree of many small files (open/read/close per
 * file), and ripgrep does it on every core. Candidates that name their file
 * (`absPath`, as fileCandidate's do) are read here in batches: a thread reads
 * each file into a reused buffer, applies the binary rule and the required
 * literals, and, for a regex it may run, scans the file with regexScan. Only
 * text files that can match come back, with their match offsets when scanned;
 * the main thread turns those into matches.
 *
 * Nothing that can run away runs here: byte search, and regexes whose
 * backtracking regex-analysis.ts bounds, outright or (RegexPlan.quadraticWays)
 * quadratically in the line length, on files where that bound is within
 * READER_TRIES. Any other regex or file is left to the main thread, which
 * hands it to a killable child process.
 */
import { availableParallelism } from "node:os";
import { regexScan, type RegionScan } from "./regex-scan";

export type ReadOutcome =
  | { kind: "binary" }
  /** a text file holding no match: none of the required literals, or nothing found by the scan */
  | { kind: "skip" }
  /** the file's bytes, not scanned here */
  | { kind: "bytes"; bytes: Uint8Array }
  /** the file's bytes and its matches (offsets past a UTF-8 BOM, as the main thread's window) */
  | { kind: "scanned"; bytes: Uint8Array; scan: RegionScan }
  /** larger than the limit now (it grew since it was listed): read it some other way */
  | { kind: "large" }
  /** lines too long to run the scan here (RegexPlan.quadraticWays): scan it some other way */
  | { kind: "long" };

/** What a reader does with a file before handing it over; one object per grep call. */
export interface ReadFilter {
  /** drop files holding none of these */
  literals: Uint8Array[] | null;
  /**
   * scan with this planned regex (see RegexScanJob); only for regexes whose
   * backtracking is bounded outright (quadraticWays null) or quadratically
   * (a file over the budget comes back as "long", unscanned)
   */
  scan: { source: string; flags: string; perLine: boolean; quadraticWays: number | null } | null;
  /** files larger than this are left to the caller */
  limit: number;
}

/** A ReadFilter as posted: literals as plain arrays, which clone several times faster than typed arrays. */
type PostedFilter = Omit<ReadFilter, "literals"> & { literals: number[][] | null };

interface Request {
  path: string;
  maxRecords: number;
  resolve: (r: ReadOutcome) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  filter: ReadFilter;
  requests: Request[];
}

interface Slot {
  worker: Worker | null;
  busy: Batch | null;
}

/**
 * A batch's answer, packed so that posting it is one transfer rather than a
 * clone of many small objects (which costs about a millisecond per batch):
 * per file in `meta`: kind, offset and length in `data`, count, n, n starts,
 * n ends, n line indexes; kinds are the indexes of KINDS; errors are listed
 * in order apart.
 */
type Reply = { meta: Float64Array; data: ArrayBuffer; errors: { message: string; code?: string }[] };
const KINDS = ["binary", "skip", "bytes", "scanned", "large", "error", "long"] as const;

const BATCH_FILES = 64;
/** worst-case backtracking tries a reader thread spends on one file: well under a second */
export const READER_TRIES = 2e8;

/** Stringified into the worker: self-contained. */
function readerMain(scan: typeof regexScan, fs: typeof import("node:fs"), sniff: number, budget: number): void {
  const [BINARY, SKIP, BYTES, SCANNED, LARGE, ERROR, LONG] = [0, 1, 2, 3, 4, 5, 6];
  let buf = Buffer.allocUnsafe(1 << 20);
  const cache = new Map<string, RegExp>();
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
  (globalThis as unknown as { onmessage: (e: MessageEvent) => void }).onmessage = (event: MessageEvent) => {
    const { paths, maxRecords, filter } = event.data as { paths: string[]; maxRecords: number[]; filter: PostedFilter };
    const { limit } = filter;
    const literals = filter.literals ? filter.literals.map((l) => new Uint8Array(l)) : null;
    const plan = filter.scan;
    if (cache.size > 16) cache.clear();
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
    paths.forEach((path, k) => {
      let fd = -1;
      try {
        fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW); // never follow a symlink
        let len = 0;
        for (;;) {
          if (len === buf.length) {
            if (len > limit) break;
            const grown = Buffer.allocUnsafe(buf.length * 2);
            buf.copy(grown, 0, 0, len);
            buf = grown;
          }
          const got = fs.readSync(fd, buf, len, buf.length - len, null);
          if (got === 0) break;
          len += got;
        }
        if (len > limit) return void meta.push(LARGE);
        const view = buf.subarray(0, len);
        if (view.subarray(0, sniff).indexOf(0) >= 0) return void meta.push(BINARY);
        if (literals && !literals.some((lit) => view.indexOf(lit) >= 0)) return void meta.push(SKIP);
        if (plan && !affordable(view, plan.quadraticWays)) return void meta.push(LONG);
        if (plan) {
          const bom = view[0] === 0xef && view[1] === 0xbb && view[2] === 0xbf ? 3 : 0;
          const region = view.subarray(bom);
          const job = { source: plan.source, flags: plan.flags, perLine: plan.perLine, literals, region, maxRecords: maxRecords[k]!, wantLines: true };
          const found = scan(job, cache);
          if (found.count === 0) return void meta.push(SKIP);
          meta.push(SCANNED, keep(view), len, found.count, found.starts.length);
          for (const x of found.starts) meta.push(x); // not spread: there may be more than an argument list holds
          for (const x of found.ends) meta.push(x);
          for (const x of found.lines!) meta.push(x);
          return;
        }
        meta.push(BYTES, keep(view), len);
      } catch (err) {
        const e = err as { message?: string; code?: string };
        errors.push({ message: String(e?.message ?? err), code: e?.code });
        meta.push(ERROR);
      } finally {
        if (fd >= 0) fs.closeSync(fd);
      }
    });
    const packed = new Float64Array(meta);
    postMessage({ meta: packed, data: data.buffer, errors }, [packed.buffer, data.buffer]);
  };
}

let readerUrl: string | null = null;

function newReader(sniff: number): Worker {
  // `__name` covers bundlers that wrap functions to keep their names
  readerUrl ??= URL.createObjectURL(
    new Blob([`var __name = (f) => f;\n(${readerMain.toString()})(${regexScan.toString()}, require("node:fs"), ${sniff}, ${READER_TRIES});`], {
      type: "application/javascript",
    }),
  );
  const worker = new Worker(readerUrl);
  worker.unref();
  return worker;
}

export class ReaderPool {
  private readonly slots: Slot[];
  private queue: (Request & { filter: ReadFilter })[] = [];

  constructor(
    size: number,
    private readonly sniff: number,
  ) {
    this.slots = Array.from({ length: Math.max(1, size) }, () => ({ worker: null, busy: null }));
  }

  /** Reads one file; `maxRecords` bounds the match offsets a scan returns (the count is always whole). */
  read(path: string, filter: ReadFilter, maxRecords: number): Promise<ReadOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, maxRecords, filter, resolve, reject });
      if (this.queue.length === 1) queueMicrotask(() => this.dispatch());
      else if (this.queue.length >= BATCH_FILES) this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.busy) continue;
      const head = this.queue[0]!;
      const take = this.queue.findIndex((r, k) => k >= BATCH_FILES || r.filter !== head.filter);
      const requests = this.queue.splice(0, take < 0 ? this.queue.length : take);
      this.start(slot, { filter: head.filter, requests });
    }
  }

  private start(slot: Slot, batch: Batch): void {
    if (!slot.worker) {
      const worker = newReader(this.sniff);
      slot.worker = worker;
      worker.onmessage = (e: MessageEvent<Reply>) => this.finish(slot, worker, e.data);
      worker.onerror = (e: ErrorEvent) => this.crash(slot, worker, e.message);
    }
    slot.busy = batch;
    slot.worker.ref();
    slot.worker.postMessage({
      paths: batch.requests.map((r) => r.path),
      maxRecords: batch.requests.map((r) => r.maxRecords),
      filter: this.posted(batch.filter),
    });
  }

  private lastFilter: ReadFilter | null = null;
  private lastPosted: PostedFilter | null = null;

  private posted(filter: ReadFilter): PostedFilter {
    if (filter !== this.lastFilter) {
      this.lastFilter = filter;
      this.lastPosted = { ...filter, literals: filter.literals?.map((l) => [...l]) ?? null };
    }
    return this.lastPosted!;
  }

  private finish(slot: Slot, worker: Worker, reply: Reply): void {
    if (slot.worker !== worker || !slot.busy) return;
    const batch = slot.busy;
    slot.busy = null;
    worker.unref();
    const { meta, errors } = reply;
    const data = new Uint8Array(reply.data);
    let at = 0;
    let failed = 0;
    for (const req of batch.requests) {
      const kind = KINDS[meta[at++]!]!;
      if (kind === "error") {
        const e = errors[failed++]!;
        req.reject(Object.assign(new Error(e.message), { code: e.code, path: req.path }));
      } else if (kind === "bytes" || kind === "scanned") {
        const bytes = data.subarray(meta[at]!, meta[at]! + meta[at + 1]!);
        at += 2;
        if (kind === "bytes") req.resolve({ kind, bytes });
        else {
          const count = meta[at++]!;
          const n = meta[at++]!;
          const starts = Array.from(meta.subarray(at, at + n));
          const ends = Array.from(meta.subarray(at + n, at + 2 * n));
          const lines = Array.from(meta.subarray(at + 2 * n, at + 3 * n));
          at += 3 * n;
          req.resolve({ kind, bytes, scan: { starts, ends, count, lines } });
        }
      } else req.resolve({ kind });
    }
    this.dispatch();
  }

  private crash(slot: Slot, worker: Worker, message: string): void {
    if (slot.worker !== worker) return;
    const batch = slot.busy;
    slot.worker = null;
    slot.busy = null;
    worker.terminate();
    for (const req of batch?.requests ?? []) req.reject(new Error(`file reader thread failed: ${message}`));
    this.dispatch();
  }
}

let shared: ReaderPool | null = null;

/** One pool per process: a thread per core, at most 4 (the main thread searches too). */
export function sharedReaderPool(sniff: number): ReaderPool {
  shared ??= new ReaderPool(Math.min(4, availableParallelism()), sniff);
  return shared;
}
