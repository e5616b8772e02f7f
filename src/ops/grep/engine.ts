/**
 * The grep pipeline: candidates in walk order -> bounded concurrent reads and
 * searches -> results consumed strictly in walk order -> limits and cursor.
 *
 * Reads run ahead of the walk-order consumer, bounded: at most `concurrency`
 * files read through their open(), and at most 1024 files / 64 MB of kept
 * bytes read ahead by reader threads (reader-pool.ts) or regex children.
 * Large files are searched in windows (scan.ts), at most MAX_WINDOWS at once;
 * reader threads stream them through the required literals first, so only
 * those that may match reach a window. So memory does not grow with the
 * tree. A reader thread's outcome that settles a file (binary, no match) is
 * recorded from its callback, without a promise per file: with 100k files,
 * per-file promises and wake-ups were a large share of the main thread's
 * time.
 * Every decision (what is returned, where a page stops, what counts as
 * searched) is taken in walk order, so the answer never depends on which read
 * finished first: paging with the cursor yields exactly the sequence of one
 * large call. Counts (files_searched, files_matched, binary_skipped) are per
 * call; a page that resumes inside a file reads and counts that file again.
 * Files read ahead past the point where a page stops are dropped, not
 * reported: `searched_paths` is the walk-order prefix that the answer covers.
 *
 * Bounded time (the catastrophic-regex guard), in layers:
 * 1. Known exponential patterns are refused up front with INVALID_ARGUMENT
 *    saying why (regex-analysis.ts).
 * 2. Regexes with bounded backtracking (no unbounded repetition, no
 *    backreference, few paths) and fixed strings run anywhere: on the main
 *    thread one window (`chunkBytes`) at a time, and on reader threads.
 * 3. A regex whose backtracking is quadratic in the line length (one
 *    unbounded repetition of one character class, RegexPlan.quadraticWays)
 *    runs in-process only where a worst-case budget of tries holds (short
 *    lines), the main thread's share in slices that yield to the event loop.
 * 4. Everything else runs in child processes of the call's own
 *    (regex-sandbox.ts), and the whole call runs under `timeBudgetMs`. When
 *    the budget runs out the children are killed and the answer so far comes
 *    back with `timed_out`, `truncated` and a cursor that resumes at the file
 *    being searched. The main thread is never blocked by a runaway regex. (A
 *    Worker would not do: JavaScriptCore does not stop a running regex on
 *    terminate; measured with Bun 1.4, the thread keeps running.)
 */
import { BINARY_SNIFF_BYTES, isBinary } from "../../core/binary";
import { compareUtf8 } from "../../core/byte-order";
import { asWorksnapError, internal } from "../../core/errors";
import { encodeCursor, type CursorPosition } from "./cursor";
import { asBuffer, literalScan, longestLine } from "./literal";
import { compileQuery, type CompiledQuery, type GrepOptions } from "./query";
import { nativeModule, type NativeModule } from "../../repo/native";
import { sharedHashMemory } from "./hash-memory";
import { NativeReader } from "./native-reader";
import type { GrepPrefetch } from "./prefetch";
import { NOT_REGULAR, nativeLiterals, sharedReaderPool, type FileReader, type ReadFilter, type ReadOutcome } from "./reader-pool";
import { RegexSandbox } from "./regex-sandbox";
import { regexScan, type RegexScanJob, type RegionScan } from "./regex-scan";
import { searchFile, type ByteSource, type FileSearch, type RegionSearch } from "./scan";
import type { GrepCandidate, GrepMatch, GrepResult } from "./types";

interface InFlight {
  path: string;
  skip: number;
  size: number;
  /** read through the candidate's open() rather than by a reader thread */
  opened: boolean;
  c: GrepCandidate;
  /** the outcome, once there is one (or the error that ends the run) */
  found: FileSearch | null;
  error: { error: unknown } | null;
  /** wakes the consumer waiting for this entry */
  wake: (() => void) | null;
}

interface FileJob {
  c: GrepCandidate;
  skip: number;
  /** size known and at most chunkBytes */
  small: boolean;
  byReader: boolean;
  /** SHA-256 of what is read wanted (GrepCandidate.onRead without hashKnown) */
  hash: boolean;
}

