import { lstatSync, realpathSync, statSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { invalidArgument, isMissingPath, notFound, permissionDenied, type WorksnapError } from "../core/errors";
import { gitSync, trustAsSystemDoes } from "./git";

/** The repository a server or command works on. `root` is canonical (symlinks resolved). */
export interface RepoRoot {
  root: string;
  /** Absolute git dir of the git work tree the root lies in (at its top or below), else null. */
  gitDir: string | null;
  /**
   * Where the root lies in that work tree: "" at its top, else the root's
   * path from the top with a trailing "/" ("packages/app/"), as `git
   * rev-parse --show-prefix` gives it. Git's status names paths from the
   * top; everything worksnap answers is relative to the root.
   */
  gitPrefix: string;
  stateDir: string;
  /**
   * The state directory whose `locks/` holds the work-tree lock: the root's
   * own, or for a root below the top of a git work tree the top's, so that
   * servers and commands on nested roots of one work tree take one lock and
   * their writes never interleave.
   */
  lockStateDir: string;
}

/**
 * Canonicalises the root (spec 3.2 step 1). A root inside a git work tree,
 * at its top or in a subdirectory, is served as part of that repository: its
 * fingerprint is the repository's, git's ignore rules apply, and the
 * candidates are the repository's files under the root, named relative to
 * the root. Its state (`.mcp/`) lives in the root itself (see
 * docs/decisions.md). Outside any work tree no git is run at all, so a plain
 * directory needs no `git` executable.
 */
export function openRoot(dir: string): RepoRoot {
  let root: string;
  try {
    root = realpathSync(dir);
  } catch (err) {
    // a descriptor shortage is not a missing root (realpath needs descriptors): it is reported as what it is
    if (isMissingPath(err)) throw notFound(`root directory ${dir} does not exist`, { root: dir });
    throw err;
  }
  if (!statSync(root).isDirectory()) throw invalidArgument(`root ${dir} is not a directory`, { root: dir });
  const dotGit = nearestDotGit(root);
  const git = dotGit ? detectGit(root, dotGit) : null;
  const stateDir = join(root, ".mcp");
  return { root, gitDir: git?.gitDir ?? null, gitPrefix: git?.prefix ?? "", stateDir, lockStateDir: git?.top ? join(git.top, ".mcp") : stateDir };
}

/**
 * The `.git` nearest the root, at it or in a directory above it (a directory,
 * or the file a linked work tree or submodule has), looked up without running
 * git: only then is git asked about it, so a plain directory never needs git.
 */
function nearestDotGit(root: string): { path: string; isFile: boolean } | null {
  for (let dir = root; ; dir = dirname(dir)) {
    try {
      return { path: join(dir, ".git"), isFile: lstatSync(join(dir, ".git")).isFile() };
    } catch {
      // not here
    }
    if (dirname(dir) === dir) return null;
  }
}

function detectGit(root: string, dotGit: { path: string; isFile: boolean }): { gitDir: string; prefix: string; top?: string } | null {
  let r: ReturnType<typeof gitSync>;
  try {
    r = gitSync(["rev-parse", "--show-toplevel", "--show-prefix", "--absolute-git-dir"], { cwd: root, okCodes: [128] });
  } catch (err) {
    if (/Executable not found|ENOENT/i.test(String((err as Error)?.message))) {
      throw notFound(`${root} is inside a git repository, and git is not on PATH; install git, or serve a directory outside the repository`, {
        executable: "git",
      });
    }
    throw err;
  }
  // git refuses a repository another user owns (safe.directory): served as a plain directory, the tree would
  // lose its ignore rules and history, so the refusal is passed on
  if (r.code !== 0 && /safe\.directory/.test(r.stderr)) {
    // trusted by the system's configuration, which worksnap's git does not read: the same trust, passed on
    const named = namedByGit(r.stderr);
    const system = gitSync(["rev-parse", "--show-toplevel"], { cwd: root, okCodes: [128], env: { GIT_CONFIG_NOSYSTEM: "0" } });
    if (system.code !== 0 || named === undefined || !trustAsSystemDoes(named)) throw refusedOwnership(root, r.stderr);
    return detectGit(root, dotGit);
  }
  // a `.git` file naming a git directory that is gone (a linked work tree or submodule whose repository moved or
  // was removed): git refuses every command there, and served as a plain directory the tree would lose its ignore
  // rules and history without a word
  if (r.code !== 0 && /not a git repository: /.test(r.stderr) && dotGit.isFile) throw brokenGitFile(root, dotGit.path);
  // 128: not a work tree after all (a bare repository, .git inside .git)
  if (r.code !== 0) return null;
  const [top, , gitDir] = new TextDecoder().decode(r.stdout).split("\n");
  if (!top || !gitDir) return null;
  let canonicalTop: string;
  try {
    canonicalTop = realpathSync(top);
  } catch {
    return null;
  }
  if (canonicalTop === root) return { gitDir, prefix: "" };
  // below the top (git resolved the same symlinks we did)
  if (!root.startsWith(canonicalTop + sep)) return null;
  // a directory the repository ignores (a build output, node_modules/x) holds no candidates of it: served as a plain directory
  if (gitSync(["check-ignore", "-q", "--no-index", "."], { cwd: root, okCodes: [1, 128] }).code === 0) return null;
  return { gitDir, prefix: `${root.slice(canonicalTop.length + 1).split(sep).join("/")}/`, top: canonicalTop };
}

function brokenGitFile(root: string, file: string): WorksnapError {
  const at = dirname(file) === root ? "The root's .git file" : "The .git file of a directory above the root";
  return notFound(
    `${at} names a git directory git cannot open: a linked work tree (git worktree add) or submodule whose repository moved or was removed, and git refuses it too. Repair the link from the repository (git worktree repair PATH, run in the repository), or remove the .git file to serve the files as a plain directory`,
    { reason: "git_dir_missing" },
  );
}

/**
 * git's refusal of a repository owned by another user (its `safe.directory`
 * check, which keeps a repository's own configuration from running commands
 * as whoever enters it): the same advice git gives, with the directory git
 * named.
 */
function refusedOwnership(root: string, stderr: string): WorksnapError {
  const named = namedByGit(stderr) ?? root;
  return permissionDenied(
    `git refuses the repository at ${named}: it is owned by another user. Run worksnap as the repository's owner, or, if you trust the repository, add its absolute path to git's safe.directory (git config --global --add safe.directory PATH)`,
    { reason: "git_dubious_ownership", directory: named },
  );
}

/** The directory git's safe.directory advice names (`git config --global --add safe.directory '/a b'`), unquoted. */
function namedByGit(stderr: string): string | undefined {
  const said = /safe\.directory\s+(\S.*)$/m.exec(stderr)?.[1]?.trim();
  // git quotes a path as a shell word when it must ('it'\''s' for it's)
  return said?.startsWith("'") && said.endsWith("'") ? said.slice(1, -1).replaceAll("'\\''", "'") : said;
}
