import { join, sep } from "node:path";
import { searchUtf8 } from "../../core/byte-order";
import { canonicalJson } from "../../core/canonical-json";
import { invalidArgument, notFound } from "../../core/errors";
import { blobIdFromHex, type BlobId } from "../../core/hash";
import { sha256OfFile } from "../../repo/file-chunks";
import { ROOT, trustedRepoPath, type RepoPath } from "../../core/repo-path";
import type { GitResult } from "../../repo/git";
import type { GitBlobMap } from "../../repo/git-blob-map";
import { plainIndexPaths, startIndexListing } from "../../repo/tree-scan";
import type { TreeEntry } from "../../repo/tree-scan";
import { DEFAULT_CHUNK_BYTES, type GrepCandidate, type GrepResult, type IndexFilter, type ReadAhead, type Verdict, BINARY, NO_MATCH, READ, fileCandidate, grep, indexFilter, startReadAhead } from "../grep";
import { conversionConfigured, unsettled, untrackedAttributes } from "./grep-index";
import { touch, type Lease } from "../live/leases";
import { type BranchFields, type ModeArgs, branchFields, openReadContext } from "../live/read-context";
import { globFilter } from "./glob";
import { type PathsArg, parsePathsArg } from "./paths-arg";
import { inScope } from "./tree-side";
import type { ShownFile } from "./file";
import { refuseNamedUnreadable, unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";

export interface GrepArgs extends ModeArgs {
  pattern: string;
  fixed_strings?: boolean;
  case_insensitive?: boolean;
  paths?: string[];
  include?: string[];
  exclude?: string[];
  max_files?: number;
  max_matches?: number;
  context_lines?: number;
  cursor?: string;
  signal?: AbortSignal;
  /**
   * Told, in worktree mode, the files whose matches the answer shows, each
   * with the blob of the bytes searched (a caller's pins); files searched
   * without a match shown are not among them.
   */
  onShown?: (files: ShownFile[]) => void;
  /** Engine knobs for tests and the CLI (not tool arguments). */
  timeBudgetMs?: number;
  maxBytes?: number;
}

export { globFilter } from "./glob";

export type GrepAnswer = BranchFields &
  UnreadableFields &
  Omit<GrepResult, "searched_paths" | "unreadable"> & {
    /** Text files under paths that passed include/exclude (binary files among them are skipped, not searched). */
    candidates: number;
  };

/**
 * snapshot_grep: the candidate walk for the grep engine. Candidates are the
 * files under `paths` (ignore rules applied by the live scan; a snapshot holds
 * only what it captured) that pass include/exclude, in UTF-8 byte order;
 * symlinks are never followed nor searched. In worktree mode every file the
 * engine searched is touched on the lease with the blob it read.
 */
export async function snapshotGrep(ws: Workspace, args: GrepArgs): Promise<GrepAnswer> {
  if (typeof args.pattern !== "string" || args.pattern === "") throw invalidArgument("pattern must not be empty", { arg: "pattern" });
  const paths = parsePathsArg(args.paths);
  const scope = paths.scope;
  const globs = globFilter(args.include, args.exclude);
  const inPaths = paths.filter;
  const filter = inPaths === null ? globs : (path: string) => inPaths(path) && globs(path);
  const index = indexFilter(ws.trigrams, fileQueryOf(args));
  const early = args.mode === "worktree" ? startWorktreeReadAhead(ws, args, scope, filter, index) : null;
  try {
    return await search(ws, args, paths, filter, early, index);
  } finally {
    (await early?.prefetch.catch(() => null))?.release();
    early?.speculation?.dispose();
  }
}

async function search(
  ws: Workspace,
  args: GrepArgs,
  paths: PathsArg,
  filter: (path: string) => boolean,
  early: WorktreeReadAhead | null,
  index: IndexFilter | null,
): Promise<GrepAnswer> {
  const scope = paths.scope;
  // live files are taken as their index blobs only where git converts no content (grep-index.ts)
  const convertible = index && args.mode === "worktree" ? conversionConfigured(ws.repo) : Promise.resolve(false);
  const ctx = await openReadContext(ws, args, scope, early?.listing);
  const files: { path: string; mode?: string; blob?: BlobId; gitOid?: string }[] = [];
  const listed: readonly { path: string; mode?: string; blob?: BlobId }[] = ctx.mode === "snapshot" ? ctx.snapshot.entries : ctx.live.entries;
  // a snapshot's files by their blob's handle in the trigram index, kept per loaded snapshot (index-select.ts)
  const handles = ctx.mode === "snapshot" && index ? index.handlesOf(listed) : null;
  const fileHandles: number[] = [];
  const all = scope.length === 1 && scope[0] === ROOT;
  let inPaths = 0;
  for (let i = 0; i < listed.length; i++) {
    const e = listed[i]!;
    if (!all && !inScope(e.path, scope)) continue;
    inPaths++;
    if (e.mode === "120000" || !filter(e.path)) continue;
    files.push(e);
    if (handles) fileHandles.push(handles[i]!);
  }
  if (ctx.mode === "worktree") refuseNamedUnreadable(ws.repo, scope, ctx.live.unreadable);
  if (ctx.mode === "worktree" && inPaths === 0 && !all) {
    throw notFound(`${scope.join(", ")}: nothing to search in the work tree (missing or ignored)`, { paths: scope });
  }
  const tree = ctx.mode === "snapshot" ? ctx.snapshotId : { worktree: ctx.live.fingerprint };
  const queryKey = canonicalJson({ exclude: args.exclude ?? [], include: args.include ?? [], paths: paths.key, tree });
  const touches = ctx.mode === "worktree" ? new LeaseTouches(ws, ctx.lease, files as TreeEntry[]) : null;
  const liveIndex = touches && !(await convertible) && !untrackedAttributes(ctx.mode === "worktree" ? ctx.live.entries : []) ? index : null;
  // the files the index settles are counted and touched here rather than walked by the engine one by one (a
  // whole-tree call settles 90,000); with max_files the engine must count them, so it is handed them
  const settled = touches && liveIndex && args.max_files === undefined ? settledByIndex(files as TreeEntry[], liveIndex) : null;
  const candidates = touches
    ? liveCandidates(ws, files as TreeEntry[], touches, settled ? null : liveIndex, settled)
    : snapshotCandidates(ws, files, index ? fileHandles.map((h) => index.byHandle(h)) : null);
  const found = await grep(candidates, {
    ...fileQueryOf(args),
    maxBytes: args.maxBytes,
    cursor: args.cursor,
    queryKey,
    signal: args.signal,
    timeBudgetMs: args.timeBudgetMs,
    prefetch: (await early?.prefetch) ?? undefined,
    speculation: early?.speculation ?? undefined,
    narrowed: ctx.mode === "snapshot" && index !== null,
  });
  const { searched_paths: _searched, unreadable: skipped, resumed_from, stopped_at, ...rest } = found;
  const span = settled?.span(resumed_from, stopped_at) ?? null;
  if (span) {
    rest.files_searched += span.searched;
    rest.binary_skipped += span.binary;
  }
  await touches?.finish(span);
  // directories the walk could not open are named on the first page only; files as the pages meet them
  const unreadable = ctx.mode === "worktree" && args.cursor === undefined ? [...ctx.live.unreadable, ...skipped] : skipped;
  if (ctx.mode === "worktree") refuseNamedUnreadable(ws.repo, scope, skipped);
  if (ctx.mode === "worktree" && args.onShown) args.onShown(shownFiles(ctx.lease, found.matches));
  return { ...branchFields(ctx), ...rest, candidates: files.length, ...unreadableFields(unreadable) };
}

/** The files of the matches shown, in order, each with the blob the lease observed when it was searched. */
function shownFiles(lease: Lease, matches: { path: string }[]): ShownFile[] {
  const out: ShownFile[] = [];
  const seen = new Set<string>();
  for (const m of matches) {
    if (seen.has(m.path)) continue;
    seen.add(m.path);
    const blob = lease.touched.get(m.path);
    if (typeof blob === "string") out.push({ path: m.path, blob: blob as BlobId });
  }
  return out;
}

/** The grep options that decide what one file's search answers, from the tool's arguments. */
function fileQueryOf(args: GrepArgs) {
  return {
    pattern: args.pattern,
    fixedStrings: args.fixed_strings,
    caseInsensitive: args.case_insensitive,
    contextLines: args.context_lines,
    maxMatches: args.max_matches,
    maxFiles: args.max_files,
  };
}

interface WorktreeReadAhead extends ReadAhead {
  listing: Promise<GitResult>;
}

/**
 * A worktree grep in a git repository starts the index listing at once and
 * hands it to the grep module's read ahead (read-ahead.ts), which reads the
 * clean tracked files while `git status` runs. Not for a page after the
 * first: a cursor resumes mid-walk.
 */
function startWorktreeReadAhead(
  ws: Workspace,
  args: GrepArgs,
  scope: RepoPath[],
  filter: (path: string) => boolean,
  index: IndexFilter | null,
): WorktreeReadAhead | null {
  if (!ws.repo.gitDir || args.cursor !== undefined) return null;
  let listing: Promise<GitResult> | null = null;
  const started = startReadAhead({
    root: ws.repo.root,
    // what the trigram index settles is not read ahead
    listing: () => (listing = startIndexListing(ws.repo, scope)).then((l) => (index ? unsettled(l.stdout, index) : plainIndexPaths(l.stdout))),
    query: fileQueryOf(args),
    filter: args.include !== undefined || args.exclude !== undefined ? filter : null,
    // A store that knows no index blob (cold) needs every file hashed for the lease; one that does, none: the
    // engine reads again the few files whose blob it lacks. Either way no lookup per file holds up the start.
    hashAll: ws.blobs.gitMap.isEmpty(),
  });
  return started && listing ? { ...started, listing } : null;
}

/**
 * A stored snapshot's files, read where reading is cheapest without ever
 * searching other bytes than the snapshot's: from the work tree when the file
 * at the same path still holds the blob (the engine reads and hashes it on its
 * reader threads and checks the SHA-256; GrepCandidate.expectSha256), else
 * from the blob store. A blob several paths hold (release trees side by side,
 * vendored copies) is searched once and its outcome taken by the others
 * (GrepCandidate.share).
 */
function* snapshotCandidates(ws: Workspace, files: { path: string; blob?: BlobId }[], verdicts: readonly Verdict[] | null): Generator<GrepCandidate> {
  const root = ws.repo.root.endsWith("/") ? ws.repo.root : `${ws.repo.root}/`;
  const holders = new Map<BlobId, number>();
  files.forEach((f, i) => {
    if (verdicts === null || verdicts[i] === READ) holders.set(f.blob as BlobId, (holders.get(f.blob as BlobId) ?? 0) + 1);
  });
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as { path: string; blob?: BlobId };
    const blob = f.blob as BlobId;
    const verdict = verdicts === null ? READ : verdicts[i];
    if (verdict !== READ) {
      yield { path: trustedRepoPath(f.path), size: 0, open: () => ws.blobs.read(blob), indexed: verdict === BINARY ? "binary" : "no-match" };
      continue;
    }
    const shares = holders.get(blob) ?? 1;
    // the size is the store's business only when the work tree no longer holds the blob: the walk never waits
    yield {
      path: trustedRepoPath(f.path),
      size: null,
      absPath: root + f.path,
      expectSha256: blob.slice(7),
      ...(shares > 1 ? { share: { key: blob, shares } } : {}),
      open: async () => {
        const size = await ws.blobs.size(blob);
        if (size === null) throw notFound(`blob ${blob} of ${f.path} is missing from the blob store`, { blob, path: f.path });
        return size <= DEFAULT_CHUNK_BYTES ? ws.blobs.read(blob) : ws.blobs.stream(blob);
      },
    };
  }
}