/** Files read ahead by reader threads, and their bytes; open()-read files are capped by `concurrency`. */
const MAX_LOOKAHEAD_FILES = 1024;
/**
 * With a read ahead most files in flight are settled already and cost an
 * entry each; looking further ahead gathers the few that must be read into
 * fewer, larger batches, so the walk-order consumer rarely waits on a read.
 */
const MAX_LOOKAHEAD_FILES_PREFETCHED = 16_384;
/** ... and the files left to read are known early, so fewer bytes ahead keep the pipeline full. */
const MAX_LOOKAHEAD_BYTES_PREFETCHED = 16 * 1024 * 1024;
const MAX_LOOKAHEAD_BYTES = 64 * 1024 * 1024;
/** Files over chunkBytes searched through a window at once (each window is about twice chunkBytes). */
const MAX_WINDOWS = 2;
/** Read errors that mean the path no longer holds a regular file (deleted, replaced, not followed). */
const GONE = new Set(["ENOENT", "ENOTDIR", "ELOOP", NOT_REGULAR]);
/** Worst-case backtracking tries the main thread spends on one region (RegexPlan.quadraticWays): milliseconds. */
const MAIN_TRIES = 2e7;
const BINARY: FileSearch = { binary: true, matches: [], total: 0 };
const NO_MATCH: FileSearch = { binary: false, matches: [], total: 0 };

/** Thrown inside the run when the time budget ends it; never escapes grep(). */
const TIME_UP = Symbol("grep time budget");

export async function grep(
  candidates: AsyncIterable<GrepCandidate> | Iterable<GrepCandidate>,
  opts: GrepOptions,
): Promise<GrepResult> {
  const q = compileQuery(opts);
  opts.signal?.throwIfAborted();
  const run = new GrepRun(q, opts.signal, opts.prefetch ?? null, opts.speculation ?? null);
  try {
    return await run.execute(candidates);
  } finally {
    run.dispose();
  }
}

class GrepRun {
  private readonly stop = new AbortController();
  private readonly sandbox: RegexSandbox | null;
  /** the regex may run in-process on text whose lines are short (RegexPlan.quadraticWays) */
  private readonly sandboxBounded: boolean;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onAbort: () => void;
  private readonly search: RegionSearch;
  private readonly result: GrepResult = {
    matches: [],
    files_searched: 0,
    files_matched: 0,
    binary_skipped: 0,
    matches_omitted: 0,
    truncated: false,
    searched_paths: [],
  };
  private matchBytes = 0;
  private lastPath: string | null = null;
  /** lastPath holds a character whose UTF-16 order differs from its UTF-8 order */
  private lastHigh = false;
  private opened = 0;
  private aheadBytes = 0;
  /** windows in use (MAX_WINDOWS), and the searches waiting for one */
  private windows = 0;
  private readonly windowWaiters: (() => void)[] = [];
  private readers: FileReader | null = null;
  /** what a reader thread checks to drop a file unread by the main thread */
  private readonly filter: ReadFilter;
  private ended: Promise<never>;
  private readonly lookahead: number;
  private readonly lookaheadBytes: number;

  constructor(
    private readonly q: CompiledQuery,
    private readonly signal: AbortSignal | undefined,
    private readonly prefetch: GrepPrefetch | null,
    private readonly speculation: Speculation | null,
  ) {
    const m = q.matcher;
    this.sandbox = m.kind === "regex" && !m.plan.inline ? new RegexSandbox(m.plan) : null;
    this.sandboxBounded = m.kind === "regex" && m.plan.quadraticWays !== null;
    this.search = regionSearch(q, this.sandbox);
    this.filter = readFilterOf(q);
    this.lookahead = prefetch ? MAX_LOOKAHEAD_FILES_PREFETCHED : MAX_LOOKAHEAD_FILES;
    this.lookaheadBytes = prefetch ? MAX_LOOKAHEAD_BYTES_PREFETCHED : MAX_LOOKAHEAD_BYTES;
    this.ended = new Promise<never>((_, reject) => {
      this.stop.signal.addEventListener("abort", () => reject(this.stop.signal.reason), { once: true });
    });
    this.ended.catch(() => {});
    this.onAbort = () => this.halt(signal!.reason ?? new DOMException("grep was aborted", "AbortError"));
    signal?.addEventListener("abort", this.onAbort, { once: true });
    this.timer = setTimeout(() => this.halt(TIME_UP), q.timeBudgetMs);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
    const done = internal("grep finished");
    this.halt(done); // stops read-ahead that is no longer needed
    this.sandbox?.close(done);
  }

