/**
 * `git status` against worksnap's own copy of the index, where git keeps its
 * untracked cache (`core.untrackedCache`).
 *
 * Most of a status on a large tree is the walk for untracked files: every
 * directory read, every name matched against the ignore rules (about 250 of
 * 400 ms on 90k files in 16k directories). git can remember that walk in the
 * index (the UNTR extension): each directory's stat data, the ignore files'
 * hashes, and its untracked names; a directory whose stat data did not change
 * is not read again, and a racy one (changed in the tick the index was
 * written) is. That needs git to write the index, which worksnap never does to
 * the user's (DESIGN decision 7: `GIT_OPTIONAL_LOCKS=0`). So the status runs on
 * a private copy, `.mcp/git/status-index-<key>`, named after the identity of the
 * user's index it was copied from (git replaces the index by renaming a new
 * file over it, so the identity names its content): git may write that copy
 * (its optional lock is the copy's own), and the output is the one the user's
 * index gives, since the copy holds the same entries. When the user's index
 * changes (`git add`, a commit, a checkout), the next status runs on the user's
 * index as before and a new copy is made for the ones after it; the copy's
 * first status builds the cache (one index write, about 70 ms here).
 *
 * The cache is only used where a directory's stat data reliably changes with
 * its entries: on Linux, a local file system git's untracked cache is made for
 * (by its type); elsewhere but Windows (macOS), where the type does not tell,
 * a file system git's own test (`git update-index --test-untracked-cache`)
 * passed on, run once by a server while it is idle (about 6 s, mostly git's
 * sleeps between its checks) and its verdict kept for the repository; on
 * Windows never (git's own Scalar turns the cache off there: new files do not
 * reliably move their directory's mtime). Never with a split index (its
 * shared part lives in the user's `.git`, where a write would land), nor where
 * the user turned the cache off (`core.untrackedCache=false`). Anything else,
 * and any failure to make the copy, is the plain status.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, statfsSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { isDescriptorShortage } from "../core/errors";
import { sha256Hex } from "../core/hash";
import { writeCacheFile } from "./cache-file";
import { git, gitText, type GitResult } from "./git";
import { skipWorktreeMayBePresent } from "./index-flags";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";
import { ensureStateDir, tempPath } from "./state-dir";
import { startStatusWatch, watchedRun } from "./status-watch";
import { confirmUntrackedDirs } from "./untracked-dirs";

const PREFIX = "status-index-";

/** Flags pinned so the status bytes do not depend on the user's status config. */
export const STATUS_ARGS = ["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=none"];

/** git's config for a status on the copy: the cache kept and written; a cache needs no flush; never a split index (its shared part would go to .git). */
export const COPY_CONFIG = ["-c", "core.untrackedCache=true", "-c", "core.fsync=none", "-c", "core.splitIndex=false"];

/**
 * `git status` with STATUS_ARGS, on the copy when there is one for the user's current index. A status that
 * fails on the copy (git dies when it cannot write it: a full disk; or the copy was cut short) runs again on
 * the user's index, which needs no room, and the copy is dropped. A status on a copy that trusted directories'
 * stat data has its untracked directories confirmed without the cache (untracked-dirs.ts).
 */
export async function gitStatus(repo: RepoRoot): Promise<StatusResult> {
  const run = await statusRun(repo);
  if (run.same) return { ...run.same.result, startedAt: run.same.startedAt };
  let result: GitResult;
  if (run.env === undefined) result = await git(STATUS_ARGS, { cwd: repo.root });
  else {
    try {
      result = await git([...run.config, ...STATUS_ARGS], { cwd: repo.root, env: run.env });
      const confirmed = run.confirm ? await confirmUntrackedDirs(repo.root, result.stdout) : null;
      if (confirmed !== null) result = { ...result, stdout: confirmed };
      // a skipped entry that came into the tree while git ran may have lost its flag in the copy git wrote
      const flagsKept = run.identity === undefined || !skipWorktreeMayBePresent(repo, run.identity);
      // the cache named a directory git no longer lists, or the copy may differ from the user's index: the copies
      // (the shared one here, the watch's private one when its settle is told so) are not used again
      if ((confirmed !== null || !flagsKept) && run.shared !== undefined) rmSync(run.shared, { force: true });
      run.settle?.(confirmed === null && flagsKept, result);
    } catch (err) {
      if (run.settle) run.settle(false);
      // no descriptor free: the plain status could not start either, and the copy is sound (the caller answers BUSY)
      if (isDescriptorShortage(err)) throw err;
      // a copy git cannot read (cut short by a crash: copies are not flushed) is made again after the next status
      rmSync(run.env.GIT_INDEX_FILE as string, { force: true });
      result = await git(STATUS_ARGS, { cwd: repo.root });
    }
  }
  void run.after();
  return result;
}

