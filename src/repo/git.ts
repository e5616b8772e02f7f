import { closeSync, fstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { internal, isDescriptorShortage, notFound, type WorksnapError } from "../core/errors";
import { redactAbsolutePaths } from "../core/public-error";
import { Semaphore } from "../core/semaphore";

/**
 * Runs git for worksnap. DESIGN decision 7: never take the user's index lock
 * (GIT_OPTIONAL_LOCKS=0), stable output (LC_ALL=C), no pager, no prompts.
 */
export const GIT_ENV: Record<string, string> = {
  GIT_OPTIONAL_LOCKS: "0",
  LC_ALL: "C",
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
  GIT_CONFIG_NOSYSTEM: "1",
};

export interface GitResult {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

export interface GitOptions {
  cwd: string;
  env?: Record<string, string>;
  input?: Uint8Array | string;
  /** Exit codes that are not failures (e.g. 1 for `rev-parse --verify -q`). */
  okCodes?: number[];
  /**
   * For output of many megabytes (the index listing): a path where git's
   * output goes to a file instead of a pipe (removed at once, read back whole
   * after git exits). git then writes at its own speed, and this thread pays
   * one read instead of a stream of 64 KB chunks (about 45 ms of its time for
   * the 11 MB listing of 90k files). Where the file cannot be made, or git fails with it (a full disk: the
   * output did not fit), the command runs again through a pipe, which needs no room on the disk.
   */
  spool?: string;
}

/** The environment every git worksnap runs gets: the caller's minus any GIT_* variable, plus GIT_ENV. */
export function gitEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // A caller's GIT_DIR / GIT_INDEX_FILE must not redirect us to another repository.
    if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  }
  return { ...env, ...GIT_ENV, ...trustedEnv, ...extra };
}

/** The repositories the system's git configuration trusts though another user owns them, as command-scope config. */
let trustedEnv: Record<string, string> = {};
const trusted: string[] = [];

/**
 * Passes git's trust of a repository another user owns (`safe.directory`) on to every git this process runs.
 * worksnap's git reads no system configuration (GIT_CONFIG_NOSYSTEM: what shapes a status must be files a
 * watch can follow), so a repository trusted only in /etc/gitconfig, as container images do it, would be
 * refused where the user's own git accepts it; the same trust given as command-scope configuration (protected,
 * as system and global configuration are) is honoured. Only for a directory the system configuration trusts.
 * False when it was passed on already (git refused it all the same).
 */
export function trustAsSystemDoes(directory: string): boolean {
  if (trusted.includes(directory)) return false;
  trusted.push(directory);
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(trusted.length) };
  trusted.forEach((dir, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = "safe.directory";
    env[`GIT_CONFIG_VALUE_${i}`] = dir;
  });
  trustedEnv = env;
  return true;
}

/**
 * At most this many git children run at once in this process, whatever the
 * number of calls in flight: each holds a few descriptors (pipes, a pidfd) and
 * a process slot. Others wait their turn in arrival order.
 */
export const GIT_CHILDREN_MAX = 16;
const gitChildren = new Semaphore(GIT_CHILDREN_MAX);

/** How long a spawn keeps retrying while the process has no descriptor free. */
const SPAWN_RETRY_MS = 10_000;

/**
 * `spawn()`, retried while the process is out of file descriptors (EMFILE,
 * ENFILE): each retry waits until some git child ends (its descriptors are
 * free again) or a short backoff passes. After SPAWN_RETRY_MS the shortage
 * is thrown, and the caller's adapter answers BUSY.
 */
export async function spawnWhenDescriptorsFree<T>(spawn: () => T): Promise<T> {
  const deadline = Date.now() + SPAWN_RETRY_MS;
  for (let backoff = 5; ; backoff = Math.min(backoff * 2, 250)) {
    try {
      return spawn();
    } catch (err) {
      if (!isDescriptorShortage(err) || Date.now() >= deadline) throw err;
      await Promise.race([gitChildren.nextRelease(), Bun.sleep(backoff)]);
    }
  }
}

