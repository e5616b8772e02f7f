import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import { ROOT, ancestorsOf, isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import { captureEntries } from "../../repo/capture";
import { touch } from "../live/leases";
import { type BranchFields, type ModeArgs, type ReadContext, branchFields, openReadContext } from "../live/read-context";
import { globFilter } from "./glob";
import { decodeCursor, encodeCursor } from "./page-cursor";
import { refuseNamedUnreadable, unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";

export interface ListArgs extends ModeArgs {
  path?: string;
  recursive?: boolean;
  /**
   * Only files whose name (a glob without "/") or repo-relative path (with
   * "/") matches, at any depth under `path`: grep's `include` rules. Implies a
   * recursive listing of files (no directory entries).
   */
  glob?: string;
  limit?: number;
  /** From a previous answer: continue after the last entry it returned. */
  cursor?: string;
}

export interface ListEntry {
  path: string;
  type: "file" | "dir" | "symlink";
  size?: number;
  blob?: BlobId;
  mode?: string;
}

export type ListResult = BranchFields &
  UnreadableFields & {
    path: string;
    entries: ListEntry[];
    /** Entries of the whole listing, over every page. */
    total: number;
    truncated: boolean;
    /** Present iff more entries remain: pass it back with the same path, recursive and glob. */
    cursor?: string;
  };

export const LIST_DEFAULT_LIMIT = 200;
export const LIST_MAX_LIMIT = 10_000;
/** A page stops before this much JSON of entries (but holds at least one), so an answer stays small for a model. */
export const LIST_BYTE_BUDGET = 60_000;

interface FileLike {
  path: string;
  mode: string;
  blob?: BlobId;
  dir?: boolean;
}

/**
 * snapshot_list: the children of a directory (or, recursively, everything
 * under it; or, with a glob, the matching files under it), files and
 * implicit directories together in byte order, paged like every other
 * reader: `limit` and a byte budget cut a page, and `cursor` continues after
 * the last entry a page returned, so no entry is ever out of reach. A file
 * that cannot be read (for its blob id) is skipped and named in `unreadable`.
 */
export async function listEntries(ws: Workspace, args: ListArgs): Promise<ListResult> {
  const path = parseRepoPath(args.path ?? ".", "path");
  refuseReserved(path);
  const limit = args.limit ?? LIST_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw invalidArgument(`limit must be an integer from 1 to ${LIST_MAX_LIMIT}`, { arg: "limit" });
  }
  if (args.glob !== undefined && (typeof args.glob !== "string" || args.glob === "")) throw invalidArgument("glob must be a non-empty string", { arg: "glob" });
  const matches = args.glob === undefined ? null : globFilter([args.glob], undefined, "glob");
  const ctx = await openReadContext(ws, args, [path]);
  const files: FileLike[] =
    ctx.mode === "snapshot"
      ? ctx.snapshot.entries.filter((e) => isWithin(e.path, path)).map((e) => ({ path: e.path, mode: e.mode ?? "100644", blob: e.blob }))
      : ctx.live.entries.filter((e) => isWithin(e.path, path));
  if (ctx.mode === "worktree") refuseNamedUnreadable(ws.repo, [path], ctx.live.unreadable);
  if (files.length === 0 && ctx.mode === "worktree" && path !== ROOT) {
    throw notFound(`${path} does not exist in the work tree (or is ignored)`, { path });
  }
  const recursive = args.recursive === true;
  const shaped = matches ? files.filter((f) => matches(f.path)) : shape(files, path, recursive);
  const keys = {
    tool: "snapshot_list",
    query: { path, recursive, glob: args.glob ?? null },
    state: ctx.mode === "snapshot" ? ctx.snapshotId : { worktree: ctx.live.fingerprint },
  };
  const after = args.cursor === undefined ? null : decodeCursor(args.cursor, keys, (p): p is string => typeof p === "string");
  let start = 0;
  if (after !== null) while (start < shaped.length && compareUtf8((shaped[start] as FileLike).path, after) <= 0) start++;
  const page = shaped.slice(start, start + limit);
  const described = await describe(ws, ctx, page);
  const { entries, unreadable, last } = withinBudget(page, described);
  if (ctx.mode === "worktree") refuseNamedUnreadable(ws.repo, [path], unreadable);
  const consumed = last === null ? start : start + page.findIndex((p) => p.path === last) + 1;
  if (ctx.mode === "worktree") {
    const exact = files.length === 1 && files[0]?.path === path;
    for (const a of [...ancestorsOf(path), ...(path === ROOT || exact ? [] : [path])]) touch(ctx.lease, a, null);
    for (const e of entries) {
      for (const a of ancestorsOf(e.path)) if (isWithin(a, path) && a !== path) touch(ctx.lease, a, null); // implicit parents
      touch(ctx.lease, e.path, e.blob ?? null);
    }
  }
  // directories the walk could not open are named on the first page
  const skipped = ctx.mode === "worktree" && after === null ? [...ctx.live.unreadable, ...unreadable] : unreadable;
  const result: ListResult = { ...branchFields(ctx), path, entries, total: shaped.length, truncated: consumed < shaped.length, ...unreadableFields(skipped) };
  if (result.truncated && last !== null) result.cursor = encodeCursor(keys, last);
  return result;
}

/**
 * The page's entries in order until LIST_BYTE_BUDGET (at least one entry, so
 * paging always moves on), the unreadable ones among them, and the path of
 * the last page entry taken or skipped (where the next page starts).
 */
function withinBudget(page: FileLike[], described: Map<string, ListEntry | "unreadable">): { entries: ListEntry[]; unreadable: string[]; last: string | null } {
  const entries: ListEntry[] = [];
  const unreadable: string[] = [];
  let used = 0;
  let last: string | null = null;
  for (const p of page) {
    const d = described.get(p.path);
    if (d === undefined) {
      last = p.path; // vanished between the walk and the read
      continue;
    }
    if (d === "unreadable") {
      unreadable.push(p.path);
      last = p.path;
      continue;
    }
    const size = JSON.stringify(d).length + 1;
    if (entries.length > 0 && used + size > LIST_BYTE_BUDGET) break;
    used += size;
    entries.push(d);
    last = p.path;
  }
  return { entries, unreadable, last };
}

/** Direct children (files plus implicit directories) or every file below `dir`, sorted by bytes. */
function shape(files: FileLike[], dir: RepoPath, recursive: boolean): FileLike[] {
  const exact = files.find((f) => f.path === dir);
  if (exact) return [exact];
  const prefix = dir === ROOT ? "" : `${dir}/`;
  const out: FileLike[] = [];
  const seenDirs = new Set<string>();
  for (const f of files) {
    const rest = f.path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (recursive) {
      for (const a of ancestorsOf(rest)) {
        const d = prefix + a;
        if (!seenDirs.has(d)) {
          seenDirs.add(d);
          out.push({ path: d, mode: "040000", dir: true });
        }
      }
      out.push(f);
    } else if (slash < 0) {
      out.push(f);
    } else {
      const d = prefix + rest.slice(0, slash);
      if (!seenDirs.has(d)) {
        seenDirs.add(d);
        out.push({ path: d, mode: "040000", dir: true });
      }
    }
  }
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}

/** Each page entry described (blob and size for files), "unreadable" when its file could not be read, absent when it vanished. */
async function describe(ws: Workspace, ctx: ReadContext, page: FileLike[]): Promise<Map<string, ListEntry | "unreadable">> {
  const blobs = new Map<string, { blob: BlobId; size: number; mode?: string } | "unreadable">();
  if (ctx.mode === "worktree") {
    const files = new Set(page.filter((p) => !p.dir).map((p) => p.path));
    const wanted = ctx.live.entries.filter((e) => files.has(e.path));
    const captured = await captureEntries(ws.repo, ws.blobs, wanted, { gitComparedAt: ctx.live.gitComparedAt });
    for (const c of captured.entries) blobs.set(c.path, { blob: c.blob, size: c.size, mode: c.mode });
    for (const u of captured.unreadable) blobs.set(u, "unreadable");
  } else {
    for (const p of page) if (p.blob) blobs.set(p.path, { blob: p.blob, size: (await ws.blobs.size(p.blob)) ?? 0 });
  }
  const out = new Map<string, ListEntry | "unreadable">();
  for (const p of page) {
    if (p.dir) {
      out.set(p.path, { path: p.path, type: "dir" });
      continue;
    }
    const b = blobs.get(p.path);
    if (b === undefined) continue; // vanished between the walk and the read
    if (b === "unreadable") {
      out.set(p.path, b);
      continue;
    }
    const mode = b.mode ?? p.mode;
    const type = mode === "120000" ? "symlink" : "file";
    out.set(p.path, mode === "100755" || mode === "120000" ? { path: p.path, type, size: b.size, blob: b.blob, mode } : { path: p.path, type, size: b.size, blob: b.blob });
  }
  return out;
}
