/**
 * Mounts inside a test's repository, as containers and CI runners make them: a directory of the work tree
 * bind-mounted (one file system reached through another mount, where a rename between the two fails with
 * EXDEV although both show the same device), read-only or not, and a tmpfs (another device). Root on Linux
 * only (`canMount`); the tests that need them skip elsewhere. Every mount made is undone after the file's
 * tests, innermost first, or when the test's scope that holds it ends (`using`).
 */
import { afterAll } from "bun:test";

export interface Mounts {
  readonly canMount: boolean;
  /**
   * `dir` mounted onto itself: another mount of the same file system; read-only when asked. Unmounted when the
   * scope that holds it (`using`) ends, so before a repository declared earlier is removed.
   */
  bind(dir: string, opts?: { readOnly?: boolean }): Disposable;
  /** A new tmpfs at `dir` (empty: whatever `dir` held is hidden until it is unmounted); unmounted as bind's. */
  tmpfs(dir: string, size?: string): Disposable;
  /** Makes a mount made here writable or read-only again. */
  remount(dir: string, opts: { readOnly: boolean }): void;
}

export function mountsForTests(): Mounts {
  const canMount = process.platform === "linux" && process.getuid?.() === 0;
  const made: string[] = [];
  const bound = new Set<string>();
  const run = (cmd: string[]) => {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().trim()}`);
  };
  /** Undoes the mount at `dir` made here (a test's scope ending, or the file's tests, whichever comes first). */
  const unmount = (dir: string, lazy: boolean) => {
    const at = made.lastIndexOf(dir);
    if (at < 0) return;
    made.splice(at, 1);
    Bun.spawnSync(["umount", ...(lazy ? ["-l"] : []), dir]);
  };
  const scoped = (dir: string): Disposable => ({ [Symbol.dispose]: () => unmount(dir, false) });
  afterAll(() => {
    for (const dir of [...made].reverse()) unmount(dir, true);
  });
  return {
    canMount,
    bind(dir, opts = {}) {
      run(["mount", "--bind", dir, dir]);
      made.push(dir);
      bound.add(dir);
      if (opts.readOnly) run(["mount", "-o", "remount,ro,bind", dir]);
      return scoped(dir);
    },
    tmpfs(dir, size = "16m") {
      run(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
      made.push(dir);
      return scoped(dir);
    },
    remount(dir, opts) {
      run(["mount", "-o", `remount,${opts.readOnly ? "ro" : "rw"}${bound.has(dir) ? ",bind" : ""}`, dir]);
    },
  };
}