/**
 * Touches the lease with each file the engine searched, in walk order: with
 * the blob of the bytes it searched, the index blob's known sha256 for a
 * clean file it was not asked to hash, null for a path that was gone; and
 * with the files the trigram index settled outside the engine (Settled), in
 * the stretch of the walk the answer covers. The touches are gathered as the
 * engine takes the files and given to the lease at the end of the search in
 * one sorted run (TouchedPaths.addRun): a whole-tree search touches every
 * file. A file whose hash was wanted but not made whole (a search cut short
 * inside a large file) is hashed at the end.
 */
class LeaseTouches {
  private readonly gitMap: GitBlobMap | null;
  private readonly unhashed: string[] = [];
  /** the engine's touches: each file's place in `files`, ascending, and the value recorded */
  private readonly ats: number[] = [];
  private readonly values: (string | null)[] = [];

  constructor(
    private readonly ws: Workspace,
    private readonly lease: Lease,
    private readonly files: readonly TreeEntry[],
  ) {
    this.gitMap = ws.blobs.gitMap.isEmpty() ? null : ws.blobs.gitMap;
  }

  knows(entry: TreeEntry): boolean {
    // a listing kept between calls carries what an earlier workspace's map knew; without a map of its own, this
    // one could not turn the index blob into its sha256 when the lease is read
    if (this.gitMap === null) return false;
    if (entry.storedBlob) return true;
    if (entry.gitOid === undefined || !this.gitMap.has(entry.gitOid)) return false;
    entry.storedBlob = true;
    return true;
  }

