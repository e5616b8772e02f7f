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
import { BINARY_SNIFF_BYTES } from "../../core/binary";
import { compareUtf8 } from "../../core/byte-order";
import { asWorksnapError, internal } from "../../core/errors";
import { Fifo } from "../../core/fifo";
import { encodeCursor, type CursorPosition } from "./cursor";
import { compileQuery, type CompiledQuery, type GrepOptions } from "./query";
import { nativeModule } from "../../repo/native";
import { sharedHashMemory } from "./hash-memory";
import { NativeReader } from "./native-reader";
import type { GrepPrefetch } from "./prefetch";
import type { Speculation } from "./read-ahead";
import { NOT_REGULAR, nativeLiterals, sharedReaderPool, type FileReader, type ReadFilter, type ReadOutcome } from "./reader-pool";
import { BINARY, NO_MATCH, noMatch, readFilterOf, regionSearch } from "./region-search";
import { RegexSandbox } from "./regex-sandbox";
import type { RegionScan } from "./regex-scan";
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
  /** candidates of the same bytes (GrepCandidate.share) waiting for this entry's outcome */
  followers?: InFlight[];
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
/** Read errors that mean the path no longer holds the file (deleted, replaced by a directory, a symlink not followed). */
const GONE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EISDIR"]);
/**
 * Read errors of a file that is there but cannot be searched: permission
 * denied, or a FIFO, socket or device (ENXIO: a socket; EAGAIN: a FIFO
 * opened without waiting). Such a file is skipped and named, as ripgrep
 * does, and the search goes on.
 */
const UNREADABLE = new Set(["EACCES", "EPERM", NOT_REGULAR, "ENXIO", "ESPIPE", "EAGAIN", "ENODEV"]);

/** Thrown inside the run when the time budget ends it; never escapes grep(). */
const TIME_UP = Symbol("grep time budget");

/** A grep call: the query, and what was read ahead of the walk for it (read-ahead.ts). */
export interface GrepRunOptions extends GrepOptions {
  /** files already being read ahead (a worktree grep's clean tracked files); see prefetch.ts */
  prefetch?: GrepPrefetch;
  /** files that may match, searched ahead of the walk; see Speculation in read-ahead.ts */
  speculation?: Speculation;
  /**
   * The walk's candidates were narrowed already (the trigram index settles most of them): as behind a read
   * ahead, the few files left are read natively and the regex runs on this thread.
   */
  narrowed?: boolean;
}

