/**
 * A Worker started only while the process has file descriptors to spare.
 *
 * A worker's thread makes its own event loop (2 descriptors). When it cannot,
 * Bun ends the whole process ("bun ran out of file descriptors
 * (ProcessFdQuotaExceeded)", exit 1): no exception reaches JavaScript, so
 * nothing can catch it. The TypeScript paths (the darwin executables) start
 * workers for captures, grep's reads, exports and the grep index's build, so a
 * server starved of descriptors (a flood under a low `ulimit -n`) died where
 * the native module's threads answered BUSY. Before a worker starts, the
 * process opens DESCRIPTOR_MARGIN descriptors and closes them again; when it
 * cannot, the start is refused with EMFILE, the shortage every caller already
 * handles (a fallback to the JavaScript thread, or a BUSY answer to retry).
 * The margin is eight workers' worth: what other threads of this process
 * would have to take between the check and the worker's start for it to fail.
 */
import { closeSync, openSync } from "node:fs";
import { isDescriptorShortage } from "../core/errors";

export const DESCRIPTOR_MARGIN = 16;

export function startWorker(url: string | URL): Worker {
  if (!descriptorsToSpare(DESCRIPTOR_MARGIN)) {
    throw Object.assign(new Error("EMFILE: too many open files, a worker thread not started"), { code: "EMFILE" });
  }
  return new Worker(url);
}

/** Whether `n` more descriptors can be opened right now (yes when the probe itself cannot tell: /dev/null refused). */
function descriptorsToSpare(n: number): boolean {
  const held: number[] = [];
  try {
    for (let k = 0; k < n; k++) held.push(openSync("/dev/null", "r"));
    return true;
  } catch (err) {
    return !isDescriptorShortage(err);
  } finally {
    for (const fd of held) closeSync(fd);
  }
}