  record(file: LiveFile, hex: string | null | undefined): void {
    if (hex === undefined && !file.hashKnown) {
      this.unhashed.push(file.path);
      return;
    }
    this.ats.push(file.at);
    this.values.push(hex === null ? null : hex !== undefined ? blobIdFromHex(hex) : (file.entry.gitOid as string));
  }

  /** Hands the touches to the lease: the engine's, and the settled files of the span that cannot match. */
  async finish(span: SettledSpan | null): Promise<void> {
    const { files, ats, values } = this;
    const runPaths: string[] = [];
    const runValues: (string | null)[] = [];
    let k = 0;
    const engineUpTo = (end: number) => {
      for (; k < ats.length && (ats[k] as number) < end; k++) {
        runPaths.push((files[ats[k] as number] as TreeEntry).path);
        runValues.push(values[k] as string | null);
      }
    };
    if (span) {
      const { verdicts, lo, hi, index } = span;
      for (let i = lo; i < hi; i++) {
        if (verdicts[i] !== NO_MATCH) continue;
        engineUpTo(i);
        const e = files[i] as TreeEntry;
        runPaths.push(e.path);
        // the lease resolves an index blob id through the store's map; a blob the map lacks, by the index's SHA-256
        runValues.push(this.knows(e) ? (e.gitOid as string) : blobIdFromHex(index.sha256OfGitOid(e.gitOid as string)));
      }
    }
    engineUpTo(Number.MAX_SAFE_INTEGER);
    this.lease.touched.addRun(runPaths, runValues);
    for (const path of this.unhashed) {
      let blob: BlobId | null;
      try {
        blob = blobIdFromHex(sha256OfFile(join(this.ws.repo.root, path)));
      } catch {
        blob = null;
      }
      touch(this.lease, path, blob);
    }
  }
}

