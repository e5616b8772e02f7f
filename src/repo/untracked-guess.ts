/**
 * `git status --untracked-files=normal` names an untracked directory, not
 * the files in it, so a tree scan lists those with `git ls-files --others`
 * once the status is in: a second git process after the first, on the path
 * of every read (about 40 ms on the 100k-file bench tree, a tenth of a warm
 * capture). Untracked directories rarely change from one call to the next,
 * so the listing of the ones seen last time starts beside the status; when
 * the status names the same directories, its answer is used, otherwise it is
 * dropped and the directories named are listed as before. Both listings run
 * against the same tree as the status (as the listing after it did).
 *
 * The last directories are kept per root and scope, in the process and in
 * `.mcp/cache/untracked-dirs.json` (for the next command), written only when
 * they change.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeCacheFile } from "./cache-file";
import { git, type GitResult } from "./git";
import { indexVersion } from "./index-entries";
import type { RepoRoot } from "./root";
import { splitIndex } from "./status-index";

export interface UntrackedGuess {
  dirs: readonly string[];
  listing: Promise<GitResult>;
}

const remembered = new Map<string, readonly string[]>();
const FILE = "untracked-dirs.json";

function keyOf(repo: RepoRoot, scope: readonly string[]): string {
  return `${repo.root}\0${scope.join("\0")}`;
}

function lastDirs(repo: RepoRoot, scope: readonly string[]): readonly string[] | null {
  const key = keyOf(repo, scope);
  const known = remembered.get(key);
  if (known) return known;
  try {
    const saved = JSON.parse(readFileSync(join(repo.stateDir, "cache", FILE), "utf8")) as { scope: string[]; dirs: string[] };
    if (saved.scope.join("\0") !== scope.join("\0") || !Array.isArray(saved.dirs)) return null;
    remembered.set(key, saved.dirs);
    return saved.dirs;
  } catch {
    return null;
  }
}

/** Starts the listing of the untracked directories seen last time under `scope`, or null when none were. */
export function guessUntracked(repo: RepoRoot, scope: readonly string[], list: (dirs: readonly string[]) => Promise<GitResult>): UntrackedGuess | null {
  const dirs = lastDirs(repo, scope);
  if (!dirs || dirs.length === 0) return null;
  const listing = list(dirs);
  listing.catch(() => {}); // dropped when the guess was wrong; a real failure shows where it is used
  return { dirs, listing };
}

/** The untracked directories the status named under `scope` (so the next call guesses them). */
export function rememberUntracked(repo: RepoRoot, scope: readonly string[], dirs: readonly string[]): void {
  const key = keyOf(repo, scope);
  const before = remembered.get(key) ?? lastDirs(repo, scope) ?? [];
  if (sameDirs(before, dirs)) return;
  remembered.set(key, [...dirs]);
  try {
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, join(repo.stateDir, "cache", FILE), JSON.stringify({ scope, dirs }));
  } catch {
    // a read-only .mcp/: the guess lives in the process only
  }
}

export function sameDirs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * `git ls-files --others` of untracked directories (ones the status names whole: no index entry lies below
 * them), as the tree scan runs it; exported so guess and scan list alike.
 *
 * git reads the whole index first and hashes its names (about 25 ms of 30 on the release trees' 13 MB index,
 * and twice that beside the status a call runs on two cores), though no entry of it can lie in these
 * directories. Where the index can hold no entry that changes what git lists there, the listing runs against
 * no index at all (GIT_INDEX_FILE naming no file: git takes it for an empty one): 5 ms. The one entry that would
 * is a skip-worktree `.gitignore` above them missing from the work tree (a sparse checkout), whose rules git
 * reads from the index's blob: skip-worktree needs the index's extended flags, which only an index of version
 * 3 or more holds (git writes version 2 unless an entry needs them). So: a version 2 index, not split (the
 * shared part could be of another version).
 */
export function listOthers(repo: RepoRoot, pathspecs: string[]): Promise<GitResult> {
  const env = repo.gitDir && plainIndex(repo.gitDir) ? { GIT_INDEX_FILE: join(repo.stateDir, "git", "no-index") } : undefined;
  return git(["ls-files", "-z", "--others", "--exclude-standard", "--", ...pathspecs], { cwd: repo.root, env });
}

/** Whether the index is of version 2 (no extended flags: no skip-worktree entry) and not split. */
export function plainIndex(gitDir: string): boolean {
  return indexVersion(join(gitDir, "index")) === 2 && !splitIndex(gitDir);
}
