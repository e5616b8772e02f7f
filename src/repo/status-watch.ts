/**
 * A server's `git status` told by a watch on the work tree which paths can
 * have changed (git's fsmonitor hook, protocol 2), so that git looks at those
 * alone instead of every file and directory.
 *
 * On the release trees (90k files in 16k directories) a status on worksnap's
 * copy of the index with git's untracked cache costs about 150 ms, nearly all
 * of it one `lstat` per file and per directory; told that nothing changed, it
 * costs about 55 ms (reading the index). A server (`watchStatuses`, from the
 * workspace of a long-lived process) keeps a watch on every directory of the
 * tree (tree-watch.ts) but the ones git excludes by a pattern of their own,
 * which it watches without their contents (watch-ignored.ts: git never looks
 * inside them; a `.gitignore` changed, or a rule outside the tree, starts a
 * new watch), and a private copy of the shared copy of the index
 * (`.mcp/git/watch-index-<pid>-<nonce>`), where git keeps, per entry, whether the hook has
 * vouched for it since its last check, and the hook's token.
 *
 * Each status takes the paths the watch saw since the last one (the watch's
 * thread reads every event the kernel queued before it is asked: a write that
 * returned before the status started is among them) and writes git's answer
 * for the token it issued last: a new token and those paths, or, after a
 * reset of the watch (the kernel's queue overflowed, a directory moved), a
 * new copy, a failed status, or too many paths, "/" (everything: the full
 * status). The hook (`.mcp/git/fsmonitor-hook`, sourced by the shell git
 * starts) prints that answer only when git hands it exactly that token, and
 * "/" for any other: a copy from another process's life, or one git could not
 * write, never has a change vouched for that this watch did not see. Tokens
 * carry a random nonce per watch, so no later watch can take an earlier one's
 * token for its own.
 *
 * Not used (the status runs as before): off Linux or without the native
 * module, at a root below the work tree's top, on a file system whose changes
 * may come from elsewhere (not one of the local types the untracked cache is
 * used on; a mount inside the tree), with gitlinks in the index (git would
 * trust the watch for a submodule's whole work tree), past the watch budget,
 * or with WORKSNAP_WATCH=0. What inotify cannot see is documented
 * (docs/decisions.md): a tracked file written through a second name outside
 * the tree, made after the watch started; writes through a shared mapping.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { git, gitScan, type GitResult } from "./git";
import { headIdentity } from "./head-identity";
import type { RepoRoot } from "./root";
import { writeFileUnflushed } from "./atomic-write";
import { ensureStateDir, processAlive, tempPath } from "./state-dir";
import { type Taken, TreeWatch } from "./tree-watch";
import { entriesBelow, excludedDirectories, ruleFiles, ruleSignature } from "./watch-ignored";

/** The hook git sources: the prepared answer for the token it was told to expect, else everything. */
const HOOK = `# worksnap's git fsmonitor hook (src/repo/status-watch.ts), sourced by the shell git starts.
if [ "$1" = 2 ] && [ "$2" = "$WORKSNAP_FSM_SINCE" ]; then exec cat "$WORKSNAP_FSM_ANSWER"; fi
if [ "$1" = 2 ]; then printf '%s\\0/\\0' "$WORKSNAP_FSM_TOKEN"; else printf '/\\0'; fi
`;

/** More paths than this since the last status: the full status (git walks the index once per directory named). */
const MAX_PATHS = 1000;
/**
 * How long a status waits for the watch's thread to catch up before it goes on without the watch (the thread
 * reads what is queued in microseconds; it is behind while it walks: its first walk, a large directory made);
 * once it was found behind, a status waits a little only, until it has caught up.
 */
const TAKE_WAIT_MS = 100;
const BEHIND_WAIT_MS = 5;
/** How often a quiet server moves the watch's paths into its own set (the thread's buffer stays small). */
const COLLECT_MS = 500;
/**
 * The kernel watches one work tree may hold (directories, and files with a second link): a quarter of the
 * user's limit (`fs.inotify.max_user_watches`, shared with every editor and file watcher the user runs), at most
 * 200,000. A tree that needs more is not watched.
 */