/**
 * Copies this process made that no status has run on yet: the first status on one builds git's untracked
 * cache (an index write, 1.4x a status that finds it built), which a server does while it is idle (primeStatusCopy).
 */
const unprimed = new Set<string>();

/**
 * Runs the status on the copy for the user's current index if this process made it and no status has used it
 * yet, so that git builds its untracked cache there now rather than in the next call. A server's idle work
 * (after a call that found the user's index changed). True when it ran.
 */
export async function primeStatusCopy(repo: RepoRoot): Promise<boolean> {
  probeWhenIdle(repo);
  if (unprimed.size === 0 || !repo.gitDir) return false;
  const identity = indexIdentity(join(repo.gitDir, "index"));
  if (identity === null || !unprimed.has(copyPath(repo, identity))) return false;
  await gitStatus(repo);
  return true;
}

function copyPath(repo: RepoRoot, identity: string): string {
  return join(repo.stateDir, "git", PREFIX + sha256Hex(identity).slice(0, 16));
}

/**
 * A status's answer. `startedAt` (ms since the epoch) when it is an earlier status's answer, given again because
 * the work tree's watch saw nothing change since (status-watch.ts): when that status started.
 */
export type StatusResult = GitResult & { startedAt?: number };

/** What to run `git status` with: config before the command, and the environment. */
interface StatusRun {
  config: string[];
  env?: Record<string, string>;
  /** To call once the status has run: makes the copy the next status will use, where there was none. */
  after(): Promise<void>;
  /** A status told by the work tree's watch (status-watch.ts): told whether git ran to its end, and its answer. */
  settle?(ok: boolean, result?: GitResult): void;
  /** An earlier status's answer that stands: git does not run. */
  same?: { result: GitResult; startedAt: number };
  /**
   * The status trusts directories' stat data (untracked-dirs.ts): its `?? dir/` lines are confirmed, and `shared`
   * (the shared copy) is removed when one was wrong.
   */
  confirm?: boolean;
  shared?: string;
  /** The identity of the user's index the copy was made from. */
  identity?: string;
}

const PLAIN: StatusRun = { config: [], after: async () => undefined };

/**
 * Linux file system types (statfs f_type) whose directory mtimes change with every entry added or removed, as
 * git's untracked cache needs: ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, overlayfs.
 */
const LOCAL_LINUX = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1, 0x794c7630]);

/** Per root, whether the cache may be used at all (file system and the user's setting), asked once per process. */
const allowed = new Map<string, Promise<boolean>>();

/**
 * How to run this status. With a copy for the user's current index, the status waits for the first answer
 * of `allowed` (one `git config` in a process's life); without one, it starts at once on the user's index.
 */
async function statusRun(repo: RepoRoot): Promise<StatusRun> {
  const gitDir = repo.gitDir;
  if (!gitDir || splitIndex(gitDir)) return PLAIN;
  const userIndex = join(gitDir, "index");
  const identity = indexIdentity(userIndex);
  if (identity === null) return PLAIN;
  const ok = cacheAllowed(repo);
  const dir = join(repo.stateDir, "git");
  const copy = copyPath(repo, identity);
  unprimed.delete(copy);
  if (!existsSync(copy)) return { config: [], after: async () => ((await ok) ? makeCopy(repo, dir, userIndex, identity, copy) : undefined) };
  if (!(await ok)) return PLAIN;
  // git would clear the flag of a skipped entry it finds in the tree, in the copy it writes (index-flags.ts)
  if (skipWorktreeMayBePresent(repo, identity)) return PLAIN;
  if (!soundOnce(copy)) {
    rmSync(copy, { force: true });
    return { config: [], after: async () => makeCopy(repo, dir, userIndex, identity, copy) };
  }
  const watched = platform === "linux" ? watchedRun(repo, copy) : null;
  if (watched?.kind === "same") return { ...PLAIN, same: watched };
  if (watched !== null) {
    return {
      config: [...COPY_CONFIG, ...watched.config],
      env: { ...watched.env, GIT_OPTIONAL_LOCKS: "1" },
      after: PLAIN.after,
      settle: watched.settle,
      confirm: watched.full,
      shared: copy,
      identity,
    };
  }
  return {
    config: COPY_CONFIG,
    env: { GIT_INDEX_FILE: copy, GIT_OPTIONAL_LOCKS: "1" },
    after: PLAIN.after,
    confirm: true,
    shared: copy,
    identity,
  };
}