  private halt(reason: unknown): void {
    if (this.stop.signal.aborted) return;
    this.stop.abort(reason);
    if (reason === TIME_UP || this.signal?.aborted) this.sandbox?.kill(reason);
  }

  async execute(candidates: AsyncIterable<GrepCandidate> | Iterable<GrepCandidate>): Promise<GrepResult> {
    const it = iterate(candidates);
    const inFlight: InFlight[] = [];
    const { q, result } = this;
    let exhausted = false;
    let waiting: GrepCandidate | null = null; // pulled, not started yet
    let head: InFlight | undefined;
    try {
      for (;;) {
        while (
          !exhausted &&
          inFlight.length < this.lookahead &&
          this.aheadBytes < this.lookaheadBytes &&
          result.files_searched + inFlight.length < q.maxFiles
        ) {
          if (!waiting) {
            const pulled = this.pull(it);
            waiting = pulled instanceof Promise ? await this.guard(pulled) : pulled;
            if (!waiting) {
              exhausted = true;
              break;
            }
          }
          // the read ahead covers files on disk only; asking it twice about a path gives the same answer
          const ahead = this.prefetch?.indexOf(waiting.path);
          // a file the read ahead settled, with nothing before it in flight, is taken at once: most files, no bookkeeping
          const settled = ahead !== undefined && inFlight.length === 0 ? this.prefetch!.settledNow(ahead, hashWanted(waiting)) : null;
          if (settled) {
            if (!this.take(waiting, 0, settled)) return result;
            waiting = null;
            continue;
          }
          if (!this.byReader(waiting) && this.opened >= q.concurrency) break;
          inFlight.push(this.start(waiting, ahead));
          waiting = null;
        }
        head = inFlight.shift();
        if (!head) break;
        const pending = this.outcome(head);
        const found = pending instanceof Promise ? await pending : pending;
        this.aheadBytes -= head.size + (found.kept ?? 0);
        if (head.opened) this.opened--;
        if (!this.take(head.c, head.skip, found)) return result;
      }
      if (!exhausted && result.files_searched >= q.maxFiles) {
        let next = waiting;
        if (!next) {
          const pulled = this.pull(it);
          next = pulled instanceof Promise ? await this.guard(pulled) : pulled;
        }
        if (next) this.cut({ path: next.path, skip: 0 }, `stopped after maxFiles=${q.maxFiles} files`);
      }
      return result;
    } catch (err) {
      if (this.stop.signal.reason !== TIME_UP || err !== TIME_UP) throw err;
      const at = head ? { path: head.path, skip: head.skip } : this.afterLast();
      result.timed_out = true;
      this.cut(
        at,
        `time budget of ${q.timeBudgetMs} ms ran out` +
          (head ? ` while searching ${head.path}` : "") +
          "; pass the cursor to continue. If this repeats at the same file, the pattern backtracks heavily on a long line there: simplify it or use fixedStrings",
      );
      return result;
    } finally {
      Promise.resolve()
        .then(() => it.return?.())
        .catch(() => {});
    }
  }