export async function git(args: string[], opts: GitOptions): Promise<GitResult> {
  const { stdout, stderr, code, spooled } = await gitChildren.run(async () => {
    let spool: number | null = null;
    try {
      // A spool of its own for each attempt: a spawn can fail with EMFILE after the child has started (the runtime
      // then lacks a descriptor to watch it by), and that child still writes its whole output to the spool it was
      // given; a retry writing into the same file doubled the listing (every tracked file twice in a grep's walk).
      const proc = await spawnWhenDescriptorsFree(() => {
        if (spool !== null) closeSync(spool);
        spool = opts.spool === undefined ? null : openSpool(opts.spool);
        return Bun.spawn(["git", ...args], {
          cwd: opts.cwd,
          env: gitEnv(opts.env),
          stdin: opts.input === undefined ? "ignore" : new Blob([opts.input]),
          stdout: spool ?? "pipe",
          stderr: "pipe",
        });
      });
      const used: number | null = spool;
      const out = used === null ? new Response(proc.stdout as ReadableStream<Uint8Array>).bytes() : proc.exited.then(() => readSpool(used));
      const [bytes, err, exit] = await Promise.all([out, new Response(proc.stderr).text(), proc.exited]);
      return { stdout: bytes, stderr: err, code: exit, spooled: used !== null };
    } finally {
      if (spool !== null) closeSync(spool);
    }
  });
  const ok = code === 0 || (opts.okCodes ?? []).includes(code);
  // a run that failed with the spool runs again through a pipe (one that never had a spool is not run twice)
  if (!ok && spooled) return git(args, { ...opts, spool: undefined });
  if (!ok) throw gitFailed(args, stderr, code);
  return { code, stdout, stderr };
}

/**
 * What git's failure means to the caller. A repository that cannot give an
 * object the request needs (a partial clone whose promisor remote cannot be
 * reached, a damaged object store) is a fact about the repository, answered
 * NOT_FOUND with git's own words; anything else is INTERNAL, as a failure
 * worksnap did not foresee.
 */
export function gitFailed(args: string[], stderr: string, code: number): WorksnapError {
  const said = stderr.trim();
  if (OBJECT_UNAVAILABLE.test(said)) {
    // git's line about the object itself, never the remote's address (a path of this machine, a URL with a user)
    const line = said.split("\n").find((l) => OBJECT_UNAVAILABLE.test(l) && !/remote repository/i.test(l)) ?? said.split("\n").find((l) => OBJECT_UNAVAILABLE.test(l)) ?? "";
    const promisor = /remote|promisor/i.test(said);
    return notFound(
      `git cannot read an object this request needs (${redactAbsolutePaths(line.trim())}): ${promisor ? "the repository is a partial clone and its remote could not be reached; fetch the missing objects when it can be (git fetch), or ask about what is checked out" : "the repository's object store is missing it or is damaged; git fsck names what is wrong"}`,
      { reason: "git_object_unavailable", command: args[0] },
    );
  }
  if (/^fatal: not a git repository/m.test(said)) return repositoryGone(args[0] as string);
  const index = said.split("\n").find((l) => INDEX_UNREADABLE.test(l));
  if (index !== undefined) {
    return notFound(
      `git cannot read the repository's index (${redactAbsolutePaths(index.trim())}): the file is damaged, and git status fails the same way; git rebuilds it from HEAD, keeping the work tree's files but not what was staged (rm .git/index && git reset)`,
      { reason: "git_index_unreadable", command: args[0] },
    );
  }
  return internal(`git ${args[0]} failed: ${said || `exit ${code}`}`, { args, exit: code });
}

/**
 * The repository a root belongs to, which git could open when the root was, can no longer be (moved or removed
 * meanwhile: the main repository of a linked work tree, most often).
 */
