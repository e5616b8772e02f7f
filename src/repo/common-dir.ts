import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/**
 * The repository's common directory: the git directory itself, or the one its `commondir` file names (the git
 * directory of a linked work tree, `git worktree add`, holds its own HEAD and index; objects and refs live in
 * the common one). null when that file cannot be read.
 */
export function commonDir(gitDir: string): string | null {
  let named: string;
  try {
    named = readFileSync(join(gitDir, "commondir"), "utf8").trim();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? gitDir : null;
  }
  if (named === "") return null;
  return isAbsolute(named) ? named : join(gitDir, named);
}

/** The repository's object directory, which a linked work tree's git directory does not hold. */
export function userObjectDir(gitDir: string): string {
  return join(commonDir(gitDir) ?? gitDir, "objects");
}
