/**
 * Entries of a git index file, read from the file itself (git's
 * index-format.txt: versions 2, 3 and 4, object ids of SHA-1 or SHA-256)
 * through a reused window rather than whole: a 13 MB index read into new
 * memory costs about 70 ms of page faults on the benchmark machine, the
 * window about 9 ms. Only the entries a caller picks (by their flags and
 * mode) have their names decoded. A split index ("link" extension: the
 * entries partly in a shared file), an unknown version or an index that does
 * not parse gives null: the caller cannot tell.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** One picked entry: its path as the index stores it (from the top of the work tree), its flags and mode. */
export interface IndexEntry {
  path: string;
  /** The 16-bit flags (CE_VALID: assume-unchanged). */
  flags: number;
  /** The extended flags of versions 3 and 4 (CE_SKIP_WORKTREE), else 0. */
  extended: number;
  /** The mode as git stores it (0o100644, 0o100755, 0o120000, 0o160000). */
  mode: number;
}

/** Which entries to decode: from their flags, extended flags and mode. */
export type Pick = (flags: number, extended: number, mode: number) => boolean;

export const CE_VALID = 0x8000;
const CE_EXTENDED = 0x4000;
const CE_NAMEMASK = 0x0fff;
export const CE_SKIP_WORKTREE = 0x4000;
/** ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size: ten 32-bit fields */
const STAT_BYTES = 40;
/** where the mode lies in them */
const MODE_AT = 24;

/** The entries `pick` takes of an index file's bytes, in index order; null when the bytes are not an index this reader understands. */
export function indexEntries(index: Uint8Array, pick: Pick): IndexEntry[] | null {
  return readIndex(() => new Window(index), pick);
}