  /** Awaits `p`, unless the run is stopped first (abort or time budget). */
  private guard<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.ended]);
  }

  /** The next candidate at or after the resume point; synchronous for a synchronous walk. */
  private pull(it: AsyncIterator<GrepCandidate> | Iterator<GrepCandidate>): GrepCandidate | null | Promise<GrepCandidate | null> {
    for (;;) {
      const r = it.next();
      if (r instanceof Promise) {
        return r.then((x: IteratorResult<GrepCandidate>) => {
          const c = this.admit(x);
          return c === undefined ? this.pull(it) : c;
        });
      }
      const c = this.admit(r);
      if (c !== undefined) return c;
    }
  }

  /** The candidate; null at the end of the walk, undefined when it lies before the resume point. */
  private admit(r: IteratorResult<GrepCandidate>): GrepCandidate | null | undefined {
    if (r.done) return null;
    const c = r.value;
    const high = HIGH.test(c.path);
    if (this.lastPath !== null && !(this.lastHigh || high ? compareUtf8(this.lastPath, c.path) < 0 : this.lastPath < c.path)) {
      throw internal(
        `grep candidates must arrive sorted by path (UTF-8 byte order) without repeats: ${JSON.stringify(c.path)} came after ${JSON.stringify(this.lastPath)}`,
      );
    }
    this.lastPath = c.path;
    this.lastHigh = high;
    const resume = this.q.resume;
    return resume && compareUtf8(c.path, resume.path) < 0 ? undefined : c;
  }

  /**
   * Files that name their path are read by reader threads: small ones whole,
   * larger ones streamed through the required literals (without any, a
   * larger file is left to a window).
   */
  private byReader(c: GrepCandidate): boolean {
    return c.absPath !== undefined && (c.size === null || c.size <= this.q.chunkBytes || this.filter.literals !== null);
  }

  /** A window for a file over chunkBytes: at most MAX_WINDOWS at once, so memory stays bounded. */
  private async window<T>(run: () => Promise<T>): Promise<T> {
    while (this.windows >= MAX_WINDOWS) await new Promise<void>((resolve) => this.windowWaiters.push(resolve));
    this.windows++;
    try {
      return await run();
    } finally {
      this.windows--;
      this.windowWaiters.shift()?.();
    }
  }

  /**
   * Starts one file. A reader thread's outcome that settles the file (binary,
   * no match) is recorded on the entry straight from its callback, without a
   * promise per file; anything else continues in follow().
   */
  private start(c: GrepCandidate, ahead: number | undefined): InFlight {
    const { q } = this;
    const skip = q.resume && q.resume.path === c.path ? q.resume.skip : 0;
    const byReader = this.byReader(c);
    const small = c.size !== null && c.size <= q.chunkBytes;
    if (!byReader) this.opened++;
    // bytes a reader keeps are counted once known (FileSearch.kept); a larger file is never kept whole
    const size = small ? c.size! : 0;
    this.aheadBytes += size;
    const entry: InFlight = { path: c.path, skip, size, opened: !byReader, c, found: null, error: null, wake: null };
    const file: FileJob = { c, skip, small, byReader, hash: hashWanted(c) };
    // the child reads a file of unknown size itself too, and answers "large" for one over chunkBytes
    const inChild = byReader && this.sandbox !== null && !this.sandboxBounded && (small || c.size === null);
    const speculated = skip === 0 ? this.speculation?.take(c.path, file.hash) : undefined;
    if (speculated) {
      // searched ahead of the walk; what the speculation could not settle is searched now
      speculated.then((found) => (found ? this.settle(entry, found) : this.read(entry, file, inChild)));
    } else if (ahead === undefined || skip > 0) this.read(entry, file, inChild);
    else {
      // settled by the read ahead when it found the file binary or without the literals
      this.prefetch!.outcome(ahead, file.hash, (found) => {
        if (found) this.settle(entry, found);
        else this.read(entry, file, inChild);
      });
    }
    return entry;
  }

  /** Reads and searches one file: on a reader, in a regex child, or through its open(). */
  private read(entry: InFlight, file: FileJob, inChild: boolean): void {
    const { c, skip, byReader } = file;
    const { q } = this;
    if (byReader && !inChild) {
      this.readers ??= fileReader(this.filter, this.prefetch !== null);
      this.readers.read(c.absPath!, this.filter, skip + q.maxMatches, file.hash, (err, read) => {
        if (err !== null) return this.settle(entry, this.failed(file, err, 0));
        if (read!.kind === "binary") return this.settle(entry, BINARY);
        if (read!.kind === "skip") return this.settle(entry, noMatch(read!.sha256));
        this.follow(file, read!, false).then(
          (found) => this.settle(entry, found),
          (e) => this.settle(entry, this.failed(file, e, 0)),
        );
      });
    } else {
      this.follow(file, null, inChild).then(
        (found) => this.settle(entry, found),
        (e) => this.settle(entry, this.failed(file, e, 0)),
      );
    }
  }

  private settle(entry: InFlight, found: FileSearch | { error: unknown }): void {
    if ("error" in found) entry.error = found;
    else entry.found = found;
    const wake = entry.wake;
    entry.wake = null;
    wake?.();
  }

  /** The entry's outcome once it has one; awaits only when it is not there yet. */
  private outcome(entry: InFlight): FileSearch | Promise<FileSearch> {
    const now = (): FileSearch => {
      if (entry.error) throw entry.error.error;
      return entry.found!;
    };
    if (entry.found || entry.error) return now();
    return this.guard(new Promise<void>((resolve) => (entry.wake = resolve))).then(now);
  }

  /** A read error: a path that is gone is searched as empty when the caller asked to hear of it. */
  private failed(file: FileJob, err: unknown, kept: number): FileSearch | { error: unknown } {
    if (this.stop.signal.aborted) return { error: this.stop.signal.reason };
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (file.c.onRead !== undefined && code !== undefined && GONE.has(code)) return { ...NO_MATCH, sha256: null, kept };
    const e = asWorksnapError(err);
    e.details.path = file.c.path; // the repo path, not the file-system one
    return { error: e };
  }

  /** The rest of a file's search: after a reader thread's outcome, or all of it. */
  private async follow(file: FileJob, read: ReadOutcome | null, inChild: boolean): Promise<FileSearch> {
    const { q } = this;
    const { c, skip, byReader, hash } = file;
    let source: ByteSource | undefined;
    let search = this.search;
    let sha256: string | undefined;
    let kept = 0;
    try {
      if (read) {
        if (read.kind === "bytes" || read.kind === "scanned") {
          sha256 = read.sha256;
          if (c.size === null) this.aheadBytes += kept = read.bytes.length;
        }
        if (read.kind === "scanned") search = scannedAlready(c.path, read.bytes, read.scan);
        inChild = read.kind === "long"; // too long a line to run the regex here: the child reads it itself
        source = read.kind === "large" || read.kind === "long" ? { file: c.absPath! } : read.kind === "binary" || read.kind === "skip" ? undefined : read.bytes;
      }
      if (inChild) {
        // the regex child reads, sniffs and scans it; only a matching file comes back
        const r = await this.sandbox!.runFile(c.absPath!, skip + q.maxMatches, q.chunkBytes);
        if (r.kind === "binary") return BINARY;
        if (r.kind === "scanned" && !r.bytes) return NO_MATCH; // bytes come back whenever something matched
        if (r.kind === "scanned") {
          search = scannedAlready(c.path, r.bytes!, r.scan);
          source = r.bytes!;
        } else source = { file: c.absPath! };
      } else if (!byReader) {
        // a large file on disk is read straight into the window; anything else through open()
        source = c.absPath !== undefined ? { file: c.absPath } : await c.open();
      }
      const options = {
        search,
        skip,
        need: q.maxMatches,
        contextLines: q.contextLines,
        chunkBytes: q.chunkBytes,
        signal: this.stop.signal,
        // whatever this holds is the whole file (a regex child sends a file back whole, and only when it matches)
        hash: hash && sha256 === undefined,
      };
      const windowed = byReader && !(source instanceof Uint8Array);
      const found = windowed ? await this.window(() => searchFile(c.path, source!, options)) : await searchFile(c.path, source!, options);
      if (sha256 !== undefined) found.sha256 = sha256;
      if (kept > 0) found.kept = kept;
      return found;
    } catch (err) {
      const out = this.failed(file, err, kept);
      if ("error" in out) throw out.error;
      return out;
    }
  }

  /** Adds one file's outcome in walk order; false once a cap ends the page. */
  private take(c: GrepCandidate, skip: number, found: FileSearch): boolean {
    const { q, result } = this;
    if (found.binary) {
      result.binary_skipped++;
      return true;
    }
    result.files_searched++;
    result.searched_paths.push(c.path);
    c.onRead?.(found.sha256);
    if (found.total > skip) result.files_matched++;
    let taken = 0;
    for (const m of found.matches) {
      if (result.matches.length >= q.maxMatches) break;
      const size = matchJsonBytes(m);
      // the first match of a page always fits, so paging always moves on
      if (result.matches.length > 0 && this.matchBytes + size > q.maxBytes) break;
      result.matches.push(m);
      this.matchBytes += size;
      taken++;
    }
    const left = found.total - skip - taken;
    if (left <= 0) return true;
    result.matches_omitted += left;
    const cap = result.matches.length >= q.maxMatches ? `maxMatches=${q.maxMatches}` : `maxBytes=${q.maxBytes}`;
    this.cut({ path: c.path, skip: skip + taken }, `stopped at ${cap}`);
    return false;
  }

  private cut(at: CursorPosition, why: string): void {
    this.result.truncated = true;
    this.result.cursor = encodeCursor(this.q.identity, at);
    this.result.note = `${why}; more results remain, pass the cursor to get them`;
  }

  /** Resume point when nothing is in flight: just past the last file taken. */
  private afterLast(): CursorPosition {
    const paths = this.result.searched_paths;
    const last = paths[paths.length - 1];
    if (last === undefined) return this.q.resume ?? { path: "", skip: 0 };
    return { path: last, skip: Number.MAX_SAFE_INTEGER };
  }
}

