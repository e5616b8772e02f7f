import { join, sep } from "node:path";
import { BINARY_SNIFF_BYTES } from "../core/binary";
import { canonicalJson } from "../core/canonical-json";
import { invalidArgument, notFound } from "../core/errors";
import { blobIdFromHex, sha256File, type BlobId } from "../core/hash";
import { ROOT, trustedRepoPath, type RepoPath } from "../core/repo-path";
import type { GitResult } from "../repo/git";
import { nativeModule } from "../repo/native";
import { plainIndexFiles, startIndexListing } from "../repo/tree-scan";
import type { TreeEntry } from "../repo/tree-scan";
import { type GrepCandidate, type GrepMatch, fileCandidate, grep } from "./grep";
import { readFilterOf } from "./grep/engine";
import { GrepPrefetch, type PrefetchEntry } from "./grep/prefetch";
import { compileQuery, DEFAULT_CHUNK_BYTES } from "./grep/query";
import { touch } from "./leases";
import { type BranchFields, type ModeArgs, branchFields, openReadContext } from "./read-context";
import { inScope, parseScopeArg } from "./tree-side";
import type { Workspace } from "./workspace";

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
  /** Engine knobs for tests and the CLI (not tool arguments). */
  timeBudgetMs?: number;
  maxBytes?: number;
}

export type GrepAnswer = BranchFields & {
  matches: GrepMatch[];
  /** Text files under paths that passed include/exclude (binary files among them are skipped, not searched). */
  candidates: number;
  files_searched: number;
  files_matched: number;
  binary_skipped: number;
  matches_omitted: number;
  truncated: boolean;
  cursor?: string;
  timed_out?: boolean;
  note?: string;
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
  const scope = parseScopeArg(args.paths);
  const filter = globFilter(args.include, args.exclude);
  const early = args.mode === "worktree" ? startReadAhead(ws, args, scope, filter) : null;
  try {
    return await search(ws, args, scope, filter, early);
  } finally {
    (await early?.prefetch.catch(() => null))?.release();
  }
}

async function search(
  ws: Workspace,
  args: GrepArgs,
  scope: RepoPath[],
  filter: (path: string) => boolean,
  early: ReadAhead | null,
): Promise<GrepAnswer> {
  const ctx = await openReadContext(ws, args, scope, early?.listing);
  const files: { path: string; mode: string; blob?: BlobId; gitOid?: string }[] = [];
  const listed = ctx.mode === "snapshot" ? ctx.snapshot.entries.map((e) => ({ path: e.path, mode: e.mode ?? "100644", blob: e.blob })) : ctx.live.entries;
  const all = scope.length === 1 && scope[0] === ROOT;
  let inPaths = 0;
  for (const e of listed) {
    if (!all && !inScope(e.path, scope)) continue;
    inPaths++;
    if (e.mode === "120000" || !filter(e.path)) continue;
    files.push(e);
  }
  if (ctx.mode === "worktree" && inPaths === 0 && !all) {
    throw notFound(`${scope.join(", ")}: nothing to search in the work tree (missing or ignored)`, { paths: scope });
  }
  const tree = ctx.mode === "snapshot" ? ctx.snapshotId : { worktree: ctx.live.fingerprint };
  const queryKey = canonicalJson({ exclude: args.exclude ?? [], include: args.include ?? [], paths: scope, tree });
  const seen = new Map<string, BlobId | null>();
  const candidates = ctx.mode === "snapshot" ? snapshotCandidates(ws, files) : liveCandidates(ws, files as TreeEntry[], seen);
  const found = await grep(candidates, {
    pattern: args.pattern,
    fixedStrings: args.fixed_strings,
    caseInsensitive: args.case_insensitive,
    contextLines: args.context_lines,
    maxMatches: args.max_matches,
    maxFiles: args.max_files,
    maxBytes: args.maxBytes,
    cursor: args.cursor,
    queryKey,
    signal: args.signal,
    timeBudgetMs: args.timeBudgetMs,
    prefetch: (await early?.prefetch) ?? undefined,
  });
  if (ctx.mode === "worktree") {
    for (const p of found.searched_paths) touch(ctx.lease, p, seen.has(p) ? seen.get(p)! : await liveBlob(ws, p));
  }
  const { searched_paths: _searched, ...rest } = found;
  return { ...branchFields(ctx), ...rest, candidates: files.length };
}

interface ReadAhead {
  listing: Promise<GitResult>;
  prefetch: Promise<GrepPrefetch | null>;
}

/**
 * A worktree grep in a git repository starts the index listing at once and,
 * as soon as it is in, reads its clean tracked files through the query's
 * literals on the native module (prefetch.ts), while `git status` runs. Not
 * for a page after the first (a cursor resumes mid-walk) nor without the
 * module or literals; at most `max_files` files are read ahead.
 */