/** indexEntries of the index file at `path`, read through one reused window; null as above, and when the file cannot be read. */
export function indexEntriesOfFile(path: string, pick: Pick, windowBytes = 1 << 20): IndexEntry[] | null {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const file = fd;
    return readIndex(() => new Window(new Uint8Array(windowBytes), file), pick);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** The version in an index file's header (12 bytes read); null when it has none or cannot be read. */
export function indexVersion(indexPath: string): number | null {
  let fd: number | null = null;
  try {
    fd = openSync(indexPath, "r");
    const head = new Uint8Array(12);
    if (readSync(fd, head, 0, 12, 0) !== 12 || u32(head, 0) !== 0x44495243) return null;
    return u32(head, 4);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Object ids of 20 bytes are tried first, then 32 (a SHA-256 repository): only the right size reads every entry
 * and ends where the extensions or the checksum begin.
 */
function readIndex(open: () => Window, pick: Pick): IndexEntry[] | null {
  const w = open();
  const head = w.at(0, 12);
  if (head < 0 || u32(w.buf, head) !== 0x44495243) return null; // "DIRC"
  const version = u32(w.buf, head + 4);
  if (version < 2 || version > 4) return null;
  return readEntries(w, version, 20, pick) ?? readEntries(open(), version, 32, pick);
}

/**
 * A file's bytes through a window: `at(pos, n)` makes bytes [pos, pos + n) of the file available in `buf` and
 * gives where they start there (-1 past the end). Positions only move forward. Over bytes in memory, the window
 * is the bytes.
 */
class Window {
  /** the file offset of buf[0], and how many bytes of buf hold the file */
  private start = 0;
  private held: number;
  readonly size: number;

  constructor(
    public buf: Uint8Array,
    private readonly fd: number | null = null,
  ) {
    this.held = fd === null ? buf.length : 0;
    this.size = fd === null ? buf.length : fstatSync(fd).size;
  }

  at(pos: number, n: number): number {
    if (pos + n > this.size) return -1;
    if (pos >= this.start && pos + n <= this.start + this.held) return pos - this.start;
    // keep the bytes from pos on, then fill the rest of the window
    const keep = pos >= this.start && pos < this.start + this.held ? this.start + this.held - pos : 0;
    if (n > this.buf.length) {
      const bigger = new Uint8Array(Math.max(n, this.buf.length * 2));
      bigger.set(this.buf.subarray(pos - this.start, pos - this.start + keep));
      this.buf = bigger;
    } else if (keep > 0) this.buf.copyWithin(0, pos - this.start, pos - this.start + keep);
    this.start = pos;
    this.held = keep;
    while (this.held < n) {
      const got = readSync(this.fd as number, this.buf, this.held, this.buf.length - this.held, this.start + this.held);
      if (got <= 0) return -1;
      this.held += got;
    }
    return 0;
  }

  /** The file position of the first NUL at or after `pos`, or -1 before the end of the file. */
  nulFrom(pos: number): number {
    for (let from = pos; from < this.size; ) {
      const i = this.at(from, 1);
      const j = this.buf.indexOf(0, i);
      if (j >= 0 && j < this.held) return from + (j - i);
      from = this.start + this.held;
    }
    return -1;
  }
}

function u32(b: Uint8Array, at: number): number {
  return (((b[at] as number) << 24) | ((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)) >>> 0;
}

function u16(b: Uint8Array, at: number): number {
  return ((b[at] as number) << 8) | (b[at + 1] as number);
}

function readEntries(w: Window, version: number, oidBytes: number, pick: Pick): IndexEntry[] | null {
  const count = u32(w.buf, w.at(8, 4));
  const end = w.size - oidBytes; // the trailing checksum
  const out: IndexEntry[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const fixed = STAT_BYTES + oidBytes + 2;
  // version 4: the previous entry's name, which the next one's starts with
  let previous = new Uint8Array(256);
  let previousLength = 0;
  let pos = 12;
  for (let n = 0; n < count; n++) {
    const start = pos;
    // the fixed part, an extended flags field if any, and a version 4 name's varint (at most 5 bytes here)
    let i = w.at(pos, Math.min(fixed + 2 + 5, end - pos));
    if (i < 0 || pos + fixed > end) return null;
    const flags = u16(w.buf, i + fixed - 2);
    const mode = u32(w.buf, i + MODE_AT);
    let extended = 0;
    pos += fixed;
    i += fixed;
    if (flags & CE_EXTENDED) {
      if (version < 3 || pos + 2 > end) return null;
      extended = u16(w.buf, i);
      pos += 2;
      i += 2;
    }
    const flagged = pick(flags, extended, mode);
    let name: Uint8Array | null = null;
    if (version === 4) {
      // how many bytes to drop from the end of the previous name (git's varint: each continuation adds one
      // before the shift), then the rest of this one, NUL-ended
      if (pos >= end) return null;
      let b = w.buf[i++] as number;
      pos++;
      let drop = b & 0x7f;
      while (b & 0x80) {
        if (pos >= end || drop > 0xffffff) return null;
        b = w.buf[i++] as number;
        pos++;
        drop = (drop + 1) * 128 + (b & 0x7f);
      }
      const nul = w.nulFrom(pos);
      if (nul < 0 || nul >= end || drop > previousLength) return null;
      const kept = previousLength - drop;
      const rest = nul - pos;
      if (kept + rest > previous.length) {
        const bigger = new Uint8Array(Math.max(kept + rest, previous.length * 2));
        bigger.set(previous.subarray(0, kept));
        previous = bigger;
      }
      i = w.at(pos, rest + 1);
      for (let k = 0; k < rest; k++) previous[kept + k] = w.buf[i + k] as number;
      previousLength = kept + rest;
      if (flagged) name = previous.subarray(0, previousLength);
      pos = nul + 1;
    } else {
      const length = flags & CE_NAMEMASK;
      const nul = length < CE_NAMEMASK ? pos + length : w.nulFrom(pos);
      // NULs pad the entry to a multiple of eight bytes, at least one
      const next = start + ((nul + 1 - start + 7) & ~7);
      if (nul < 0 || next > end) return null;
      i = w.at(pos, next - pos);
      for (let k = i + (nul - pos); k < i + (next - pos); k++) if (w.buf[k] !== 0) return null;
      if (flagged) name = w.buf.subarray(i, i + (nul - pos));
      pos = next;
    }
    if (name !== null) {
      let path: string;
      try {
        path = decoder.decode(name);
      } catch {
        return null; // a picked name that is not UTF-8: nothing here can name it faithfully
      }
      out.push({ path, flags, extended, mode });
    }
  }
  // then extensions (a four-byte signature, a 32-bit size, the data) up to the checksum
  while (pos < end) {
    const i = w.at(pos, 8);
    if (i < 0 || pos + 8 > end) return null;
    const b = w.buf;
    if (b[i] === 0x6c && b[i + 1] === 0x69 && b[i + 2] === 0x6e && b[i + 3] === 0x6b) return null; // "link": a split index, some entries in the shared file
    pos += 8 + u32(b, i + 4);
  }
  return pos === end ? out : null;
}