/**
 * Searches ahead of the walk: while `git status` runs, the files a read ahead
 * found may match (most text files are ruled out by then) are read and
 * searched as a first page would search them (no resume point, the query's
 * maxMatches and context), with their SHA-256 when `hash`. The engine takes
 * such a result for a candidate that needs nothing else (see GrepRun.start):
 * the main thread's search moves into the time it would spend waiting.
 */
export class Speculation {
  private readonly results = new Map<string, Promise<FileSearch | null>>();
  /** files waiting for their turn, and the bytes of those being read and searched (at most SPECULATION_BYTES) */
  private readonly waiting: { path: string; absPath: string; size: number; resolve: (f: FileSearch | null) => void }[] = [];
  private inFlight = 0;
  private readonly stop = new AbortController();
  private readonly sandbox: RegexSandbox | null;
  private readonly search: RegionSearch;
  private readonly filter: ReadFilter;
  private readonly reader: FileReader;

  constructor(
    private readonly q: CompiledQuery,
    m: NativeModule,
    private readonly hash: boolean,
  ) {
    const matcher = q.matcher;
    this.sandbox = matcher.kind === "regex" && !matcher.plan.inline ? new RegexSandbox(matcher.plan) : null;
    this.search = regionSearch(q, this.sandbox);
    this.filter = readFilterOf(q);
    // Only the lines that may match are kept when no context is asked for: a file's matches need nothing else.
    const needles = [...(nativeLiterals(this.filter).literals ?? []), ...this.filter.required.flat()];
    const linesOnly = q.contextLines === 0 && needles.length > 0 && needles.every((n) => !n.includes(10));
    this.reader = new NativeReader(m, BINARY_SNIFF_BYTES, sharedHashMemory(), linesOnly);
  }

