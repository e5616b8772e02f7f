/**
 * Reads a file descriptor to its end, or until more than `limit` bytes are
 * in, into `buf`, doubling it as needed; returns the buffer holding the bytes
 * (the one given, or a larger one) and how many there are. Self-contained:
 * reader threads (reader-pool.ts) and regex children (regex-child.ts) get it
 * as source text, so it uses nothing but its arguments.
 */
export function readToEnd(fs: typeof import("node:fs"), fd: number, buf: Buffer, limit: number): { buf: Buffer; len: number } {
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (len > limit) break;
      const grown = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(grown, 0, 0, len);
      buf = grown;
    }
    const got = fs.readSync(fd, buf, len, buf.length - len, null);
    if (got === 0) break;
    len += got;
  }
  return { buf, len };
}