function startReadAhead(ws: Workspace, args: GrepArgs, scope: RepoPath[], filter: (path: string) => boolean): ReadAhead | null {
  const m = nativeModule();
  if (!m || !ws.repo.gitDir || args.cursor !== undefined) return null;
  const q = compileQuery({ pattern: args.pattern, fixedStrings: args.fixed_strings, caseInsensitive: args.case_insensitive, queryKey: "", maxFiles: args.max_files });
  const readFilter = readFilterOf(q);
  const listing = startIndexListing(ws.repo, scope);
  const prefix = ws.repo.root.endsWith(sep) ? ws.repo.root : ws.repo.root + sep;
  const prefetch = listing.then((l) => {
    const gitMap = ws.blobs.gitMap.isEmpty() ? null : ws.blobs.gitMap;
    const entries: PrefetchEntry[] = [];
    for (const e of plainIndexFiles(l.stdout)) {
      if (entries.length >= q.maxFiles) break;
      if (!filter(e.path)) continue;
      entries.push({ path: e.path, absPath: prefix + e.path, hash: !gitMap?.has(e.gitOid as string) });
    }
    return GrepPrefetch.start(m, entries, readFilter, BINARY_SNIFF_BYTES);
  });
  prefetch.catch(() => {}); // a failed read ahead surfaces where it is awaited
  return { listing, prefetch };
}

/**
 * include/exclude as Bun globs. Like ripgrep's -g, a glob without "/" matches
 * the file name at any depth ("*.ts"); one with "/" matches the whole
 * repo-relative path ("src/**\/*.ts"). Exclude wins over include.
 */
export function globFilter(include: string[] | undefined, exclude: string[] | undefined): (path: string) => boolean {
  const compile = (globs: string[] | undefined, arg: string) => {
    if (globs === undefined) return null;
    if (!Array.isArray(globs)) throw invalidArgument(`${arg} must be an array of globs`, { arg });
    return globs.map((g) => {
      if (typeof g !== "string" || g === "") throw invalidArgument(`${arg} globs must be non-empty strings`, { arg });
      const glob = new Bun.Glob(g.startsWith("./") ? g.slice(2) : g);
      const whole = g.includes("/");
      return (path: string) => glob.match(whole ? path : path.slice(path.lastIndexOf("/") + 1));
    });
  };
  const inc = compile(include, "include");
  const exc = compile(exclude, "exclude");
  return (path) => (inc === null || inc.some((m) => m(path))) && !(exc ?? []).some((m) => m(path));
}

async function* snapshotCandidates(ws: Workspace, files: { path: string; blob?: BlobId }[]): AsyncGenerator<GrepCandidate> {
  for (const f of files) {
    const blob = f.blob as BlobId;
    const size = await ws.blobs.size(blob);
    if (size === null) throw notFound(`blob ${blob} of ${f.path} is missing from the blob store`, { blob, path: f.path });
    yield {
      path: trustedRepoPath(f.path),
      size,
      open: async () => (size <= DEFAULT_CHUNK_BYTES ? ws.blobs.read(blob) : ws.blobs.stream(blob)),
    };
  }
}

/**
 * Live files as the walk listed them. The engine opens and stats each one
 * itself (on its reader threads) and hashes what it read, so the lease
 * records the blob the search actually saw; a clean tracked file whose sha256
 * is already known costs a map lookup instead. A path that no longer holds a
 * regular file when it is read (deleted, replaced by a directory or a
 * symlink) is searched as empty and touched as absent.
 */
function* liveCandidates(ws: Workspace, files: TreeEntry[], seen: Map<string, BlobId | null>): Generator<GrepCandidate> {
  const prefix = ws.repo.root.endsWith(sep) ? ws.repo.root : ws.repo.root + sep;
  const gitMap = ws.blobs.gitMap.isEmpty() ? null : ws.blobs.gitMap;
  for (const f of files) {
    const candidate = fileCandidate(trustedRepoPath(f.path), prefix + f.path, null);
    const known = f.gitOid && gitMap ? gitMap.get(f.gitOid) : undefined;
    if (known) seen.set(f.path, blobIdFromHex(known.sha256));
    candidate.hashKnown = known !== undefined;
    candidate.onRead = (hex) => seen.set(f.path, hex === null ? null : blobIdFromHex(hex));
    yield candidate;
  }
}

/** A searched file whose read was not seen whole (e.g. cut short): hash it now. */
async function liveBlob(ws: Workspace, path: string): Promise<BlobId | null> {
  try {
    return blobIdFromHex(await sha256File(join(ws.repo.root, path)));
  } catch {
    return null;
  }
}
