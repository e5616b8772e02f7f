import { STATUS_ARGS } from "../../src/repo/fingerprint";

/**
 * The reference a status is held to: git's own `git status` with worksnap's flags, on the user's index, without
 * the untracked cache or a monitor, never writing the index. Its raw bytes (`-z`, paths as git printed them).
 */
export function plainStatusBytes(root: string): Buffer {
  const r = Bun.spawnSync(["git", "-c", "core.untrackedCache=false", "-c", "core.fsmonitor=false", ...STATUS_ARGS], {
    cwd: root,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
  });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return r.stdout;
}

/** plainStatusBytes as text, one character per byte (latin1: a name that is not UTF-8 compares exactly). */
export function plainStatus(root: string): string {
  return plainStatusBytes(root).toString("latin1");
}
