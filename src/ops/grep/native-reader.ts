/**
 * grep's reads through the native module (src/native/scan_job.c): files are
 * opened, sniffed for the binary rule, filtered by the required literals and
 * hashed when asked on the module's threads, and only files that may match
 * come back with their bytes. The same contract as the reader threads
 * (reader-pool.ts), minus running a regex: a file that passes the literals
 * comes back as "bytes", and the engine scans it on the main thread, where
 * the regex guards of engine.ts apply as to any file. So it is used for
 * queries with required literals, which leave few files to scan.
 *
 * Requests are batched into jobs; the module wakes this thread when the
 * first file not yet answered is finished (notify/watch), and the finished
 * prefix is answered in order, a callback per request, no promise per file.
 * While a job runs, a timer looks again every WAKE_BACKSTOP_MS as well: a
 * wake-up that never comes costs that long, never the call's time budget.
 */
import { errnoError, joinPaths, lookLater, type NativeJob, type NativeModule } from "../../repo/native";
import type { HashMemory, Remembered } from "./hash-memory";
import { RACY_MARGIN_MS } from "./hash-memory";
import { NOT_REGULAR, nativeLiterals, type FileReader, type ReadDone, type ReadFilter } from "./reader-pool";

interface Request {
  path: string;
  hash: boolean;
  known: Remembered | undefined;
  done: ReadDone;
}

interface Running {
  job: NativeJob;
  requests: Request[];
  /** requests answered so far, from the first */
  taken: number;
}

/** Files per job: large enough to amortise a job, small enough that the first answers come soon. */
const JOB_FILES = 512;
const KIND_BINARY = 0;
const KIND_SKIP = 1;
const KIND_BYTES = 2;
const KIND_LARGE = 4;

export class NativeReader implements FileReader {
  private queue: Request[] = [];
  private queuedFilter: ReadFilter | null = null;
  private readonly running: Running[] = [];
  private pollQueued = false;
  private backstop: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly m: NativeModule,
    private readonly sniff: number,
    private readonly memory: HashMemory,
    /**
     * Answer a file that may match with only its lines that may hold a match
     * (`lines` in the outcome): for a search without context lines whose
     * literals hold no newline, where a match never spans lines.
     */
    private readonly candidateLines = false,
  ) {}

  read(path: string, filter: ReadFilter, _maxRecords: number, hash: boolean, done: ReadDone): void {
    if (this.queuedFilter !== filter && this.queue.length > 0) this.flush();
    this.queuedFilter = filter;
    this.queue.push({ path, hash, known: hash ? this.memory.remembered(path) : undefined, done });
    if (this.queue.length === 1) queueMicrotask(() => this.flush());
    else if (this.queue.length >= JOB_FILES) this.flush();
  }

  private flush(): void {
    const requests = this.queue;
    const filter = this.queuedFilter;
    if (requests.length === 0 || !filter) return;
    this.queue = [];
    const n = requests.length;
    const flags = new Uint8Array(n);
    const known = new Float64Array(5 * n).fill(Number.NaN);
    for (let i = 0; i < n; i++) {
      const r = requests[i] as Request;
      if (r.hash) flags[i] = 1;
      if (r.known) known.set(r.known.fields, 5 * i);
    }
    const { literals, folded } = nativeLiterals(filter);
    const needleBytes = [...(literals ?? []), ...filter.required.flat()].reduce((sum, l) => sum + l.length, 0);
    let job: NativeJob;
    try {
      job = this.m.scanStart(joinPaths(requests.map((r) => r.path)), n, flags, known, filter.limit, this.sniff, RACY_MARGIN_MS, literals, filter.required, needleBytes, this.candidateLines ? 2 : true, "", folded);
    } catch (err) {
      for (const r of requests) r.done(err, null);
      return;
    }
    this.m.notify(job, () => this.poll());
    this.running.push({ job, requests, taken: 0 });
    if (this.running.length === 1 && !this.pollQueued) {
      this.pollQueued = true;
      queueMicrotask(() => {
        this.pollQueued = false;
        this.poll();
      });
    }
  }

  /**
   * Answers what is finished, in order; then waits (watch) for the first
   * file of the oldest job that is not. Callbacks may read more files (which
   * queues new jobs, never answers), so each request is marked taken before
   * its callback runs.
   */
  private poll(): void {
    while (this.running.length > 0) {
      const run = this.running[0] as Running;
      const ready = this.m.ready(run.job);
      if (ready > run.taken) this.answer(run, ready);
      if (run.taken < run.requests.length) {
        if (this.m.watch(run.job, run.taken)) continue; // finished meanwhile
        this.backstop ??= lookLater(() => {
          this.backstop = null;
          this.poll();
        });
        return;
      }
      this.m.release(run.job);
      this.running.shift();
    }
    if (this.backstop !== null) clearTimeout(this.backstop);
    this.backstop = null;
  }

  private answer(run: Running, upTo: number): void {
    const L = this.m.layout;
    const from = run.taken;
    const [records, files] = this.m.scanCollect(run.job, from, upTo);
    run.taken = upTo;
    for (let i = from; i < upTo; i++) {
      const req = run.requests[i] as Request;
      const at = (i - from) * L.SCAN_RECORD;
      const kind = records[at + L.SR_KIND];
      let sha256: string | undefined;
      if (req.hash && (kind === KIND_SKIP || kind === KIND_BYTES)) {
        if (records[at + L.SR_SAME]) sha256 = req.known!.sha256;
        else if (records[at + L.SR_DIGEST]) {
          sha256 = records.toString("hex", at + L.SR_SHA256, at + L.SR_SHA256 + 32);
          if (records[at + L.SR_REMEMBER]) {
            const fields = new Float64Array(5);
            for (let k = 0; k < 5; k++) fields[k] = records.readDoubleLE(at + L.SR_STAMP + 8 * k);
            this.memory.remember(req.path, fields, records.subarray(at + L.SR_SHA256, at + L.SR_SHA256 + 32));
          }
        }
      }
      if (kind === KIND_BINARY) req.done(null, { kind: "binary" });
      else if (kind === KIND_SKIP) req.done(null, { kind: "skip", sha256 });
      else if (kind === KIND_BYTES) {
        const kept = files[records.readDoubleLE(at + L.SR_OFFSET)] as Buffer;
        if (!this.candidateLines) req.done(null, { kind: "bytes", bytes: kept, sha256 });
        else {
          const n = kept.readUInt32LE(0);
          const lines = new Uint32Array(n);
          for (let k = 0; k < n; k++) lines[k] = kept.readUInt32LE(4 + 4 * k);
          req.done(null, { kind: "bytes", bytes: kept.subarray(4 + 4 * n), sha256, lines });
        }
      } else if (kind === KIND_LARGE) req.done(null, { kind: "large" });
      else req.done(readError(records.readInt32LE(at + L.SR_ERRNO), req.path), null);
    }
  }
}

/** An error as node:fs would throw it; a path holding something other than a regular file is NOT_REGULAR. */
function readError(errno: number, path: string): Error {
  if (errno === -1) return Object.assign(new Error(`${path} is not a regular file`), { code: NOT_REGULAR, path });
  return errnoError(errno, path);
}
