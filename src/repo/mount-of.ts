/**
 * Which mount a directory held open lies on. A rename from one mount to
 * another fails (EXDEV) even where both show the same file system (st_dev):
 * a directory of the work tree bind-mounted (`mount --bind`, a container's
 * volume inside a checkout) is one file system reached through two mounts.
 * Linux names the mount of a descriptor in /proc/self/fdinfo (`mnt_id`);
 * where that cannot be read (macOS has no bind mounts: another mount is
 * another device) the device stands for the mount.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const INFO_BYTES = 512;
const info = new Uint8Array(INFO_BYTES);
let fdinfoWorks = process.platform === "linux";

/** A key equal for two descriptors exactly when a rename between their directories stays on one mount. */
export function mountOf(fd: number): string {
  const dev = fstatSync(fd).dev;
  const mnt = fdinfoWorks ? mountId(fd) : null;
  return mnt === null ? `${dev}` : `${dev}:${mnt}`;
}

/**
 * The `mnt_id` of /proc/self/fdinfo/FD; null where /proc has none (no /proc
 * mounted, a kernel before 3.15), and then never asked again. Any other
 * failure (no descriptor free) is the caller's.
 */
function mountId(fd: number): string | null {
  let f = -1;
  try {
    f = openSync(`/proc/self/fdinfo/${fd}`, "r");
    const n = readSync(f, info, 0, INFO_BYTES, 0);
    const m = /(?:^|\n)mnt_id:\s*(\d+)/.exec(Buffer.from(info.buffer, 0, n).toString("latin1"));
    if (m) return m[1]!;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  } finally {
    if (f >= 0) closeSync(f);
  }
  fdinfoWorks = false;
  return null;
}
