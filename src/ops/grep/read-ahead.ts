/**
 * The read ahead of a worktree grep: before the walk has its candidates (the
 * index listing is in, `git status` still runs), the clean tracked files are
 * read through the query's literals on the native threads (prefetch.ts), and
 * the files that may match are searched ahead of the walk (Speculation). The
 * engine takes what was read and searched for each candidate that needs
 * nothing else, so the main thread's work moves into the time it would spend
 * waiting for git.
 *
 * Policy: only with the native module and for a first page (a cursor resumes
 * mid-walk); at most the query's `maxFiles` files are read ahead; the bytes
 * in flight of the search ahead stay under SPECULATION_BYTES.
 */
import { sep } from "node:path";
import { BINARY_SNIFF_BYTES } from "../../core/binary";
import { internal } from "../../core/errors";
import { nativeModule, type NativeModule } from "../../repo/native";
import { sharedHashMemory } from "./hash-memory";
import { NativeReader } from "./native-reader";
import { GrepPrefetch } from "./prefetch";
import { compileQuery, type CompiledQuery, type GrepOptions } from "./query";
import { nativeLiterals, type FileReader, type ReadFilter } from "./reader-pool";
import { BINARY, noMatch, readFilterOf, regionSearch, searchableAlone } from "./region-search";
import { RegexSandbox } from "./regex-sandbox";
import { searchFile, type FileSearch, type RegionSearch } from "./scan";

export interface ReadAhead {
  /** the clean tracked files being read through the literals; null when the module declined the job */
  prefetch: Promise<GrepPrefetch | null>;
  /** the files that may match, searched while the walk goes on */
  speculation: Speculation;
}

export interface ReadAheadRequest {
  /** the work tree's root */
  root: string;
  /** starts the listing of the index's paths in index order (called only when the read ahead goes ahead) */
  listing: () => Promise<readonly string[]>;
  /** everything that decides one file's answer (not the cursor: a read ahead is for a first page) */
  query: Omit<GrepOptions, "queryKey" | "cursor">;
  /** include/exclude of the walk; null when nothing narrows the listing */
  filter: ((path: string) => boolean) | null;
  /** hash every file read (a store that knows no index blob needs them for the lease) */
  hashAll: boolean;
}

/** Starts the read ahead of a first page, or null when it cannot help (no native module). */
export function startReadAhead(req: ReadAheadRequest): ReadAhead | null {
  const m = nativeModule();
  if (!m) return null;
  const q = compileQuery({ ...req.query, queryKey: "" });
  const readFilter = readFilterOf(q);
  const speculation = new Speculation(q, m, req.hashAll);
  const prefix = req.root.endsWith(sep) ? req.root : req.root + sep;
  const prefetch = req.listing().then((listed) => {
    // the listing's own array when nothing narrows it (its joined bytes are then made once per listing too)
    let paths = listed;
    if (req.filter !== null || listed.length > q.maxFiles) {
      const narrowed: string[] = [];
      for (const path of listed) {
        if (narrowed.length >= q.maxFiles) break;
        if (req.filter === null || req.filter(path)) narrowed.push(path);
      }
      paths = narrowed;
    }
    const started = GrepPrefetch.start(m, req.root, paths, req.hashAll, readFilter, BINARY_SNIFF_BYTES);
    started?.follow((path, size) => speculation.add(path, prefix + path, size));
    return started;
  });
  prefetch.catch(() => {}); // a failed read ahead surfaces where it is awaited
  return { prefetch, speculation };
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