  /** Reads and searches a file the walk may offer as `path` (of about `size` bytes), when memory allows. */
  add(path: string, absPath: string, size: number): void {
    if (this.stop.signal.aborted || this.results.has(path)) return;
    this.results.set(path, new Promise<FileSearch | null>((resolve) => this.waiting.push({ path, absPath, size, resolve })));
    this.admit();
  }

  /** Starts waiting files while the bytes in flight stay under SPECULATION_BYTES (one at least). */
  private admit(): void {
    while (this.waiting.length > 0 && !this.stop.signal.aborted) {
      const next = this.waiting[0]!;
      if (this.inFlight > 0 && this.inFlight + next.size > SPECULATION_BYTES) return;
      this.waiting.shift();
      this.inFlight += next.size;
      this.run(next.path, next.absPath).then((found) => {
        this.inFlight -= next.size;
        next.resolve(found);
        this.admit();
      });
    }
  }

  private run(path: string, absPath: string): Promise<FileSearch | null> {
    return new Promise<FileSearch | null>((resolve) => {
      this.reader.read(absPath, this.filter, this.q.maxMatches, this.hash, (err, read) => {
        if (err !== null || read === null) return resolve(null);
        if (read.kind === "binary") return resolve(BINARY);
        if (read.kind === "skip") return resolve(noMatch(read.sha256));
        if (read.kind !== "bytes") return resolve(null);
        // Candidate lines are searched as a file would be: its first bytes are sniffed for NUL and a BOM is
        // dropped. Lines that would trip either (a NUL past the file's sniff, U+FEFF starting a later line) go
        // the usual way.
        if (read.lines && !searchableAlone(read.bytes, read.lines)) return resolve(null);
        const { q } = this;
        const options = { search: this.search, skip: 0, need: q.maxMatches, contextLines: q.contextLines, chunkBytes: q.chunkBytes, signal: this.stop.signal, hash: false };
        searchFile(path, read.bytes, options).then(
          (f) => {
            if (read.sha256 !== undefined) f.sha256 = read.sha256;
            // the lines searched were the file's candidate lines: their numbers in the file
            if (read.lines) for (const match of f.matches) match.line = read.lines[match.line - 1]!;
            resolve(f);
          },
          () => resolve(null),
        );
      });
    });
  }