export async function grep(
  candidates: AsyncIterable<GrepCandidate> | Iterable<GrepCandidate>,
  opts: GrepRunOptions,
): Promise<GrepResult> {
  const q = compileQuery(opts);
  opts.signal?.throwIfAborted();
  const run = new GrepRun(q, opts.signal, opts.prefetch ?? null, opts.speculation ?? null, opts.narrowed ?? false);
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
    unreadable: [],
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
  /** candidates searched through open() after their file on disk failed its check (fromOpen), and those waiting */
  private reopened = 0;
  private readonly reopenWaiters: (() => void)[] = [];
  private readers: FileReader | null = null;
  /** what a reader thread checks to drop a file unread by the main thread */
  private readonly filter: ReadFilter;
  private ended: Promise<never>;
  private readonly lookahead: number;
  private readonly lookaheadBytes: number;
  /** by GrepCandidate.share key: the entry searched for those bytes, and how many candidates with the key are to come */
  private readonly shared = new Map<string, { first: InFlight; left: number }>();

  constructor(
    private readonly q: CompiledQuery,
    private readonly signal: AbortSignal | undefined,
    private readonly prefetch: GrepPrefetch | null,
    private readonly speculation: Speculation | null,
    private readonly narrowed: boolean,
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
    const inFlight = new Fifo<InFlight>();
    const { q, result } = this;
    if (q.resume) result.resumed_from = q.resume.path;
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
          if (waiting.indexed !== undefined) {
            // settled by the trigram index: taken at once, or queued behind what is in flight
            const found = this.indexedOutcome(waiting);
            const skip = q.resume && q.resume.path === waiting.path ? q.resume.skip : 0;
            if (inFlight.length === 0) {
              if (!this.take(waiting, skip, found)) return result;
            } else inFlight.push({ path: waiting.path, skip, size: 0, opened: false, c: waiting, found, error: null, wake: null });
            waiting = null;
            continue;
          }
          const follower = this.follower(waiting);
          if (follower) {
            // the same bytes as a file searched already: its outcome under this path
            if (inFlight.length === 0 && follower.found) {
              if (!this.take(waiting, 0, follower.found)) return result;
            } else inFlight.push(follower);
            waiting = null;
            continue;
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
        if (next) this.cut({ path: next.path, skip: 0 }, `stopped after max_files=${q.maxFiles} files`);
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
          "; pass the cursor to continue. If this repeats at the same file, the pattern backtracks heavily on a long line there: simplify it or use fixed_strings",
      );
      return result;
    } finally {
      Promise.resolve()
        .then(() => it.return?.())
        .catch(() => {});
    }
  }

  /** An entry for a candidate whose bytes an earlier one holds (GrepCandidate.share); null when it is the first. */
  private follower(c: GrepCandidate): InFlight | null {
    if (c.share === undefined || (this.q.resume && this.q.resume.path === c.path && this.q.resume.skip > 0)) return null;
    const s = this.shared.get(c.share.key);
    if (!s) return null;
    if (--s.left <= 0) this.shared.delete(c.share.key);
    const entry: InFlight = { path: c.path, skip: 0, size: 0, opened: false, c, found: null, error: null, wake: null };
    const { first } = s;
    if (first.found) entry.found = underPath(first.found, c.path);
    else if (first.error) entry.error = first.error;
    else (first.followers ??= []).push(entry);
    return entry;
  }

  /** A file the trigram index settled, as a read would have: binary, or text without a match (hashed when wanted). */
  private indexedOutcome(c: GrepCandidate): FileSearch {
    if (c.indexed === "binary") return BINARY;
    return hashWanted(c) ? noMatch(c.indexedSha256?.()) : NO_MATCH;
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
    const high = c.wide ?? HIGH.test(c.path);
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
   * The search of a candidate whose file on disk does not hold its bytes
   * (expectSha256), through its open(): at most `concurrency` at once, as
   * any read through open(), however many files of the lookahead failed their
   * check (an old snapshot of a tree rewritten since).
   */
  private async fromOpen(file: FileJob): Promise<FileSearch> {
    while (this.reopened >= this.q.concurrency) await this.guard(new Promise<void>((resolve) => this.reopenWaiters.push(resolve)));
    this.reopened++;
    try {
      return await this.follow(viaOpen(file), null, false);
    } finally {
      this.reopened--;
      this.reopenWaiters.shift()?.();
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
    if (c.share !== undefined && skip === 0 && c.share.shares > 1) this.shared.set(c.share.key, { first: entry, left: c.share.shares - 1 });
    const file: FileJob = { c, skip, small, byReader, hash: hashWanted(c) || c.expectSha256 !== undefined };
    // the child reads a file of unknown size itself too, and answers "large" for one over chunkBytes; it hashes
    // nothing, so a file that must prove its bytes is read here
    const inChild = byReader && this.sandbox !== null && !this.sandboxBounded && (small || c.size === null) && c.expectSha256 === undefined;
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
      this.readers ??= fileReader(this.filter, this.prefetch !== null || this.narrowed);
      this.readers.read(c.absPath!, this.filter, skip + q.maxMatches, file.hash, (err, read) => {
        if (c.expectSha256 !== undefined && !holdsExpected(c.expectSha256, err, read)) {
          // not the candidate's bytes (changed, gone, unreadable) or not provably so (binary): its own open()
          this.fromOpen(file).then(
            (found) => this.settle(entry, found),
            (e) => this.settle(entry, this.failed(file, e, 0)),
          );
          return;
        }
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
    const followers = entry.followers;
    if (followers === undefined) return;
    entry.followers = undefined;
    for (const f of followers) this.settle(f, "error" in found ? found : underPath(found, f.path));
  }

  /** The entry's outcome once it has one; awaits only when it is not there yet. */
  private outcome(entry: InFlight): FileSearch | Promise<FileSearch> {
    // most entries are settled already (files the index settled, queued behind a read): no closure made for them
    if (entry.found || entry.error) return settledOutcome(entry);
    return this.guard(new Promise<void>((resolve) => (entry.wake = resolve))).then(() => settledOutcome(entry));
  }

  /** A read error: a path that is gone is searched as empty when the caller asked to hear of it. */
  private failed(file: FileJob, err: unknown, kept: number): FileSearch | { error: unknown } {
    if (this.stop.signal.aborted) return { error: this.stop.signal.reason };
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (file.c.onRead !== undefined && code !== undefined && GONE.has(code)) return { ...NO_MATCH, sha256: null, kept };
    if (file.c.onRead !== undefined && code !== undefined && UNREADABLE.has(code)) return { ...NO_MATCH, unreadable: true, kept };
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
      // a file read in windows (or by the regex child) that turned out not to hold the candidate's bytes, or
      // binary, which carries no hash to prove them
      if (c.expectSha256 !== undefined && c.absPath !== undefined && (found.binary || found.sha256 !== c.expectSha256)) {
        this.aheadBytes -= kept;
        return this.fromOpen(file);
      }
      return found;
    } catch (err) {
      if (c.expectSha256 !== undefined && c.absPath !== undefined && !this.stop.signal.aborted) {
        this.aheadBytes -= kept;
        return this.fromOpen(file);
      }
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
    if (found.unreadable) {
      result.unreadable.push(c.path); // not searched, so not touched either
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
    const cap = result.matches.length >= q.maxMatches ? `max_matches=${q.maxMatches}` : `the answer's size limit (${q.maxBytes} bytes of matches)`;
    this.cut({ path: c.path, skip: skip + taken }, `stopped at ${cap}`);
    return false;
  }

  private cut(at: CursorPosition, why: string): void {
    this.result.truncated = true;
    this.result.stopped_at = at.path;
    this.result.cursor = encodeCursor(this.q.identity, at);
    this.result.note = `${why}; more results remain: pass cursor to get them`;
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
 * Native reads where the main thread has little left to scan: a fixed-string
 * search (it only finds the matches in the few files that hold the literal),
 * or any search behind a read ahead or the trigram index, which have ruled
 * out nearly every file already (`narrowed`). Reader threads, which also run
 * the regex on every core, for a regex over files nothing has ruled out yet,
 * and where the module is missing.
 */
function fileReader(filter: ReadFilter, narrowed: boolean): FileReader {
  const m = nativeModule();
  const literal = nativeLiterals(filter).literals !== null || filter.required.length > 0;
  if (m && literal && (filter.scan === null || narrowed)) return new NativeReader(m, BINARY_SNIFF_BYTES, sharedHashMemory());
  return sharedReaderPool(BINARY_SNIFF_BYTES);
}

/** A reader's outcome for a file that must hold the bytes hashing to `sha256`: true when it does, or may (read in windows). */
function holdsExpected(sha256: string, err: unknown, read: ReadOutcome | null): boolean {
  if (err !== null || read === null) return false;
  if (read.kind === "large" || read.kind === "long") return true; // hashed as the windows are searched; follow() checks
  return read.kind !== "binary" && read.sha256 === sha256;
}

/** The file job of a candidate whose file on disk does not hold its bytes: searched through its open(). */
function viaOpen(file: FileJob): FileJob {
  const c = { ...file.c, absPath: undefined, expectSha256: undefined };
  return { ...file, c, byReader: false, hash: hashWanted(c) };
}

/** A candidate's outcome taken by another holding the same bytes: the same matches under its own path. */
function underPath(found: FileSearch, path: string): FileSearch {
  const { kept: _kept, ...rest } = found;
  return found.matches.length === 0 ? rest : { ...rest, matches: found.matches.map((m) => ({ ...m, path })) };
}

/** The caller asked for the SHA-256 of what is searched (GrepCandidate.onRead without hashKnown). */
/** A settled entry's outcome: its search, or its error thrown. */
function settledOutcome(entry: InFlight): FileSearch {
  if (entry.error) throw entry.error.error;
  return entry.found!;
}

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