/**
 * What the trigram index says of each live file for this query, by its place in the walk's files: READ for a
 * file the engine must search (dirty, untracked, not indexed, or it may match), NO_MATCH or BINARY for a clean
 * tracked file whose index blob settles it. The engine is handed only the first kind; the others count as
 * searched (or binary) in the stretch of the walk the answer covers, as they would had the engine taken them.
 */
interface Settled {
  verdicts: Uint8Array;
  /** The walk's files from `resumedFrom` (inclusive) to `stoppedAt` (exclusive), and how many of them are settled. */
  span(resumedFrom: string | undefined, stoppedAt: string | undefined): SettledSpan;
}

/** A stretch of the walk, `files[lo, hi)`, with the settled files in it counted; `index` gives a settled blob's SHA-256. */
interface SettledSpan {
  verdicts: Uint8Array;
  index: IndexFilter;
  lo: number;
  hi: number;
  searched: number;
  binary: number;
}

function settledByIndex(files: readonly TreeEntry[], index: IndexFilter): Settled {
  const verdicts = new Uint8Array(files.length);
  for (let i = 0; i < files.length; i++) verdicts[i] = index.byEntry(files[i] as TreeEntry);
  return {
    verdicts,
    span(resumedFrom, stoppedAt) {
      const lo = resumedFrom === undefined ? 0 : searchUtf8(files, resumedFrom, pathOfEntry);
      const hi = stoppedAt === undefined ? files.length : searchUtf8(files, stoppedAt, pathOfEntry);
      let searched = 0;
      let binary = 0;
      for (let i = lo; i < hi; i++) {
        if (verdicts[i] === NO_MATCH) searched++;
        else if (verdicts[i] === BINARY) binary++;
      }
      return { verdicts, index, lo, hi, searched, binary };
    },
  };
}