export function watchBudget(): number {
  let limit = 8192; // the kernel's default before 5.11
  try {
    limit = Number.parseInt(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8"), 10) || limit;
  } catch {
    // not Linux, or no /proc: the old default
  }
  return Math.min(200_000, Math.floor(limit / 4));
}

/**
 * How a status runs with the watch: git's config and environment, whether git is told everything (then it
 * trusts directories' stat data, and the caller confirms its untracked directories: untracked-dirs.ts), and what
 * to call when it ends (with git's answer when it ran to its end and its cache held nothing wrong); or, when
 * nothing git's answer depends on changed since the last status the watch told, that status's answer and when it
 * started (`same`).
 */
export type WatchedRun =
  | { kind: "run"; config: string[]; env: Record<string, string>; full: boolean; settle(ok: boolean, result?: GitResult): void }
  | { kind: "same"; result: GitResult; startedAt: number };

/**
 * The last status a watch told, with what its answer depends on besides the work tree and the index (the copy
 * it ran on names the user's index): HEAD's files (head-identity.ts) and the files outside the tree
 * (watch-ignored.ts ruleFiles), both the same when it started and when it ended.
 */
interface Told {
  token: string;
  result: GitResult;
  head: string;
  rules: string;
  startedAt: number;
}

class StatusWatch {
  private readonly nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString("base64url");
  private seq = 0;
  /** The token the private copy holds as far as this process knows; null: none of ours (the next status is full). */
  private token: string | null = null;
  /** This watch's copy of the index (`.mcp/git/watch-index-<pid>-<nonce>`) once made, and the shared copy it was made of. */
  private copy: string | null = null;
  private copyOf: string | null = null;
  private readonly pending = new Set<string>();
  private full = false;
  private running = false;
  private failed = false;
  /** The watch's thread was not caught up at the last take (a large directory made): don't wait long. */
  private behind = false;
  /** The last status told, while its token is the copy's (null once another is issued or one failed). */
  private last: Told | null = null;
  /** Shared copies of the index checked (no gitlink, no entry in a skipped directory): the verdict per copy. */
  private readonly checked = new Map<string, boolean | Promise<boolean>>();
  private readonly timer: ReturnType<typeof setInterval>;

  /**
   * `skipped`: the directories watched without their contents (watch-ignored.ts), valid while the rules outside
   * the tree keep `signature` and no `.gitignore` changes, and the state directories (`own`), valid while their
   * own `.gitignore` stays; both while the index holds nothing below them. `stale` is told when they may not be
   * any more (the watch is closed then, and its keeper starts another).
   */
  constructor(
    private readonly repo: RepoRoot,
    private readonly watch: TreeWatch,
    private readonly skipped: Skipped,
    private readonly counts: { full: number; told: number; same: number },
    private readonly stale: () => void,
  ) {
    this.timer = setInterval(() => this.collect(-1), COLLECT_MS);
    this.timer.unref?.();
  }

  /** The run for a status on the shared copy `shared`, or null: the status runs without the watch. */
  prepare(shared: string): WatchedRun | null {
    if (this.failed || this.running) return null;
    // the files outside the tree as they are before git starts (once per status: compared, and kept with its answer)
    const rules = ruleSignature(this.skipped.rules);
    if (this.skipped.dirs.length > 0 && rules !== this.skipped.signature) {
      this.outdated();
      return null;
    }
    if (!this.collect(this.behind ? BEHIND_WAIT_MS : TAKE_WAIT_MS)) return null;
    if (!this.indexFits(shared)) return null;
    const copy = this.copy;
    if (copy === null || this.copyOf !== shared || !existsSync(copy)) {
      this.makeCopy(shared);
      return null;
    }
    const since = this.token;
    const full = since === null || this.full || this.pending.size > MAX_PATHS;
    const head = this.headNow();
    if (!full && this.pending.size === 0) {
      // nothing in the tree changed since the last status: with the same index, HEAD and rules, its answer stands
      const last = this.last;
      if (last !== null && last.token === since && last.head === head && last.rules === rules) {
        this.counts.same++;
        return { kind: "same", result: last.result, startedAt: last.startedAt };
      }
    }
    this.last = null;
    const token = !full && this.pending.size === 0 ? (since as string) : `worksnap:${this.nonce}:${++this.seq}`;
    const parts = [Buffer.from(`${token}\0`, "latin1")];
    if (full) parts.push(Buffer.from("/\0", "latin1"));
    else for (const p of this.pending) parts.push(Buffer.from(`${p}\0`, "latin1"));
    const answer = tempPath(this.repo.stateDir, "fsmonitor-answer");
    try {
      ensureStateDir(this.repo.stateDir);
      writeFileSync(answer, Buffer.concat(parts));
      ensureHook(this.repo);
    } catch {
      rmSync(answer, { force: true });
      return null;
    }
    this.pending.clear();
    this.full = false;
    this.running = true;
    this.counts[full ? "full" : "told"]++;
    const startedAt = Date.now();
    return {
      kind: "run",
      config: ["-c", `core.fsmonitor=. ${shellQuote(hookPath(this.repo))}`, "-c", "core.fsmonitorHookVersion=2"],
      env: { GIT_INDEX_FILE: copy, WORKSNAP_FSM_SINCE: since ?? "", WORKSNAP_FSM_TOKEN: token, WORKSNAP_FSM_ANSWER: answer },
      full,
      settle: (ok, result) => {
        this.running = false;
        rmSync(answer, { force: true });
        if (ok) {
          this.token = token;
          // kept for the statuses that find nothing changed, unless HEAD or a rule moved while git ran
          if (result !== undefined && head !== null && head === this.headNow() && rules === ruleSignature(this.skipped.rules)) {
            this.last = { token, result, head, rules, startedAt };
          }
        } else {
          // git may have written the copy or not, or its cache named a directory git no longer lists
          // (untracked-dirs.ts): nothing of it is vouched for again
          this.token = null;
          if (this.copy !== null) rmSync(this.copy, { force: true });
          this.copy = null;
        }
      },
    };
  }

  /** HEAD's identity now (null: it cannot be told without git, and no answer is kept). */
  private headNow(): string | null {
    return this.repo.gitDir ? headIdentity(this.repo.gitDir) : null;
  }

  /**
   * Moves what the watch saw into the pending set, once its thread read every event queued before now (or, with
   * a negative wait, what it has read so far); false when it could not (busy, or it failed: then it is closed).
   */
  private collect(waitMs: number): boolean {
    if (this.failed) return false;
    const taken = this.watch.take(waitMs);
    if (waitMs >= 0) this.behind = taken.kind === "busy";
    if (taken.kind === "busy") return false;
    if (taken.kind === "failed") {
      // past the budget (a large directory made: the next watch's listing may skip it), the root gone, ...
      this.outdated();
      return false;
    }
    if (rulesTouched(taken, this.skipped)) {
      // a rule changed: a skipped directory may no longer be excluded
      this.outdated();
      return false;
    }
    if (taken.reset) this.full = true;
    if (!this.full) {
      for (const p of taken.paths) this.pending.add(p);
      if (this.pending.size > MAX_PATHS) this.full = true;
    }
    if (this.full) this.pending.clear();
    return true;
  }

  /**
   * Whether the index copied to `shared` lets the watch vouch for paths: no gitlink (git would take the watch's
   * word for a submodule's whole work tree) and no entry in a skipped directory (then the watch is outdated);
   * false (no watch) until it is known.
   */
  private indexFits(shared: string): boolean {
    const known = this.checked.get(shared);
    if (typeof known === "boolean") return known;
    if (known === undefined) {
      this.checked.clear();
      const reading: Promise<boolean> = checkIndex(this.repo, shared, [...this.skipped.own, ...this.skipped.dirs]).then(
        (v) => {
          if (this.checked.get(shared) === reading) this.checked.set(shared, v === "fits");
          if (v === "entries below") this.outdated();
          return v === "fits";
        },
        () => {
          if (this.checked.get(shared) === reading) this.checked.set(shared, false);
          return false;
        },
      );
      this.checked.set(shared, reading);
    }
    return false;
  }

  /** The shared copy the private copy is being made of (makeCopy), or null. */
  private making: string | null = null;

  /**
   * Makes this watch's private copy of `shared` in the background (statuses run on the shared copy meanwhile; the
   * first one on the new copy is told everything anyway): copied, then rewritten by git in index version 4, whose
   * path compression makes it a third smaller (8.4 of 13.5 MB on the release trees): 14 ms less for each status
   * that writes it (after a write), 3 ms less for one that only reads it. Only this process writes the copy.
   */
  private makeCopy(shared: string): void {
    // one at a time (one file per watch): a copy of an older shared copy is made again after it
    if (this.making !== null) return;
    this.making = shared;
    const copy = join(this.repo.stateDir, "git", `${PRIVATE_PREFIX}${process.pid}-${this.nonce}`);
    rmSync(copy, { force: true });
    this.copy = null;
    this.token = null;
    const made = async () => {
      // the copy keeps the shared copy's mtime (in whole seconds), before git rewrites it and after: see copyIndex
      const second = copyIndex(shared, copy);
      await git(["update-index", "--index-version", "4"], { cwd: this.repo.root, env: { GIT_INDEX_FILE: copy, GIT_OPTIONAL_LOCKS: "1" } });
      utimesSync(copy, second, second);
    };
    made().then(
      () => {
        if (this.making !== shared) return;
        this.making = null;
        if (this.failed) rmSync(copy, { force: true });
        else {
          this.copy = copy;
          this.copyOf = shared;
        }
      },
      () => {
        if (this.making === shared) this.making = null;
        rmSync(copy, { force: true });
      },
    );
  }

  /** The kernel watches it holds. */
  watches(): number {
    return this.failed ? 0 : this.watch.count();
  }

  /** The skipped directories may no longer be excluded: this watch ends, and its keeper starts another. */
  private outdated(): void {
    if (this.failed) return;
    this.close();
    this.stale();
  }

  close(): void {
    if (this.failed) return;
    this.failed = true;
    clearInterval(this.timer);
    this.watch.close();
    if (this.copy !== null) rmSync(this.copy, { force: true });
    this.copy = null;
  }
}

/**
 * Copies the index at `from` to `to` (one open descriptor: the bytes and the mtime of the same version, whoever
 * renames a new one over it meanwhile) with its mtime in whole seconds; returns that second.
 *
 * The copy must not look newer than the index it was made of. git tells a racy entry or directory (changed in the
 * second its stat data was taken, perhaps after it was taken: git compares whole seconds) by its mtime against
 * the index file's own: a directory whose untracked names the shared copy recorded in second S, then changed in
 * that same second, is read again only while the index is no later than S. A copy made (or rewritten by
 * `update-index`) in a later second would vouch for the directory as it was: a new directory in it never seen.
 */
function copyIndex(from: string, to: string): number {
  const fd = openSync(from, "r");
  try {
    const second = Math.floor(fstatSync(fd).mtimeMs / 1000);
    writeFileSync(to, readFileSync(fd));
    utimesSync(to, second, second);
    return second;
  } finally {
    closeSync(fd);
  }
}

let protocol2: Promise<boolean> | null = null;

/**
 * Whether git answers the hook in protocol 2 (git 2.26 and later; an older one speaks protocol 1 only): asked
 * once per process (every watch, and every new watch after an outdated one, runs the same git).
 */
function speaksProtocol2(repo: RepoRoot): Promise<boolean> {
  if (protocol2 === null) {
    const asked = git(["--version"], { cwd: repo.root }).then((r) => {
      const m = /(\d+)\.(\d+)/.exec(Buffer.from(r.stdout).toString());
      return m !== null && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 26));
    });
    asked.catch(() => {
      if (protocol2 === asked) protocol2 = null; // a git that could not start is asked again next time
    });
    protocol2 = asked;
  }
  return protocol2;
}

