import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import { ROOT, ancestorsOf, isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import { captureEntries } from "../../repo/capture";
import { touch } from "../live/leases";
import { type BranchFields, type ModeArgs, branchFields, openReadContext } from "../live/read-context";
import type { Workspace } from "../workspace";

export interface ListArgs extends ModeArgs {
  path?: string;
  recursive?: boolean;
  limit?: number;
}

export interface ListEntry {
  path: string;
  type: "file" | "dir" | "symlink";
  size?: number;
  blob?: BlobId;
  mode?: string;
}

export type ListResult = BranchFields & {
  path: string;
  entries: ListEntry[];
  total: number;
  truncated: boolean;
};

export const LIST_DEFAULT_LIMIT = 200;
export const LIST_MAX_LIMIT = 10_000;
/** Entries stop being added past this much JSON, so an answer stays small for a model. */
export const LIST_BYTE_BUDGET = 60_000;

interface FileLike {
  path: string;
  mode: string;
}

/**
 * snapshot_list: the children of a directory (or, recursively, everything
 * under it), files and implicit directories together in byte order.
 */
export async function listEntries(ws: Workspace, args: ListArgs): Promise<ListResult> {
  const path = parseRepoPath(args.path ?? ".", "path");
  refuseReserved(path);
  const limit = args.limit ?? LIST_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw invalidArgument(`limit must be an integer from 1 to ${LIST_MAX_LIMIT}`, { arg: "limit" });
  }
  const ctx = await openReadContext(ws, args, [path]);
  const files: FileLike[] =
    ctx.mode === "snapshot"
      ? ctx.snapshot.entries.filter((e) => isWithin(e.path, path)).map((e) => ({ path: e.path, mode: e.mode ?? "100644", blob: e.blob }))
      : ctx.live.entries.filter((e) => isWithin(e.path, path));
  if (files.length === 0 && ctx.mode === "worktree" && path !== ROOT) {
    throw notFound(`${path} does not exist in the work tree (or is ignored)`, { path });
  }
  const shaped = shape(files, path, args.recursive === true);
  const page = shaped.slice(0, limit);
  const entries = withinBudget(await describe(ws, ctx, page));
  if (ctx.mode === "worktree") {
    for (const a of [...ancestorsOf(path), ...(path === ROOT || files.some((f) => f.path === path) ? [] : [path])]) touch(ctx.lease, a, null);
    for (const e of entries) touch(ctx.lease, e.path, e.blob ?? null);
  }
  return { ...branchFields(ctx), path, entries, total: shaped.length, truncated: shaped.length > entries.length };
}

function withinBudget(entries: ListEntry[]): ListEntry[] {
  let used = 0;
  for (let i = 0; i < entries.length; i++) {
    used += JSON.stringify(entries[i]).length + 1;
    if (used > LIST_BYTE_BUDGET) return entries.slice(0, i);
  }
  return entries;
}

/** Direct children (files plus implicit directories) or every file below `dir`, sorted by bytes. */
function shape(files: FileLike[], dir: RepoPath, recursive: boolean): (FileLike & { dir?: boolean })[] {
  const exact = files.find((f) => f.path === dir);
  if (exact) return [exact];
  const prefix = dir === ROOT ? "" : `${dir}/`;
  const out: (FileLike & { dir?: boolean })[] = [];
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

async function describe(
  ws: Workspace,
  ctx: Awaited<ReturnType<typeof openReadContext>>,
  page: (FileLike & { dir?: boolean; blob?: BlobId })[],
): Promise<ListEntry[]> {
  const blobs = new Map<string, { blob: BlobId; size: number; mode?: string }>();
  if (ctx.mode === "worktree") {
    const files = new Set(page.filter((p) => !p.dir).map((p) => p.path));
    const wanted = ctx.live.entries.filter((e) => files.has(e.path));
    const captured = await captureEntries(ws.repo, ws.blobs, wanted, { gitComparedAt: ctx.live.gitComparedAt });
    for (const c of captured.entries) blobs.set(c.path, { blob: c.blob, size: c.size, mode: c.mode });
  } else {
    for (const p of page) if (p.blob) blobs.set(p.path, { blob: p.blob, size: (await ws.blobs.size(p.blob)) ?? 0 });
  }
  const out: ListEntry[] = [];
  for (const p of page) {
    if (p.dir) {
      out.push({ path: p.path, type: "dir" });
      continue;
    }
    const b = blobs.get(p.path);
    if (!b) continue; // vanished between the walk and the read
    const mode = b.mode ?? p.mode;
    const type = mode === "120000" ? "symlink" : "file";
    out.push(mode === "100755" || mode === "120000" ? { path: p.path, type, size: b.size, blob: b.blob, mode } : { path: p.path, type, size: b.size, blob: b.blob });
  }
  return out;
}
