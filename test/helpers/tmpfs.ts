/**
 * A real full file system for a test file: a small tmpfs mounted before its tests and unmounted after them
 * (root on Linux only: elsewhere `canMount` is false and the tests that need it skip), and a filler file
 * beside what the tests write that leaves a chosen amount of room.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Tmpfs {
  /** Whether this machine lets the tests mount one (describe.skipIf(!canMount)). */
  readonly canMount: boolean;
  /** The mount point, once mounted. */
  readonly path: string;
  readonly mounted: boolean;
  /** Kilobytes free on the mount. */
  freeKb(): number;
  /** Fills the mount (with a file outside what the tests write) until about `kb` KB are left free. */
  leave(kb: number): void;
  /** Removes the filler. */
  unfill(): void;
}

export function tmpfsForTests(size: string, prefix: string): Tmpfs {
  const canMount = process.platform === "linux" && process.getuid?.() === 0;
  let path = "";
  let mounted = false;
  beforeAll(() => {
    if (!canMount) return;
    path = mkdtempSync(join(tmpdir(), prefix));
    mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", path]).exitCode === 0;
  });
  afterAll(() => {
    if (mounted) Bun.spawnSync(["umount", "-l", path]);
    if (path) rmSync(path, { recursive: true, force: true });
  });
  const fs: Tmpfs = {
    canMount,
    get path() {
      return path;
    },
    get mounted() {
      return mounted;
    },
    freeKb() {
      const out = Bun.spawnSync(["df", "-k", "--output=avail", path]).stdout.toString().trim().split("\n");
      return Number(out[out.length - 1]);
    },
    leave(kb) {
      fs.unfill();
      const free = fs.freeKb();
      if (free > kb) writeFileSync(join(path, "filler"), Buffer.alloc((free - kb) * 1024));
    },
    unfill() {
      rmSync(join(path, "filler"), { force: true });
    },
  };
  return fs;
}
