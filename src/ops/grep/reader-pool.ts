/**
 * Reader threads: read small files from disk and drop the ones that cannot
 * match, in parallel with the main thread.
 *
 * Reading dominates grep over a tree of many small files (open/read/close per
 * file), and ripgrep does it on every core. Candidates that name their file
 * (`absPath`, as fileCandidate's do) are read here in batches: a thread reads
 * each file into a reused buffer, checks the binary rule and the required
 * literals, and hands back only the bytes of text files that can match. The
 * main thread then searches those as it would any in-memory file.
 *
 * Nothing that can run away runs here: byte search, and for regexes that
 * regex-analysis.ts proves cheap (no unbounded repetition, no backreference)
 * a yes/no test per file. Other regexes never run on these threads.
 */
import { availableParallelism } from "node:os";

export type ReadOutcome =
  | { kind: "binary" }
  /** a text file holding none of the required literals: no match possible */
  | { kind: "skip" }
  | { kind: "bytes"; bytes: Uint8Array }
  /** larger than the limit now (it grew since it was listed): stream it instead */
  | { kind: "large" };

interface Request {
  path: string;
  resolve: (r: ReadOutcome) => void;
  reject: (err: unknown) => void;
}

/** What a reader checks before handing a file over; one object per grep call. */
export interface ReadFilter {
  /** drop files holding none of these */
  literals: Uint8Array[] | null;
  /** drop files in which this regex finds nothing; only for regexes with bounded backtracking and no lookarounds */
  test: { source: string; flags: string } | null;
  /** files larger than this are left to the caller */
  limit: number;
}

interface Batch {
  filter: ReadFilter;
  requests: Request[];
}

interface Slot {
  worker: Worker | null;
  busy: Batch | null;
}

type Reply = { results: ({ kind: string; bytes?: Uint8Array } | { error: string; code?: string })[] };

const BATCH_FILES = 64;

/** Stringified into the worker: self-contained. */
function readerMain(fs: typeof import("node:fs"), sniff: number): void {
  let buf = Buffer.allocUnsafe(1 << 20);
  const regexes = new Map<string, RegExp>();
  // drops a leading BOM, as the main thread's scan does
  const decoder = new TextDecoder();
  (globalThis as unknown as { onmessage: (e: MessageEvent) => void }).onmessage = (event: MessageEvent) => {
    const { paths, filter } = event.data as { paths: string[]; filter: ReadFilter };
    const { literals, limit, test } = filter;
    let re: RegExp | null = null;
    if (test) {
      const key = `${test.flags}/${test.source}`;
      re = regexes.get(key) ?? null;
      if (!re) {
        if (regexes.size > 16) regexes.clear();
        re = new RegExp(test.source, test.flags);
        regexes.set(key, re);
      }
    }
    const results: unknown[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const path of paths) {
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
        if (len > limit) {
          results.push({ kind: "large" });
          continue;
        }
        const view = buf.subarray(0, len);
        if (view.subarray(0, sniff).indexOf(0) >= 0) results.push({ kind: "binary" });
        else if (literals && !literals.some((lit) => view.indexOf(lit) >= 0)) results.push({ kind: "skip" });
        else if (re && !re.test(decoder.decode(view))) results.push({ kind: "skip" });
        else {
          const bytes = new Uint8Array(view);
          transfer.push(bytes.buffer);
          results.push({ kind: "bytes", bytes });
        }
      } catch (err) {
        const e = err as { message?: string; code?: string };
        results.push({ error: String(e?.message ?? err), code: e?.code });
      } finally {
        if (fd >= 0) fs.closeSync(fd);
      }
    }
    postMessage({ results }, transfer);
  };
}

let readerUrl: string | null = null;

function newReader(sniff: number): Worker {
  readerUrl ??= URL.createObjectURL(
    new Blob([`var __name = (f) => f;\n(${readerMain.toString()})(require("node:fs"), ${sniff});`], { type: "application/javascript" }),
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

  read(path: string, filter: ReadFilter): Promise<ReadOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, filter, resolve, reject });
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
    slot.worker.postMessage({ paths: batch.requests.map((r) => r.path), filter: batch.filter });
  }

  private finish(slot: Slot, worker: Worker, reply: Reply): void {
    if (slot.worker !== worker || !slot.busy) return;
    const batch = slot.busy;
    slot.busy = null;
    worker.unref();
    batch.requests.forEach((req, k) => {
      const r = reply.results[k]!;
      if ("error" in r) req.reject(Object.assign(new Error(r.error), { code: r.code, path: req.path }));
      else req.resolve(r as ReadOutcome);
    });
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
