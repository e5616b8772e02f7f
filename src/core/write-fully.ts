import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `bytes` to `fd`, returning only once every byte is in the file or pipe. A pipe set non-blocking
 * (by the runtime, or by whoever shares it) answers EAGAIN while full: this waits for its reader, 2 ms at a time.
 * Any other failure is thrown as the system gave it.
 */
export function writeFully(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EAGAIN" || code === "EWOULDBLOCK") Atomics.wait(pause, 0, 0, 2);
      else if (code !== "EINTR") throw err;
    }
  }
}