/**
 * A long-lived process's statuses of `repo` told by a watch on its work tree (status-watch.ts), where git's
 * untracked cache is used (a local Linux file system, not turned off by the user: the watched status runs on the
 * copy) and the platform has the watch. Returns what stops it.
 */
export function watchStatuses(repo: RepoRoot): () => void {
  if (platform !== "linux" || process.platform !== "linux" || !repo.gitDir || !localFileSystem(repo.root)) return () => undefined;
  let stop: (() => void) | null = null;
  let stopped = false;
  cacheAllowed(repo).then(
    (ok) => {
      if (ok && !stopped) stop = startStatusWatch(repo);
    },
    () => undefined,
  );
  return () => {
    stopped = true;
    stop?.();
  };
}

function cacheAllowed(repo: RepoRoot): Promise<boolean> {
  let ok = allowed.get(repo.root);
  if (ok === undefined) allowed.set(repo.root, (ok = askAllowed(repo)));
  return ok;
}

async function askAllowed(repo: RepoRoot): Promise<boolean> {
  if (!mtimesFollowEntries(repo)) return false;
  try {
    const setting = (await gitText(["config", "--get", "core.untrackedCache"], { cwd: repo.root, okCodes: [1] })).trim().toLowerCase();
    return !["false", "no", "off", "0"].includes(setting);
  } catch {
    return false;
  }
}

/** The platform whose rule applies (configureStatusCache: a test takes another platform's rule on this machine). */
let platform: NodeJS.Platform = process.platform;

/** Tests only: the rule of another platform from now on, forgetting what this process decided per root. */
export function configureStatusCache(opts: { platform: NodeJS.Platform }): void {
  platform = opts.platform;
  allowed.clear();
  probing.clear();
}

/** Whether a directory's stat data changes with its entries on the file system of the root, as far as is known now. */
function mtimesFollowEntries(repo: RepoRoot): boolean {
  if (platform === "linux") return localFileSystem(repo.root);
  if (platform === "win32") return false;
  return readVerdict(repo) === true;
}

function localFileSystem(path: string): boolean {
  try {
    return LOCAL_LINUX.has(Number(statfsSync(path).type));
  } catch {
    return false;
  }
}

/**
 * git's verdict on the root's file system (`.mcp/cache/dir-mtimes.json`), for the platform and device it was
 * reached on; null when there is none for them (another machine, a repository moved to another volume).
 */
function readVerdict(repo: RepoRoot): boolean | null {
  try {
    const v = JSON.parse(readFileSync(verdictPath(repo), "utf8")) as { platform?: string; dev?: number; ok?: boolean };
    return v.platform === platform && v.dev === statSync(repo.root).dev && typeof v.ok === "boolean" ? v.ok : null;
  } catch {
    return null;
  }
}

function verdictPath(repo: RepoRoot): string {
  return join(repo.stateDir, "cache", "dir-mtimes.json");
}

/** Roots whose test runs (or ran) in this process: one run per process and root. */
const probing = new Map<string, Promise<boolean | null>>();

/**
 * Where only git's test can tell (not Linux, not Windows) and no verdict is kept: runs it once in this process,
 * in the background, in a scratch repository under `.mcp/tmp` (git makes its test directories in the work
 * tree's top, which must not be the user's: a status would list them), and keeps the verdict; later statuses
 * take it. Nothing is kept when the test could not run (git missing, no room), so another process tries again.
 */