/** What the index copied to `copy` holds that matters to the watch: gitlinks, entries below `dirs`, or neither. */
async function checkIndex(repo: RepoRoot, copy: string, dirs: readonly string[]): Promise<"fits" | "gitlinks" | "entries below"> {
  // each record of `ls-files -s -z` starts with the mode; the listing (9 MB on 90k files) is scanned as it comes
  let before = Buffer.from([0]); // the stream's start is a record's start
  const gitlinks = await gitScan(["ls-files", "-s", "-z"], { cwd: repo.root, env: { GIT_INDEX_FILE: copy } }, (chunk) => {
    const bytes = Buffer.concat([before, chunk]);
    before = bytes.subarray(Math.max(0, bytes.length - 7));
    return bytes.indexOf("\x00160000 ", 0, "latin1") >= 0;
  });
  if (gitlinks) return "gitlinks";
  return (await entriesBelow(repo, copy, dirs)) ? "entries below" : "fits";
}

/** The directories a watch skips, and what they stay skipped by. */
interface Skipped {
  /** Excluded by a pattern of their own (watch-ignored.ts). */
  dirs: string[];
  /** The state directory, ignored by its own `.gitignore`. */
  own: string[];
  /** The files outside the tree git's answer depends on, and their identity when the watch started. */
  rules: string[];
  signature: string;
}

