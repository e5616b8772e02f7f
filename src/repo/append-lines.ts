import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";

/** How far back from the end one read looks for the end of the last whole line. */
const TAIL_CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Whole lines appended to an existing file of "\n"-terminated lines, durable
 * when this returns, under the caller's lock (one writer at a time). Costs the
 * new bytes, not the file: a log that grows by a few lines per call is not
 * written again whole each time.
 *
 * - A last line without its "\n" is the rest of an append a crash cut short:
 *   it is cut off first (readers never count such a line: they take the
 *   file up to its last "\n"), so the new lines start on a line of their own.
 * - The lines are written at the end and flushed (data and size) before the
 *   call returns.
 * - A write that fails (a full disk half way) is taken back: the file is cut
 *   to its length before the call, so a failure adds nothing. If even that
 *   cut fails (a file system failing: it only shortens the file), the error
 *   carries `torn`: whole lines written before the failure may remain.
 *
 * `text` must end with "\n". Returns the file's length after the append and
 * how many bytes of an unfinished line were cut.
 */
export function appendLines(path: string, text: Uint8Array): { size: number; cut: number } {
  if (text.length > 0 && text[text.length - 1] !== NEWLINE) throw new Error("appendLines: the text must end with a newline");
  const fd = openSync(path, "r+");
  try {
    const found = fstatSync(fd).size;
    const whole = wholeLinesEnd(fd, found);
    if (whole < found) ftruncateSync(fd, whole);
    let off = 0;
    try {
      while (off < text.length) off += writeSync(fd, text, off, text.length - off, whole + off);
      fdatasyncSync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, whole);
      } catch {
        if (off > 0) Object.assign(err as object, { torn: true });
      }
      throw err;
    }
    return { size: whole + text.length, cut: found - whole };
  } finally {
    closeSync(fd);
  }
}

/** Where the file's last whole line ends: its length when it ends with "\n", else just after its last "\n" (0 if none). */
function wholeLinesEnd(fd: number, size: number): number {
  if (size === 0) return 0;
  const last = Buffer.allocUnsafe(1);
  if (readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === NEWLINE) return size; // the usual case: one byte read
  const buf = Buffer.allocUnsafe(Math.min(TAIL_CHUNK, size));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - buf.length);
    const n = readSync(fd, buf, 0, end - start, start);
    if (n !== end - start) throw new Error(`appendLines: short read at ${start}`);
    const at = buf.lastIndexOf(NEWLINE, n - 1);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}
