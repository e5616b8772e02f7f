/**
 * Walking a file's bytes by lines without splitting it: the offsets the
 * history's diffs (placed-diff.ts, and the islands of record-diff.ts) need
 * around the few places a change touches. A line ends with "\n", except a
 * last line without one.
 */

const NL = 10;

/** Lines that end in buf[from, to) (newlines counted). */
export function countLines(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let p = buf.indexOf(NL, from); p >= 0 && p < to; p = buf.indexOf(NL, p + 1)) n++;
  return n;
}

/** Byte offset after `lines` more lines from the line start `at` (or the end). */
export function afterLines(buf: Buffer, at: number, lines: number): number {
  let p = at;
  for (let k = 0; k < lines && p < buf.length; k++) {
    const nl = buf.indexOf(NL, p);
    p = nl < 0 ? buf.length : nl + 1;
  }
  return p;
}

/** Byte offset `lines` lines before the line start `at` (or 0). */
export function beforeLines(buf: Buffer, at: number, lines: number): number {
  let p = at;
  // (A negative offset would make lastIndexOf search from the end.)
  for (let k = 0; k < lines && p > 0; k++) p = p < 2 ? 0 : buf.lastIndexOf(NL, p - 2) + 1;
  return p;
}

/** The offset exactly `n` lines after the line start `at`, or -1 when the buffer has fewer lines. */
export function skipLines(buf: Buffer, at: number, n: number): number {
  let p = at;
  for (let k = 0; k < n; k++) {
    if (p >= buf.length) return -1;
    const nl = buf.indexOf(NL, p);
    p = nl < 0 ? buf.length : nl + 1;
  }
  return p;
}
