import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, readlinkSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { modeOfStat, type FileMode, type RegularMode } from "../core/file-mode";
import { blobIdFromHex, gitBlobHash, type BlobId } from "../core/hash";
import { NOT_REGULAR_FILE, READ_FLAGS, assertRegular, fileChunks } from "./file-chunks";
import { FsBlobStore, freshen } from "./fs-blob-store";
import { tempPath } from "./state-dir";

/** A file the capture has to read: its path, and the index blob id it should equal if clean. */
export interface HashItem {
  index: number;
  path: string;
  gitOid?: string;
  /** The index mode of a clean tracked file; such a file is read without an lstat. */
  mode?: string;
}

export type HashOutcome =
  | { index: number; kind: "ok"; sha256: string; gitOid: string; mode: FileMode; size: number; mtimeMs: number; ctimeMs: number; ino: number; hashedAt: number }
  /**
   * a clean tracked file not read: git's index vouches that it holds the blob the bytes of the item at `leadAt`
   * (its first path) were (blob-followers.ts)
   */
  | { index: number; kind: "vouched"; leadAt: number; blob: BlobId; sha256: string; gitOid: string; mode: RegularMode; size: number }
  | { index: number; kind: "vanished" }
  /** permission denied */
  | { index: number; kind: "denied" }
  /** a FIFO, socket or device where a file was expected: never read as content */
  | { index: number; kind: "special" };

export type HashedFile = Extract<HashOutcome, { kind: "ok" }>;
export type VouchedFile = Extract<HashOutcome, { kind: "vouched" }>;

export interface HashOptions {
  root: string;
  stateDir: string;
  /**
   * A clean tracked file whose ctime, read after its bytes, is older than this
   * (ms since the epoch) has not changed since git found it equal to its index
   * blob, so git's blob hash of it is not computed again. 0 verifies every file.
   */
  trustCleanBefore: number;
}

/** Files above this are hashed in chunks (never loaded whole), which keeps peak memory low. */
export const STREAM_THRESHOLD = 8 * 1024 * 1024;

/**
 * Reads and hashes files: sha256 always; git's blob hash when an index blob id
 * is expected and the file is not trusted to equal it. Content that git does
 * not vouch for goes to the loose store, while the bytes are in hand (or, for
 * a large file, by a second verified pass). Runs inline or inside a hash worker.
 */
export class FileHasher {
  private readonly loose: FsBlobStore;
  private buf = Buffer.allocUnsafe(1 << 20);
  /** with deferred writes: the loose blobs being written (by SHA-256), their bytes, and the first failure */
  private pending: Promise<void>[] = [];
  private readonly writing = new Set<string>();
  pendingBytes = 0;
  private failure: unknown = null;

  constructor(
    private readonly opts: HashOptions,
    /**
     * Loose blobs written on the I/O threads while the next files are read (the main thread's share of a
     * capture): call `written` before the outcomes are relied on.
     */
    private readonly deferWrites = false,
  ) {
    this.loose = new FsBlobStore(opts.stateDir);
  }

  /** Every deferred write done; throws the first that failed (a full disk). */
  async written(): Promise<void> {
    while (this.pending.length > 0) {
      const now = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      await Promise.all(now);
    }
    this.writing.clear();
    if (this.failure !== null) throw this.failure;
  }

  private store(sha256: string, bytes: Uint8Array): void {
    if (!this.deferWrites) return storing(() => this.loose.writeKnown(blobIdFromHex(sha256), bytes));
    if (this.writing.has(sha256)) return; // the same bytes under another path, being written already
    const copy = Buffer.from(bytes); // the read buffer is reused for the next file
    const writing = storing(() => this.loose.writeKnownAsync(blobIdFromHex(sha256), copy));
    if (!writing) return;
    this.writing.add(sha256);
    this.pendingBytes += copy.length;
    this.pending.push(writing.catch((err) => void (this.failure ??= err)));
  }

