/**
 * The process's umask, read once and without changing it where the system allows. `process.umask()` reads it
 * by setting it to 0 and back (strace: `umask(000)`, `umask(022)`), so a file or directory another thread creates
 * in between (the I/O threads write a patch's staged files while the JavaScript thread goes on) gets its mode
 * with no umask at all: a directory 0777. The write path asked for it once per file. worksnap never sets its
 * umask, so it is read once: from /proc/self/status where Linux gives it (nothing changed), else by
 * `process.umask()` at first use.
 */
import { readFileSync } from "node:fs";

let known: number | undefined;

export function processUmask(): number {
  known ??= fromProcStatus() ?? process.umask();
  return known;
}

function fromProcStatus(): number | null {
  try {
    const m = /^Umask:\s*([0-7]+)$/m.exec(readFileSync("/proc/self/status", "latin1"));
    return m ? parseInt(m[1]!, 8) : null;
  } catch {
    return null; // not Linux (macOS has no /proc)
  }
}
