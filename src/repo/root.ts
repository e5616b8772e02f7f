import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { invalidArgument, notFound } from "../core/errors";
import { gitSync } from "./git";

/** The repository a server or command works on. `root` is canonical (symlinks resolved). */
export interface RepoRoot {
  root: string;
  /** Absolute git dir when the root is the top of a git work tree, else null. */
  gitDir: string | null;
  stateDir: string;
}

/**
 * Canonicalises the root (spec 3.2 step 1). A directory inside a git work tree
 * but below its top is served as a plain directory: git's view would reach
 * outside the root, so only the top of a work tree counts as a git root.
 */
export function openRoot(dir: string): RepoRoot {
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    throw notFound(`root directory ${dir} does not exist`, { root: dir });
  }
  if (!statSync(root).isDirectory()) throw invalidArgument(`root ${dir} is not a directory`, { root: dir });
  return { root, gitDir: detectGitDir(root), stateDir: join(root, ".mcp") };
}

function detectGitDir(root: string): string | null {
  const r = gitSync(["rev-parse", "--show-toplevel", "--absolute-git-dir"], { cwd: root, okCodes: [128] });
  if (r.code !== 0) return null;
  const [top, gitDir] = new TextDecoder().decode(r.stdout).trim().split("\n");
  if (!top || !gitDir) return null;
  let canonicalTop: string;
  try {
    canonicalTop = realpathSync(top);
  } catch {
    return null;
  }
  return canonicalTop === root ? gitDir : null;
}