/**
 * Whether a take names a `.gitignore` that can change what the watch may skip: any, while it skips directories
 * git excludes; the state directory's own.
 */
function rulesTouched(taken: Taken, skipped: Pick<Skipped, "dirs" | "own">): boolean {
  if (taken.kind !== "changes") return false;
  const rule = (p: string) => p === ".gitignore" || p.endsWith("/.gitignore");
  return taken.paths.some((p) => rule(p) && (skipped.dirs.length > 0 || skipped.own.includes(p.slice(0, -"/.gitignore".length))));
}

function hookPath(repo: RepoRoot): string {
  return join(repo.stateDir, "git", "fsmonitor-hook");
}

/** Hooks this process found or wrote with today's text. */
const hooksWritten = new Set<string>();

function ensureHook(repo: RepoRoot): void {
  const path = hookPath(repo);
  if (hooksWritten.has(path) && existsSync(path)) return; // (`.mcp/` may have been removed since)
  let current: string | null = null;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    // not written yet
  }
  if (current !== HOOK) {
    mkdirSync(join(repo.stateDir, "git"), { recursive: true });
    writeFileUnflushed(repo.stateDir, path, HOOK);
  }
  hooksWritten.add(path);
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Starts and restarts the watch of one root: the directories it may skip are listed, the watch walks the tree,
 * and the list is taken again once every directory is watched (a rule changed before a watch saw it would
 * otherwise go unseen); a watch whose skipped directories may no longer be excluded is replaced by a new one a
 * second later. Never with a git older than 2.26 (the hook speaks protocol 2).
 */
