/**
 * The index entries git status does not look at: assume-unchanged (the
 * entry's CE_VALID bit) and skip-worktree (an extended flag, in indexes of
 * version 3 and 4), read from the index file itself (git's
 * index-format.txt), for worksnap's status on its copy of the index
 * (skipWorktreeMayBePresent, status-index.ts). A split index ("link"
 * extension: the entries partly in a shared file), an unknown version or an
 * index that does not parse gives null: the caller cannot tell.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { searchUtf8 } from "../core/byte-order";
import { isMissingPath } from "../core/errors";
import { writeCacheFile } from "./cache-file";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";
import { ensureStateDir } from "./state-dir";

/** One flagged entry: its path as the index stores it, and which flags it carries. */
export interface HiddenEntry {
  path: string;
  assumeUnchanged: boolean;
  skipWorktree: boolean;
}

const CE_VALID = 0x8000;
const CE_EXTENDED = 0x4000;
const CE_NAMEMASK = 0x0fff;
const CE_SKIP_WORKTREE = 0x4000;
/** ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size: ten 32-bit fields */
const STAT_BYTES = 40;

/**
 * The flagged entries of an index file's bytes, in index order; null when the
 * bytes are not an index this reader understands (see above).
 */
export function hiddenEntries(index: Uint8Array): HiddenEntry[] | null {
  return readIndex(() => new Window(index));
}

/**
 * hiddenEntries of the index file at `path`, read through one reused window
 * of 1 MiB: a 13 MB index read whole into new memory costs about 70 ms of
 * page faults on the benchmark machine, the window about 9 ms. null as above,
 * and when the file cannot be read.
 */