const pathOfEntry = (e: TreeEntry) => e.path;

/**
 * A live file as the walk listed it. The engine opens and stats it itself
 * and hashes what it read, so the lease records the blob the search actually
 * saw; a clean tracked file whose sha256 the store knows is not hashed. A
 * path that no longer holds a regular file when it is read (deleted, replaced
 * by a directory or a symlink) is searched as empty and touched as absent.
 * One small object per file the engine is handed, its methods shared.
 */
class LiveFile implements GrepCandidate {
  readonly size = null;
  readonly hashKnown: boolean;
  readonly wide: boolean | undefined;
  /** settled by the trigram index (a clean file: its index blob) */
  readonly indexed: "binary" | "no-match" | undefined;

  constructor(
    readonly path: RepoPath,
    /** its place among the walk's files */
    readonly at: number,
    /** the root with a trailing separator */
    private readonly root: string,
    /** the walk's entry: its index blob id, when clean, names what the lease observed */
    readonly entry: TreeEntry,
    private readonly touches: LeaseTouches,
    private readonly index: IndexFilter | null,
  ) {
    this.hashKnown = touches.knows(entry);
    this.wide = entry.wide;
    const verdict = index !== null ? index.byEntry(entry) : READ;
    this.indexed = verdict === NO_MATCH ? "no-match" : verdict === BINARY ? "binary" : undefined;
  }

  /** The SHA-256 of the index blob, which the trigram index holds (only for a file it settled). */
  indexedSha256(): string {
    return (this.index as IndexFilter).sha256OfGitOid(this.entry.gitOid as string);
  }

  /** Made when asked for: the read ahead settles most files without it. */
  get absPath(): string {
    return this.root + this.path;
  }

  open(): Promise<Uint8Array | ReadableStream<Uint8Array>> {
    return fileCandidate(this.path, this.absPath, null).open();
  }

  onRead(hex: string | null | undefined): void {
    this.touches.record(this, hex);
  }
}

/**
 * The live files as candidates, made one at a time as the engine takes them; with `settled`, only those the
 * trigram index leaves to read. An iterator of its own rather than a generator: the engine reads each result
 * before asking for the next, so one result object serves them all (a generator makes one per file).
 */
function liveCandidates(ws: Workspace, files: TreeEntry[], touches: LeaseTouches, index: IndexFilter | null, settled: Settled | null): Iterable<GrepCandidate> {
  const prefix = ws.repo.root.endsWith(sep) ? ws.repo.root : ws.repo.root + sep;
  const verdicts = settled?.verdicts ?? null;
  let i = 0;
  const result = { done: false, value: undefined as unknown as GrepCandidate };
  const ended: IteratorReturnResult<undefined> = { done: true, value: undefined };
  const it: Iterator<GrepCandidate> = {
    next: () => {
      if (verdicts !== null) while (i < files.length && verdicts[i] !== READ) i++;
      const f = files[i];
      if (f === undefined) return ended;
      result.value = new LiveFile(trustedRepoPath(f.path), i, prefix, f, touches, index);
      i++;
      return result as IteratorYieldResult<GrepCandidate>;
    },
  };
  return { [Symbol.iterator]: () => it };
}