class WatchKeeper {
  current: StatusWatch | null = null;
  readonly counts = { full: 0, told: 0, same: 0 };
  private closed = false;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;

  constructor(
    private readonly repo: RepoRoot,
    private readonly budget: number,
  ) {
    this.launch();
  }

  private launch(): void {
    this.start().then(
      (sw) => {
        if (this.closed) sw?.close();
        else this.current = sw;
      },
      () => this.again(),
    );
  }

  private async start(): Promise<StatusWatch | null> {
    if (!(await speaksProtocol2(this.repo))) return null;
    const state = relative(this.repo.root, this.repo.stateDir).split("\\").join("/");
    // the state directory, when it lies in the tree, is watched without its contents
    const own = state !== "" && !state.startsWith("..") ? [state] : [];
    const rules = await ruleFiles(this.repo);
    const signature = ruleSignature(rules);
    const dirs = await excludedDirectories(this.repo, own);
    if (this.closed) return null;
    const watch = TreeWatch.start(this.repo.root, [...own, ...dirs], this.budget);
    if (watch === null) return null;
    let outdated = false;
    const look = (taken: Taken) => {
      if (rulesTouched(taken, { dirs, own })) outdated = true;
      return taken.kind;
    };
    // the first walk
    for (;;) {
      const kind = look(watch.take(-1));
      if (kind === "failed" || this.closed) {
        watch.close();
        return null;
      }
      if (kind === "changes") break;
      await Bun.sleep(50);
    }
    if (dirs.length > 0) {
      const again = new Set(await excludedDirectories(this.repo, own));
      if (look(watch.take(-1)) === "failed") outdated = true;
      if (outdated || this.closed || ruleSignature(rules) !== signature || dirs.some((d) => !again.has(d))) {
        watch.close();
        if (!this.closed) this.again();
        return null;
      }
    }
    this.failures = 0;
    return new StatusWatch(this.repo, watch, { dirs, own, rules, signature }, this.counts, () => {
      this.current = null;
      this.again();
    });
  }