export function hiddenEntriesOfFile(path: string, windowBytes = 1 << 20): HiddenEntry[] | null {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const file = fd;
    return readIndex(() => new Window(new Uint8Array(windowBytes), file));
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
function readIndex(open: () => Window): HiddenEntry[] | null {
  const w = open();
  const head = w.at(0, 12);
  if (head < 0 || u32(w.buf, head) !== 0x44495243) return null; // "DIRC"
  const version = u32(w.buf, head + 4);
  if (version < 2 || version > 4) return null;
  return readEntries(w, version, 20) ?? readEntries(open(), version, 32);
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

function readEntries(w: Window, version: number, oidBytes: number): HiddenEntry[] | null {
  const count = u32(w.buf, w.at(8, 4));
  const end = w.size - oidBytes; // the trailing checksum
  const out: HiddenEntry[] = [];
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
    let extended = 0;
    pos += fixed;
    i += fixed;
    if (flags & CE_EXTENDED) {
      if (version < 3 || pos + 2 > end) return null;
      extended = u16(w.buf, i);
      pos += 2;
      i += 2;
    }
    const flagged = (flags & CE_VALID) !== 0 || (extended & CE_SKIP_WORKTREE) !== 0;
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
        return null; // a flagged name that is not UTF-8: nothing here can name it faithfully
      }
      out.push({ path, assumeUnchanged: (flags & CE_VALID) !== 0, skipWorktree: (extended & CE_SKIP_WORKTREE) !== 0 });
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

/** What is kept of an index's skip-worktree entries, per version of the index file (its identity). */
interface SkipWorktree {
  identity: string;
  /**
   * Where they are to be looked for in the work tree, from its top: the path of each present one and the
   * top-most absent path above each absent one (presentSkipWorktree); null when the index could not be read or
   * there are more than MAX_MARKS.
   */
  marks: string[] | null;
}

/** More places to look at than this (a sparse checkout by file, not by directory): a status cannot tell cheaply. */
const MAX_MARKS = 4096;

/** The places last found per index file: a server asks about the same index again and again. */
const known = new Map<string, SkipWorktree>();

/**
 * The skip-worktree entries' places for the repository's index while its identity (index-identity.ts) is
 * `identity`: read from the file once per version of it, then kept in memory and in
 * `.mcp/cache/skip-worktree.json` for the next process. null when it is no longer the file of that identity.
 */
function skipWorktreeOf(repo: RepoRoot, identity: string): SkipWorktree | null {
  const indexPath = join(repo.gitDir as string, "index");
  const cached = known.get(indexPath);
  if (cached?.identity === identity) return cached;
  const cacheFile = join(repo.stateDir, "cache", "skip-worktree.json");
  try {
    const onDisk = JSON.parse(readFileSync(cacheFile, "utf8")) as Partial<SkipWorktree>;
    if (onDisk.identity === identity && (onDisk.marks === null || (Array.isArray(onDisk.marks) && onDisk.marks.every((m) => typeof m === "string")))) {
      const found = { identity, marks: onDisk.marks };
      known.set(indexPath, found);
      return found;
    }
  } catch {
    // not read yet, or unreadable: read the index
  }
  const entries = hiddenEntriesOfFile(indexPath);
  if (indexIdentity(indexPath) !== identity) return null; // replaced while it was read, or before
  let marks: string[] | null = null;
  if (entries !== null) {
    const { present, absent } = presentSkipWorktree(topOf(repo), entries.filter((e) => e.skipWorktree));
    marks = [...present.map((e) => e.path), ...absent];
    if (marks.length > MAX_MARKS) marks = null;
  }
  const found = { identity, marks };
  known.set(indexPath, found);
  try {
    ensureStateDir(repo.stateDir);
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, cacheFile, JSON.stringify(found));
  } catch {
    // a cache only: the next process reads the index again
  }
  return found;
}

/** The top of the work tree the root lies in (index paths are named from there). */
function topOf(repo: RepoRoot): string {
  return repo.root.slice(0, repo.root.length - repo.gitPrefix.length) || "/";
}

/**
 * Skip-worktree entries (a sparse checkout, or `git update-index --skip-worktree`) split by whether the work tree
 * holds something at their path. git leaves them out of the work tree and out of its status, so the index alone
 * says nothing of them: one absent is not a file of the tree (nor are its directories), one present is read like
 * any file git does not vouch for. Each directory above them is looked at once, from the top, so a sparse
 * checkout's absent directories cost one lstat each, not one per entry. Only a missing path (or one below
 * something that is not a directory) is absent; any other failure leaves the entry to the capture, which names
 * what it cannot read.
 */
export function presentSkipWorktree<E extends { path: string }>(root: string, hidden: readonly E[]): { present: E[]; absent: string[] } {
  const dirs = new Map<string, boolean>();
  const isDir = (dir: string): boolean => {
    let known = dirs.get(dir);
    if (known === undefined) {
      try {
        known = lstatSync(join(root, dir)).isDirectory();
      } catch (err) {
        known = !isMissingPath(err); // not looked into: the entry's own lstat decides
      }
      dirs.set(dir, known);
    }
    return known;
  };
  const present: E[] = [];
  const absent: string[] = [];
  for (let k = 0; k < hidden.length; ) {
    const e = hidden[k] as E;
    let cut: string | null = null;
    for (let i = e.path.indexOf("/"); i >= 0 && cut === null; i = e.path.indexOf("/", i + 1)) {
      const dir = e.path.slice(0, i);
      if (!isDir(dir)) cut = dir;
    }
    if (cut !== null) {
      // the entries below an absent directory come together (byte order): "dir/..." sorts before "dir0", the
      // first name after every one of them
      absent.push(cut);
      k = searchUtf8(hidden, `${cut}0`, pathOf, k + 1);
      continue;
    }
    try {
      lstatSync(join(root, e.path));
      present.push(e);
    } catch (err) {
      if (isMissingPath(err)) absent.push(e.path);
      else present.push(e);
    }
    k++;
  }
  return { present, absent };
}

const pathOf = (e: { path: string }) => e.path;

/**
 * Whether a skip-worktree entry of the index of this identity may have something at its path in the work tree
 * now. git, reading an index, clears the flag of such an entry ("present despite skipped"), and a status that
 * writes the index keeps it cleared: on worksnap's copy of the index (status-index.ts) later statuses would then
 * name that file deleted once it is gone again, while the user's index still skips it and the user's status says
 * nothing. Where an entry may be present, the status runs on the user's index instead.
 *
 * An index of version 2 cannot hold the flag (its header is all that is read); otherwise the places skipWorktreeOf
 * keeps are looked at (a handful of lstats for a sparse checkout by directories). True when it cannot tell.
 */
export function skipWorktreeMayBePresent(repo: RepoRoot, identity: string): boolean {
  if (!repo.gitDir) return false;
  const indexPath = join(repo.gitDir, "index");
  if (known.get(indexPath)?.identity !== identity) {
    const version = indexVersion(indexPath);
    if (version === null) return true;
    if (version === 2) {
      // kept like any other answer for this version of the index: a status asks again and again
      if (indexIdentity(indexPath) === identity) known.set(indexPath, { identity, marks: [] });
      return false;
    }
  }
  const marks = skipWorktreeOf(repo, identity)?.marks ?? null;
  if (marks === null) return true;
  const top = topOf(repo);
  for (const mark of marks) {
    try {
      lstatSync(join(top, mark));
      return true;
    } catch (err) {
      if (!isMissingPath(err)) return true;
    }
  }
  return false;
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