  /** The result for `path`, once (null: search it the usual way); a result without a hash does not do when `hash`. */
  take(path: string, hash: boolean): Promise<FileSearch | null> | undefined {
    const found = this.results.get(path);
    if (found === undefined) return undefined;
    this.results.delete(path);
    return hash ? found.then((f) => (f && (f.binary || f.sha256 !== undefined) ? f : null)) : found;
  }

  dispose(): void {
    this.stop.abort(internal("grep finished"));
    this.sandbox?.close(internal("grep finished"));
    for (const w of this.waiting.splice(0)) w.resolve(null);
    this.results.clear();
  }
}

/** Bytes of files read and being searched ahead of the walk at once. */
const SPECULATION_BYTES = 16 * 1024 * 1024;

/** What readers check before handing a file over: the query's literals, its regex plan, the size limit. */
export function readFilterOf(q: CompiledQuery): ReadFilter {
  const m = q.matcher;
  if (m.kind === "literal") return { literals: [m.needle], required: [], scan: null, limit: q.chunkBytes };
  return {
    literals: m.plan.literals,
    required: m.plan.required,
    scan:
      m.plan.inline || m.plan.quadraticWays !== null
        ? {
            source: m.plan.source,
            flags: m.plan.flags,
            perLine: m.plan.perLine,
            quadraticWays: m.plan.inline ? null : m.plan.quadraticWays,
            fold: m.plan.fold,
          }
        : null,
    limit: q.chunkBytes,
    folded:
      m.plan.literals === null && m.plan.fold
        ? { lower: new Uint8Array(Buffer.from(m.plan.fold.lower, "latin1")), guards: m.plan.fold.guards.map((g) => new Uint8Array(g)) }
        : null,
  };
}

/**
 * Native reads where the main thread has little left to scan: a fixed-string
 * search (it only finds the matches in the few files that hold the literal),
 * or any search behind a read ahead, which has ruled out nearly every file
 * through the literals already. Reader threads, which also run the regex on
 * every core, for a regex over files nothing has ruled out yet, and where
 * the module is missing.
 */
function fileReader(filter: ReadFilter, prefetched: boolean): FileReader {
  const m = nativeModule();
  const literal = nativeLiterals(filter).literals !== null || filter.required.length > 0;
  if (m && literal && (filter.scan === null || prefetched)) return new NativeReader(m, BINARY_SNIFF_BYTES, sharedHashMemory());
  return sharedReaderPool(BINARY_SNIFF_BYTES);
}

