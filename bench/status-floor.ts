// The floor of a worktree call, as the benchmarks time it: the fingerprint's `git status` on worksnap's copy of the
// index (src/repo/status-index.ts), beside the plain `git status` a user runs.

import { readdirSync } from "node:fs";
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
  const gitDir = join(dir, ".mcp", "git");
  const copy = readdirSync(gitDir).find((n) => n.startsWith("status-index-"));
  if (copy === undefined) throw new Error("the server made no copy of the index for its status");
  return timed(["git", ...COPY_CONFIG, ...STATUS_ARGS], dir, { GIT_INDEX_FILE: join(gitDir, copy), GIT_OPTIONAL_LOCKS: "0" });
}
