// The floor of a worktree call, as the benchmarks time it: the fingerprint's `git status` on worksnap's copy of the
// index (src/repo/status-index.ts), the same status told by git's fsmonitor hook that nothing changed (what a
// server whose watch saw nothing pays: src/repo/status-watch.ts), beside the plain `git status` a user runs.

import { copyFileSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COPY_CONFIG, STATUS_ARGS } from "../src/repo/status-index";

function timed(cmd: string[], cwd: string, env?: Record<string, string>): number {
  const t = Bun.nanoseconds();
  const r = Bun.spawnSync(cmd, { cwd, stdout: "ignore", stderr: "pipe", env: env ? { ...process.env, ...env } : undefined });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().slice(0, 500)}`);
  return (Bun.nanoseconds() - t) / 1e6;
}

/** `git status` as a user runs it, in ms. */
export function plainStatus(dir: string): number {
  return timed(["git", "status", "--porcelain=v1", "-z"], dir);
}

/**
 * The status a worktree call runs in a warm server, in ms: on worksnap's copy of the index, with git's untracked
 * cache; the copy as the server left it, not written by this run (optional locks off).
 */
export function statusOnCopy(dir: string): number {
  return timed(["git", ...COPY_CONFIG, ...STATUS_ARGS], dir, { GIT_INDEX_FILE: sharedCopy(dir), GIT_OPTIONAL_LOCKS: "0" });
}

/** The server's shared copy of the index. */
function sharedCopy(dir: string): string {
  const gitDir = join(dir, ".mcp", "git");
  const copy = readdirSync(gitDir).find((n) => n.startsWith("status-index-") && !n.endsWith(".lock")); // not one git is writing
  if (copy === undefined) throw new Error("the server made no copy of the index for its status");
  return join(gitDir, copy);
}

/** Per shared copy (and its mtime), a copy of it that holds the token below, and the hook's files. */
const told = new Map<string, { env: Record<string, string>; config: string[] }>();

/**
 * The status of a server whose watch saw nothing change, in ms: on a copy of the shared copy, git's fsmonitor hook
 * (protocol 2) answering its token with no path, so git reads the index and looks at no file. Set up once per copy
 * (a first status, untimed, that writes the token).
 */
export function statusToldNothing(dir: string): number {
  const shared = sharedCopy(dir);
  const key = `${shared}@${statSync(shared).mtimeMs}`;
  let run = told.get(key);
  if (run === undefined) {
    const scratch = mkdtempSync(join(tmpdir(), "ws-floor-"));
    const copy = join(scratch, "index");
    copyFileSync(shared, copy);
    const hook = join(scratch, "hook");
    writeFileSync(hook, `if [ "$2" = floor ]; then printf 'floor\\0'; else printf 'floor\\0/\\0'; fi\n`);
    run = {
      env: { GIT_INDEX_FILE: copy, GIT_OPTIONAL_LOCKS: "1" },
      config: [...COPY_CONFIG, "-c", `core.fsmonitor=. '${hook}'`, "-c", "core.fsmonitorHookVersion=2"],
    };
    timed(["git", ...run.config, ...STATUS_ARGS], dir, run.env); // the first status: everything, the token written
    told.set(key, run);
  }
  return timed(["git", ...run.config, ...STATUS_ARGS], dir, run.env);
}