function regionSearch(q: CompiledQuery, sandbox: RegexSandbox | null): RegionSearch {
  const m = q.matcher;
  if (m.kind === "literal") return (region, max) => literalScan(region, m.needle, max);
  const { plan } = m;
  const job = (region: Uint8Array, maxRecords: number): RegexScanJob => ({
    source: plan.source,
    flags: plan.flags,
    perLine: plan.perLine,
    literals: plan.literals,
    required: plan.required,
    fold: plan.fold,
    region,
    maxRecords,
  });
  if (!sandbox) {
    const cache = new Map<string, RegExp>();
    return (region, max) => regexScan(job(region, max), cache);
  }
  const cache = new Map<string, RegExp>();
  const ways = plan.quadraticWays;
  const scan = (region: Uint8Array, max: number) => regexScan(job(region, max), cache);
  return (region, max): RegionScan | Promise<RegionScan> => {
    // the prefilter runs here, so only regions that can match cross the pipe
    const buf = asBuffer(region);
    if (!mayMatch(buf, plan.literals, plan.required)) return { starts: [], ends: [], count: 0 };
    if (ways !== null) {
      const longest = longestLine(buf);
      if (ways * longest * buf.length <= MAIN_TRIES) return scan(region, max);
      // short lines in a big region (a log): bounded slices, yielding between them
      const slice = Math.floor(MAIN_TRIES / (ways * Math.max(1, longest)));
      if (slice >= MIN_SLICE_BYTES) return scanInSlices(buf, slice, max, scan);
    }
    return sandbox.runRegion(region, max);
  };
}

/** The bytes hold one of `literals` (when known) and one string of each required set. */
function mayMatch(buf: Buffer, literals: Uint8Array[] | null, required: Uint8Array[][]): boolean {
  if (literals && !literals.some((lit) => buf.indexOf(lit) >= 0)) return false;
  return required.every((set) => set.some((lit) => buf.indexOf(lit) >= 0));
}

/** Quadratic-worst-case text below this many bytes per bounded slice goes to the regex child instead. */
const MIN_SLICE_BYTES = 16 * 1024;

/**
 * Scans a region in line-aligned slices of about `slice` bytes, letting the
 * event loop run between them, so the time budget and aborts stay prompt.
 * Matches never span lines, so the slices' matches are the region's.
 */
async function scanInSlices(
  buf: Buffer,
  slice: number,
  max: number,
  scan: (region: Uint8Array, max: number) => RegionScan,
): Promise<RegionScan> {
  const out: RegionScan = { starts: [], ends: [], count: 0 };
  for (let from = 0; from < buf.length; ) {
    let to = from + slice >= buf.length ? buf.length : buf.lastIndexOf(10, from + slice - 1) + 1;
    if (to <= from) to = buf.indexOf(10, from) + 1 || buf.length; // a line longer than the slice: take it whole
    const r = scan(buf.subarray(from, to), Math.max(0, max - out.starts.length));
    for (let k = 0; k < r.starts.length; k++) {
      out.starts.push(from + r.starts[k]!);
      out.ends.push(from + r.ends[k]!);
    }
    out.count += r.count;
    from = to;
    if (from < buf.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

/** A text file without a match, with the hash of its bytes when one was made. */
function noMatch(sha256: string | undefined): FileSearch {
  return sha256 === undefined ? NO_MATCH : { ...NO_MATCH, sha256 };
}

/** The caller asked for the SHA-256 of what is searched (GrepCandidate.onRead without hashKnown). */
function hashWanted(c: GrepCandidate): boolean {
  return c.onRead !== undefined && !c.hashKnown;
}

/** Characters whose UTF-16 order differs from their UTF-8 order (surrogates and U+E000..U+FFFF). */
const HIGH = /[\ud800-\uffff]/;

/**
 * The search of a file that a reader thread or regex child already scanned
 * whole: the file fits in one window (it is at most chunkBytes), and that
 * window is exactly what was scanned, the bytes after any UTF-8 BOM.
 */
/** Whether a file's candidate lines, searched on their own, give what the file would (see Speculation.run). */
function searchableAlone(bytes: Uint8Array, lines: Uint32Array): boolean {
  if (isBinary(bytes)) return false;
  return lines[0] === 1 || !(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf);
}

function scannedAlready(path: string, bytes: Uint8Array, scan: RegionScan): RegionSearch {
  const scanned = bytes.length - (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0);
  return (region) => {
    if (region.length !== scanned) throw internal(`${path} was scanned as ${scanned} bytes but its window has ${region.length}`);
    return scan;
  };
}

function matchJsonBytes(m: GrepMatch): number {
  return Buffer.byteLength(JSON.stringify(m), "utf8") + 1;
}

function iterate<T>(source: AsyncIterable<T> | Iterable<T>): AsyncIterator<T> | Iterator<T> {
  return Symbol.asyncIterator in source
    ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (source as Iterable<T>)[Symbol.iterator]();
}
