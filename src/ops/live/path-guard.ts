import { lstatSync, realpathSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { isDescriptorShortage, permissionDenied } from "../../core/errors";
import { isReservedPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import { spelledOnDisk } from "../../repo/name-case";
import type { RepoRoot } from "../../repo/root";

export interface ResolvedTarget {
  /** Absolute path the operation acts on (a symlink inside the root is followed to its target). */
  abs: string;
  /** Repo-relative path of `abs`; differs from the requested path when a symlink was followed, or a case-folding file system holds another spelling. */
  resolved: RepoPath;
  exists: boolean;
}

function within(root: string, abs: string): boolean {
  return abs === root || abs.startsWith(root + sep);
}

/**
 * Spec 3.2's safety steps: the root is canonical; the target is canonicalised
 * (or, for a path that does not exist yet, its nearest existing ancestor is,
 * and the rest joined); anything resolving outside the root, through `..`, an
 * absolute path or a symlink, is PERMISSION_DENIED, as is `.git/` and `.mcp/`.
 * Where the file system folds case, `resolved` is spelled as the directories
 * hold it (repo/name-case.ts).
 */
export function resolveInRoot(repo: RepoRoot, path: RepoPath): ResolvedTarget {
  refuseReserved(path);
  const joined = join(repo.root, path);
  let abs: string;
  let exists = true;
  try {
    abs = realpathSync(joined);
  } catch (err) {
    // realpath opens the path: out of descriptors says nothing about whether it exists (the caller runs again)
    if (isDescriptorShortage(err)) throw err;
    exists = false;
    abs = resolveMissing(repo.root, joined, path);
  }
  if (!within(repo.root, abs)) {
    throw permissionDenied(`${path} resolves outside the repository root (through a symlink)`, { path });
  }
  const found = abs === repo.root ? "." : abs.slice(repo.root.length + 1).split(sep).join("/");
  // on a file system that folds case, the names the directories hold, whatever spelling found them
  const rel = spelledOnDisk(repo.root, found);
  if (rel !== found) abs = join(repo.root, rel);
  if (isReservedPath(rel)) throw permissionDenied(`${path} resolves into ${rel}, which is reserved for git and worksnap state`, { path, resolved: rel });
  return { abs, resolved: rel as RepoPath, exists };
}

/** A path that does not exist: canonicalise the deepest existing ancestor, then append the rest. */
function resolveMissing(root: string, joined: string, path: RepoPath): string {
  // A dangling symlink as the final component would be written through: resolve where it points.
  try {
    const st = lstatSync(joined);
    if (st.isSymbolicLink()) throw permissionDenied(`${path} is a symlink whose target does not exist`, { path });
  } catch (err) {
    if ((err as { code?: string }).code === "PERMISSION_DENIED") throw err;
  }
  const rest: string[] = [];
  let cur = joined;
  for (;;) {
    const parent = dirname(cur);
    rest.unshift(cur.slice(parent.length + 1));
    cur = parent;
    try {
      return join(realpathSync(cur), ...rest);
    } catch (err) {
      if (isDescriptorShortage(err)) throw err;
      if (cur === root || dirname(cur) === cur) return join(root, ...rest);
    }
  }
}
