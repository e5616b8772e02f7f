/**
 * A real file system that folds the case of names, as macOS's default one does (case-insensitive,
 * case-preserving): an exFAT image on a loop device, mounted through FUSE (exfat-fuse) before a test
 * file's tests and unmounted after them. Root on Linux only (`canMount`); the tests that need it skip
 * elsewhere. exFAT also has no executable bit and no symlinks, so git sets core.ignoreCase,
 * core.fileMode false and core.symlinks false in a repository made on it, as it does on such a drive.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CaseFoldingFs {
  readonly canMount: boolean;
  /** Where it is mounted, once mounted. */
  readonly path: string;
  readonly mounted: boolean;
  /** Why mounting failed (the tests expect `mounted` and show this). */
  readonly failure: string;
  /** A new empty directory on it. */
  dir(name: string): string;
}

export function caseFoldingFsForTests(size = "64M"): CaseFoldingFs {
  const canMount = process.platform === "linux" && process.getuid?.() === 0;
  let base = "";
  let path = "";
  let loop = "";
  let mounted = false;
  let failure = "";
  let made = 0;
  const run = (cmd: string[]) => {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().trim()}`);
    return r.stdout.toString().trim();
  };
  beforeAll(() => {
    if (!canMount) return;
    base = mkdtempSync(join(tmpdir(), "ws-exfat-"));
    path = join(base, "mnt");
    mkdirSync(path);
    const image = join(base, "exfat.img");
    try {
      run(["truncate", "-s", size, image]);
      run(["mkfs.exfat", image]);
      loop = run(["losetup", "-f", "--show", image]);
      run(["mount.exfat-fuse", loop, path]);
      mounted = true;
    } catch (err) {
      failure = (err as Error).message;
    }
  });
  afterAll(() => {
    if (mounted) Bun.spawnSync(["umount", "-l", path]);
    if (loop) Bun.spawnSync(["losetup", "-d", loop]);
    if (base) rmSync(base, { recursive: true, force: true });
  });
  return {
    canMount,
    get path() {
      return path;
    },
    get mounted() {
      return mounted;
    },
    get failure() {
      return failure;
    },
    dir(name) {
      const d = join(path, `${name}-${++made}`);
      mkdirSync(d);
      return d;
    },
  };
}