function probeWhenIdle(repo: RepoRoot): void {
  if (platform === "linux" || platform === "win32" || !repo.gitDir || probing.has(repo.root) || readVerdict(repo) !== null) return;
  probing.set(repo.root, probe(repo));
}

/** The test's run: its verdict, kept (true or false), or null when it could not run. */
export function mtimeProbe(repo: RepoRoot): Promise<boolean | null> | undefined {
  return probing.get(repo.root);
}

async function probe(repo: RepoRoot): Promise<boolean | null> {
  let dir: string | null = null;
  try {
    ensureStateDir(repo.stateDir);
    dir = tempPath(repo.stateDir, "mtime-test");
    mkdirSync(dir, { recursive: true });
    await git(["init", "-q"], { cwd: dir });
    const r = await git(["update-index", "--test-untracked-cache"], { cwd: dir, okCodes: [1, 128] });
    const ok = r.code === 0;
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, verdictPath(repo), `${JSON.stringify({ platform, dev: statSync(repo.root).dev, ok })}\n`);
    allowed.delete(repo.root); // the next status asks again
    return ok;
  } catch {
    return null;
  } finally {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  }
}

/** A split index keeps its shared part in `.git/sharedindex.*`: a status writing the copy would write there. */
export function splitIndex(gitDir: string): boolean {
  try {
    return readdirSync(gitDir).some((n) => n.startsWith("sharedindex."));
  } catch {
    return true;
  }
}

/** Copies this process has found sound: every later version of them was written while it was alive. */
const sound = new Set<string>();

/**
 * git does not check an index's checksum when it reads one, and the copies are written without a flush (by
 * worksnap, and by git with `core.fsync=none`): after a power loss a copy may hold zeros or a torn tail, which
 * git would read as an index of other entries. So a process checks the trailing checksum of a copy the first
 * time it uses it (SHA-1, or SHA-256 in a repository of that object format; about 10 ms for 13 MB). Later
 * versions were written while the process was alive, with no power loss in between: they are not checked again.
 * A copy without a checksum (`index.skipHash`) is never used.
 */
function soundOnce(copy: string): boolean {
  if (sound.has(copy)) return true;
  let bytes: Buffer;
  try {
    bytes = readFileSync(copy);
  } catch {
    return false;
  }
  const ok = trailerMatches(bytes, "sha1", 20) || trailerMatches(bytes, "sha256", 32);
  if (ok) sound.add(copy);
  return ok;
}

function trailerMatches(bytes: Buffer, algorithm: "sha1" | "sha256", size: number): boolean {
  if (bytes.length < 12 + size) return false;
  const body = bytes.subarray(0, bytes.length - size);
  const trailer = bytes.subarray(bytes.length - size);
  if (trailer.every((b) => b === 0)) return false;
  return new Bun.CryptoHasher(algorithm).update(body).digest().equals(trailer);
}

/**
 * The user's index copied to `copy` (temp file, rename), kept only when the index did not change while it was
 * copied. The copy's mtime is set back to the index's, in whole seconds (never later than it), so git's racy
 * checks on the copy are at least as strict as on the index: an entry is racily clean against the copy
 * whenever it is against the index. Copies of older indexes are removed. Failures (a full disk) leave no copy,
 * and the plain status goes on.
 */
function makeCopy(repo: RepoRoot, dir: string, userIndex: string, identity: string, copy: string): void {
  let tmp: string | null = null;
  try {
    ensureStateDir(repo.stateDir);
    mkdirSync(dir, { recursive: true });
    tmp = tempPath(repo.stateDir, "status-index");
    copyFileSync(userIndex, tmp);
    const mtime = Math.floor(statSync(userIndex).mtimeMs / 1000);
    utimesSync(tmp, mtime, mtime);
    if (indexIdentity(userIndex) !== identity) return;
    renameSync(tmp, copy);
    tmp = null;
    sound.add(copy);
    unprimed.add(copy);
    for (const name of readdirSync(dir)) {
      if (name.startsWith(PREFIX) && join(dir, name) !== copy) {
        rmSync(join(dir, name), { force: true });
        unprimed.delete(join(dir, name));
      }
    }
  } catch {
    // no copy: the plain status goes on
  } finally {
    if (tmp !== null) rmSync(tmp, { force: true });
  }
}