function repositoryGone(command: string): WorksnapError {
  return notFound(
    "git can no longer open the repository this root belongs to: it was moved or removed while worksnap served the root. Serve it where it is now, or repair a linked work tree's link from the repository (git worktree repair PATH)",
    { reason: "git_dir_missing", command },
  );
}

/** git's words for an index file it cannot read (read-cache.c). */
const INDEX_UNREADABLE =
  /index file smaller than expected|bad signature 0x[0-9a-f]+|bad index version|bad index file sha1 signature|index file corrupt|index uses .* extension, which we do not understand|unordered stage entries|multiple stage entries for merged file|index entry is a directory, but not sparse|unknown index entry format/i;

/** git's words for an object it could not read or fetch. */
const OBJECT_UNAVAILABLE =
  /bad object|unable to read [0-9a-f]{7,}|missing (blob|tree|commit) |could not fetch [0-9a-f]+ from promisor remote|Could not read from remote repository|unable to read sha1 file|object file .* is empty|loose object .* is corrupt|packfile .* cannot be accessed|is corrupt$|invalid object [0-9a-f]+/im;

/**
 * Runs git and hands its output to `look` chunk by chunk as it comes, keeping none of it: for a question about a
 * listing of many megabytes (is there such an entry?). When `look` returns true git is stopped and the answer is
 * true; false when git ran to its end without that. A failure of git throws as git() does.
 */
export async function gitScan(args: string[], opts: GitOptions, look: (chunk: Uint8Array) => boolean): Promise<boolean> {
  return gitChildren.run(async () => {
    const proc = await spawnWhenDescriptorsFree(() =>
      Bun.spawn(["git", ...args], { cwd: opts.cwd, env: gitEnv(opts.env), stdin: "ignore", stdout: "pipe", stderr: "pipe" }),
    );
    const stderr = new Response(proc.stderr).text();
    let found = false;
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      if (look(chunk)) {
        found = true;
        proc.kill();
        break;
      }
    }
    const [code, err] = await Promise.all([proc.exited, stderr]);
    if (!found && code !== 0 && !(opts.okCodes ?? []).includes(code)) throw gitFailed(args, err, code);
    return found;
  });
}

/** A new file at `path`, open for reading and writing and already removed; null where it cannot be made. */
function openSpool(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, "wx+", 0o600);
  } catch {
    return null;
  }
  try {
    unlinkSync(path);
  } catch {
    // still open, and gone with the process at the latest; the state's temp cleanup removes a name left behind
  }
  return fd;
}

/** Everything written to the spool file. */
function readSpool(fd: number): Uint8Array {
  const size = fstatSync(fd).size;
  const out = new Uint8Array(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, out, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  return at === size ? out : out.subarray(0, at);
}

export async function gitText(args: string[], opts: GitOptions): Promise<string> {
  const r = await git(args, opts);
  return new TextDecoder().decode(r.stdout);
}

export function gitSync(args: string[], opts: GitOptions): GitResult {
  const proc = Bun.spawnSync(["git", ...args], {
    cwd: opts.cwd,
    env: gitEnv(opts.env),
    stdin: opts.input === undefined ? "ignore" : new Blob([opts.input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const code = proc.exitCode ?? 1;
  const stderr = proc.stderr ? new TextDecoder().decode(proc.stderr) : "";
  if (code !== 0 && !(opts.okCodes ?? []).includes(code)) throw gitFailed(args, stderr, code);
  return { code, stdout: proc.stdout ?? new Uint8Array(), stderr };
}

/** Splits NUL-terminated git output into raw byte records. */
export function splitNul(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (;;) {
    const end = bytes.indexOf(0, start);
    if (end < 0) break;
    out.push(bytes.subarray(start, end));
    start = end + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A path from git as UTF-8, or null when the name is not valid UTF-8 (skipped and counted). */
export function decodePath(raw: Uint8Array): string | null {
  try {
    return strictUtf8.decode(raw);
  } catch {
    return null;
  }
}
