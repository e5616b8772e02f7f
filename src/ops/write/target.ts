import { modeOfPermissions, modeOfStat, type FileMode } from "../../core/file-mode";
import { closeSync, lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { openRegular, readAll } from "../../repo/file-chunks";
import { join } from "node:path";
import { invalidArgument, permissionDenied } from "../../core/errors";
import { ROOT, ancestorsOf, baseName, isReservedPath, parentOf, type RepoPath } from "../../core/repo-path";
import type { RepoRoot } from "../../repo/root";
import type { PathState } from "./edit-recorder";
import { resolveInRoot } from "../live/path-guard";

/**
 * Where a work-tree write lands. `follow` decides what a symlink as the last
 * component means: followed (write_file writes to the link's target, which
 * must lie inside the root), or the link itself (patches, delete and move act
 * on the link as git and rm/mv do; its text is its content, mode 120000).
 * Directory symlinks on the way are always followed, and must stay inside the
 * root (spec 3.2: canonicalise, then refuse anything outside, `.git`, `.mcp`).
 */
export interface WorktreeTarget {
  /** The path as asked for. */
  requested: RepoPath;
  /** Repo-relative path of what is acted on; differs from `requested` when a symlink was followed. */
  path: RepoPath;
  abs: string;
  kind: "missing" | "file" | "symlink" | "dir" | "other";
  stat: Stats | null;
}

/**
 * Resolutions of parent directories, shared by the paths of one change set
 * (500 files in 10 directories resolve 10 directories). Only for one pass,
 * made within moments under the work-tree lock; never kept across calls.
 */
export type ParentCache = Map<RepoPath, { abs: string; path: RepoPath }>;

export function resolveWorktreeTarget(repo: RepoRoot, requested: RepoPath, follow: boolean, parents?: ParentCache): WorktreeTarget {
  if (requested === ROOT) throw invalidArgument("the repository root is not a file; name a path inside it", { path: requested });
  if (isReservedPath(requested)) throw permissionDenied(`${requested} is reserved for git and worksnap state`, { path: requested });
  let abs: string;
  let path: RepoPath;
  if (follow) {
    ({ abs, path } = resolveFollowing(repo, requested));
    if (path === ROOT) throw invalidArgument(`${requested} resolves to the repository root`, { path: requested });
  } else {
    const parent = parentOf(requested);
    const name = baseName(requested);
    let p = parent === ROOT ? { abs: repo.root, path: ROOT } : parents?.get(parent);
    if (!p) {
      p = resolveFollowing(repo, parent);
      parents?.set(parent, p);
    }
    abs = join(p.abs, name);
    path = (p.path === ROOT ? name : `${p.path}/${name}`) as RepoPath;
  }
  if (isReservedPath(path)) {
    throw permissionDenied(`${requested} resolves into ${path}, which is reserved for git and worksnap state`, { path: requested, resolved: path });
  }
  const stat = lstatOrNull(abs);
  return { requested, path, abs, kind: kindOf(stat), stat };
}

/**
 * Canonicalises a path with every symlink followed (spec 3.2 steps 1-6): an
 * existing path through resolveInRoot; a missing one through its deepest
 * existing ancestor, with the remaining names appended. A dangling symlink on
 * the way is refused: where it would lead is not known to be inside the root.
 */
function resolveFollowing(repo: RepoRoot, requested: RepoPath): { abs: string; path: RepoPath } {
  const ancestors = [...ancestorsOf(requested), requested];
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as RepoPath;
    const abs = join(repo.root, a);
    if (!existsFollowing(abs)) {
      if (lstatOrNull(abs)?.isSymbolicLink()) throw permissionDenied(`${a} is a symlink whose target does not exist`, { path: requested, symlink: a });
      continue;
    }
    const r = resolveInRoot(repo, a);
    const rest = requested.slice(a.length + 1);
    if (rest === "") return { abs: r.abs, path: r.resolved };
    return { abs: join(r.abs, rest), path: (r.resolved === ROOT ? rest : `${r.resolved}/${rest}`) as RepoPath };
  }
  return { abs: join(repo.root, requested), path: requested };
}

function existsFollowing(abs: string): boolean {
  try {
    realpathSync(abs);
    return true;
  } catch {
    return false;
  }
}

function kindOf(st: Stats | null): WorktreeTarget["kind"] {
  if (!st) return "missing";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "dir";
  return "other";
}

export function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

/** A file's or symlink's content and git mode; null when absent. Directories are refused. */
export function readTargetState(t: WorktreeTarget): PathState {
  if (t.kind === "missing") return null;
  if (t.kind === "symlink") return { bytes: new Uint8Array(readlinkSync(t.abs, { encoding: "buffer" })), mode: "120000" };
  if (t.kind === "file") {
    // never waiting on a FIFO that took the file's place since the lstat (openRegular); a view, not a copy
    const { fd, stat } = openRegular(t.abs);
    try {
      const buf = readAll(fd, stat.size);
      return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), mode: targetMode(t.stat as Stats) };
    } finally {
      closeSync(fd);
    }
  }
  if (t.kind === "dir") throw invalidArgument(`${t.requested} is a directory, not a file`, { path: t.requested });
  throw invalidArgument(`${t.requested} is not a regular file or symlink`, { path: t.requested });
}

/**
 * What identifies one version of a file on disk without reading it: a write
 * changes its mtime and ctime (a rename over it, its inode). Two reads with
 * the same stamp are taken to have read the same bytes; like git's index, a
 * rewrite to the same size within one timestamp tick of the file system is
 * not seen.
 */
export function statStamp(st: Stats | null): string | null {
  if (!st) return null;
  return `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** A target's mode: it is a file or a symbolic link (readTargetState refuses anything else). */
function targetMode(st: Stats): FileMode {
  return modeOfStat(st) ?? modeOfPermissions(st.mode);
}

/**
 * The nearest existing ancestor of `path` that is not a directory (a file in
 * the way of creating `path`), or null. `removed` are paths the same change
 * set deletes first, so they no longer block.
 */
export function blockingAncestor(root: string, path: RepoPath, removed: Set<string>): RepoPath | null {
  const ancestors = ancestorsOf(path);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as RepoPath;
    const st = lstatOrNull(join(root, a));
    if (!st) continue;
    if (st.isDirectory()) return null;
    return removed.has(a) ? null : a; // a file or a symlink: not a directory to create in
  }
  return null;
}

/**
 * Permission bits for a file written with git mode `mode`: an existing
 * file keeps its exact bits unless its executable state changes (then x
 * follows r, as git does); a new file gets 0644 or 0755.
 */
export function permFor(mode: FileMode, existingPerm: number | null): number {
  const exec = mode === "100755";
  if (existingPerm === null) return exec ? 0o755 : 0o644;
  const wasExec = (existingPerm & 0o111) !== 0;
  if (wasExec === exec) return existingPerm;
  return exec ? existingPerm | ((existingPerm & 0o444) >> 2) : existingPerm & ~0o111;
}