  /** Another start a second from now; after five in a row that found the rules moving, none. */
  private again(): void {
    if (this.closed || this.retry !== null || ++this.failures > 5) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.closed) this.launch();
    }, 1000);
    this.retry.unref?.();
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.current?.close();
    this.current = null;
  }
}

const watches = new Map<string, WatchKeeper>();

/** Whether statuses may use a watch at all here (tests turn it off to compare). */
let enabled = process.env.WORKSNAP_WATCH !== "0";

/** Tests only: statuses with or without watches from now on (watches already started stay until stopped). */
export function configureStatusWatch(opts: { enabled: boolean }): void {
  enabled = opts.enabled;
}

/**
 * Starts the watch of a long-lived process's workspace (the caller checked the platform and the file system),
 * when the root is the work tree's top. Private copies left by processes that are gone are removed. Returns
 * what stops it.
 */
export function startStatusWatch(repo: RepoRoot, budget = watchBudget()): () => void {
  if (!enabled || !repo.gitDir || repo.gitPrefix !== "" || watches.has(repo.root)) return () => undefined;
  removeOrphans(repo);
  const keeper = new WatchKeeper(repo, budget);
  watches.set(repo.root, keeper);
  return () => {
    if (watches.get(repo.root) === keeper) watches.delete(repo.root);
    keeper.close();
  };
}

/** The watched run for a status on the shared copy `shared` of `repo`, or null when there is none. */
export function watchedRun(repo: RepoRoot, shared: string): WatchedRun | null {
  if (!enabled) return null;
  return watches.get(repo.root)?.current?.prepare(shared) ?? null;
}

/**
 * How many statuses of `repo` ran with its watch, told everything or only what it saw, how many found nothing
 * changed and gave the last one's answer without running git, and the kernel watches its current watch holds
 * (0 while none runs); null without a watch.
 */
export function statusWatchCounts(repo: RepoRoot): { full: number; told: number; same: number; watches: number } | null {
  const keeper = watches.get(repo.root);
  return keeper ? { ...keeper.counts, watches: keeper.current?.watches() ?? 0 } : null;
}

/** The name of a watch's private copy of the index starts so, then `<pid>-<nonce>`. */
const PRIVATE_PREFIX = "watch-index-";

function removeOrphans(repo: RepoRoot): void {
  const dir = join(repo.stateDir, "git");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(PRIVATE_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(PRIVATE_PREFIX.length), 10);
    if (pid !== process.pid && !processAlive(pid)) rmSync(join(dir, name), { force: true });
  }
}