  hash(item: HashItem): HashOutcome {
    const abs = join(this.opts.root, item.path);
    try {
      if (item.gitOid && (item.mode === "100644" || item.mode === "100755")) return this.hashClean(item, abs, item.mode);
      return this.hashOther(item, abs);
    } catch (err) {
      // the store could not be written (a .mcp this user may not write, a full disk): not the file's fault
      if (err instanceof StoreWriteFailed) throw err.cause;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || code === "EISDIR") return { index: item.index, kind: "vanished" };
      if (code === "EACCES" || code === "EPERM") return { index: item.index, kind: "denied" };
      // ENXIO: a socket; ESPIPE: pread on a FIFO or socket (readUpTo); EAGAIN: one with nothing to read
      if (code === "ENXIO" || code === "ESPIPE" || code === "EAGAIN" || code === "ENODEV" || code === NOT_REGULAR_FILE) return { index: item.index, kind: "special" };
      throw err;
    }
  }

  /** A clean tracked file: git vouches for its type and mode, so it is opened without an lstat. */
  private hashClean(item: HashItem, abs: string, mode: RegularMode): HashOutcome {
    const fd = openSync(abs, READ_FLAGS);
    try {
      const len = this.readUpTo(fd, STREAM_THRESHOLD + 1);
      if (len > STREAM_THRESHOLD) return this.hashLarge(item, abs, fd, len, mode);
      const bytes = this.buf.subarray(0, len);
      const st = fstatSync(fd);
      assertRegular(st);
      const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
      const trusted = st.size === len && st.ctimeMs < this.opts.trustCleanBefore;
      const gitOid = trusted ? (item.gitOid as string) : gitBlobHash(bytes, (item.gitOid as string).length === 64 ? 64 : 40);
      if (gitOid !== item.gitOid) this.store(sha256, bytes);
      return { index: item.index, kind: "ok", sha256, gitOid, mode, size: len, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hashedAt: Date.now() };
    } finally {
      closeSync(fd);
    }
  }

  /** Anything git does not vouch for: type and mode come from an lstat. */
  private hashOther(item: HashItem, abs: string): HashOutcome {
    const st = lstatSync(abs);
    const mode = modeOfStat(st);
    if (mode === null) return { index: item.index, kind: st.isDirectory() ? "vanished" : "special" };
    const hashedAt = Date.now();
    let bytes: Uint8Array;
    if (mode === "120000") bytes = readlinkSync(abs, { encoding: "buffer" });
    else {
      const fd = openSync(abs, READ_FLAGS);
      try {
        assertRegular(fstatSync(fd)); // the lstat and the open may not have seen the same file
        const len = this.readUpTo(fd, STREAM_THRESHOLD + 1);
        if (len > STREAM_THRESHOLD) return this.hashLarge(item, abs, fd, len, mode);
        bytes = this.buf.subarray(0, len);
      } finally {
        closeSync(fd);
      }
    }
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const gitOid = item.gitOid ? gitBlobHash(bytes, item.gitOid.length === 64 ? 64 : 40) : "";
    if (!item.gitOid || gitOid !== item.gitOid) this.store(sha256, bytes);
    return { index: item.index, kind: "ok", sha256, gitOid, mode, size: bytes.length, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hashedAt };
  }

  /**
   * Finishes a file too large to hold: the first `have` bytes are in the
   * buffer, the rest is read from `fd` in chunks into it, both hashes in one
   * pass. Content git does not vouch for is copied into the loose store by a
   * second pass that checks it still hashes the same.
   */
  private hashLarge(item: HashItem, abs: string, fd: number, have: number, mode: RegularMode): HashOutcome {
    const before = fstatSync(fd);
    assertRegular(before); // a device reads without end
    const hashedAt = Date.now();
    const sha = new Bun.CryptoHasher("sha256");
    const trustable = item.gitOid !== undefined && before.ctimeMs < this.opts.trustCleanBefore;
    const gh = item.gitOid && !trustable ? new Bun.CryptoHasher(item.gitOid.length === 64 ? "sha256" : "sha1") : null;
    gh?.update(`blob ${before.size}\0`);
    let size = 0;
    let chunk = this.buf.subarray(0, have);
    while (chunk.length > 0) {
      sha.update(chunk);
      gh?.update(chunk);
      size += chunk.length;
      chunk = this.buf.subarray(0, readSync(fd, this.buf, 0, this.buf.length, size)); // pread, as readUpTo
    }
    const after = fstatSync(fd);
    const sha256 = sha.digest("hex");
    const unchanged = size === before.size && after.size === before.size && after.ctimeMs === before.ctimeMs;
    let gitOid = "";
    if (gh && size === before.size) gitOid = gh.digest("hex");
    else if (trustable && unchanged) gitOid = item.gitOid as string;
    if (gitOid === "" || gitOid !== item.gitOid) {
      // Changed while being read: report it gone; the next capture sees it.
      if (!copyIntoLooseStore(this.opts.stateDir, this.loose, abs, sha256)) return { index: item.index, kind: "vanished" };
    }
    return { index: item.index, kind: "ok", sha256, gitOid, mode, size, mtimeMs: after.mtimeMs, ctimeMs: after.ctimeMs, ino: after.ino, hashedAt };
  }

  /**
   * Reads from `fd` into the reused buffer, from offset 0, until EOF or
   * `limit` bytes; returns the count. It reads with pread (an explicit
   * position), so a FIFO or socket fails with ESPIPE before a byte is taken
   * from it; the descriptor's offset does not move.
   */
  private readUpTo(fd: number, limit: number): number {
    let len = 0;
    for (;;) {
      if (len === this.buf.length) {
        if (len >= limit) return len;
        const bigger = Buffer.allocUnsafe(Math.min(this.buf.length * 2, limit));
        this.buf.copy(bigger, 0, 0, len);
        this.buf = bigger;
      }
      const n = readSync(fd, this.buf, len, this.buf.length - len, len);
      if (n === 0) return len;
      len += n;
    }
  }
}

/** A failure to write the loose store, told apart from a failure to read the file being hashed. */
class StoreWriteFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("the blob store could not be written");
  }
}

/** Runs a write to the loose store; what it throws comes out as StoreWriteFailed. */
function storing<T>(write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw new StoreWriteFailed(err);
  }
}

/** Copies a file into the loose store under `sha256`, only if the copied bytes really hash to it. */
function copyIntoLooseStore(stateDir: string, loose: FsBlobStore, abs: string, sha256: string): boolean {
  const id = blobIdFromHex(sha256);
  const dest = loose.pathOf(id);
  const stored = lstatSync(dest, { throwIfNoEntry: false });
  if (stored) {
    freshen(dest, stored.mtimeMs);
    return true;
  }
  const tmp = tempPath(stateDir, "blob");
  try {
    const fd = storing(() => openSync(tmp, "w", 0o444));
    const sha = new Bun.CryptoHasher("sha256");
    try {
      // reading the file may fail as a read does (it vanished, it is denied now); writing the copy, as the store does
      for (const chunk of fileChunks(abs)) {
        sha.update(chunk);
        storing(() => {
          let off = 0;
          while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
        });
      }
    } finally {
      closeSync(fd);
    }
    if (sha.digest("hex") !== sha256) {
      rmSync(tmp, { force: true });
      return false;
    }
    storing(() => {
      mkdirSync(join(dest, ".."), { recursive: true });
      renameSync(tmp, dest);
    });
    return true;
  } catch (err) {
    // a full disk can stop the copy half way: no partial temp file stays behind
    rmSync(tmp, { force: true });
    throw err;
  }
}
