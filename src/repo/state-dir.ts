import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomId128 } from "../core/hash";

/**
 * `.mcp/` holds all of worksnap's state (DESIGN decision 5). Its `.gitignore`
 * holds `*`, so git never reports our bookkeeping and the fingerprint is not
 * changed by it. Temp files live in `.mcp/tmp/`, named after the writing
 * process, so a crashed writer's leftovers are recognised and removed.
 */
const prepared = new Set<string>();

export function ensureStateDir(stateDir: string): void {
  if (prepared.has(stateDir) && existsSync(join(stateDir, "tmp"))) return;
  mkdirSync(join(stateDir, "tmp"), { recursive: true });
  const ignore = join(stateDir, ".gitignore");
  if (!existsSync(ignore)) {
    const tmp = tempPath(stateDir, "gitignore");
    const fd = openSync(tmp, "w", 0o644);
    try {
      writeSync(fd, "*\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, ignore);
  }
  prepared.add(stateDir);
}

/**
 * A path inside the state directory as an error names it: repo-relative
 * (`.mcp/locks/worktree.lock`), never the machine's absolute path. Everything
 * of ours lives under `<root>/.mcp/`, and nothing below it is named `.mcp`.
 */
export function shownStatePath(abs: string): string {
  const at = abs.lastIndexOf("/.mcp/");
  return at < 0 ? abs : abs.slice(at + 1);
}

/** A fresh temp path inside `.mcp/tmp/`; the pid prefix lets cleanup find orphans. */
export function tempPath(stateDir: string, tag: string): string {
  return join(stateDir, "tmp", `${process.pid}-${randomId128().slice(0, 12)}-${tag.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40)}`);
}

/** Whether a process id names a live process (one we may not signal still counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes temp files left by processes that no longer run (crash mid-write). */
export function cleanStaleTemps(stateDir: string): number {
  const dir = join(stateDir, "tmp");
  if (!existsSync(dir)) return 0;
  let removed = 0;
  for (const name of readdirSync(dir)) {
    const pid = Number.parseInt(name.split("-")[0] ?? "", 10);
    if (Number.isFinite(pid) && pid !== process.pid && !processAlive(pid)) {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed++;
    } else if (!Number.isFinite(pid)) {
      const age = Date.now() - statSync(join(dir, name)).mtimeMs;
      if (age > 24 * 3600 * 1000) {
        rmSync(join(dir, name), { recursive: true, force: true });
        removed++;
      }
    }
  }
  return removed;
}
