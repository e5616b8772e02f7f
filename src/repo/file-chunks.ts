import { closeSync, constants, fstatSync, openSync, readSync, statSync, writev, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { nativeModule } from "./native";

/** Chunk size for streamed reads: large enough for throughput, small enough to keep memory flat. */
export const CHUNK_BYTES = 1 << 20;

/**
 * How worksnap opens a file of the work tree for reading: never waiting on a
 * FIFO (O_NONBLOCK makes its open return at once), never taking a terminal,
 * and (READ_FLAGS) never through a symlink. What was opened is then checked
 * with fstat (assertRegular), so a FIFO, socket or device is never read as
 * content. The native reader and the reader threads open the same way.
 */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
/** The same, following a symlink: for a path already resolved to its target. */
export const READ_FLAGS_FOLLOW = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Error code of a path that holds a FIFO, socket or device instead of a regular file. */
export const NOT_REGULAR_FILE = "ENOTREG";

/** Throws NOT_REGULAR_FILE for anything but a regular file (EISDIR for a directory: the file is gone). */
export function assertRegular(st: { isFile(): boolean; isDirectory(): boolean }): void {
  if (st.isFile()) return;
  const code = st.isDirectory() ? "EISDIR" : NOT_REGULAR_FILE;
  throw Object.assign(new Error(`not a regular file (${code})`), { code });
}

/**
 * Opens a regular file for reading (READ_FLAGS, or READ_FLAGS_FOLLOW) and
 * returns its descriptor and fstat; anything else throws (assertRegular;
 * ENXIO for a socket), and nothing is left open.
 */
export function openRegular(abs: string, flags = READ_FLAGS): { fd: number; stat: Stats } {
  const fd = openSync(abs, flags);
  try {
    const stat = fstatSync(fd);
    assertRegular(stat);
    return { fd, stat };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Whether an error means the path holds something that is not read as a file: a FIFO, socket or device. */
export function isSpecialFileError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === NOT_REGULAR_FILE || code === "ENXIO" || code === "ESPIPE" || code === "EAGAIN" || code === "ENODEV";
}

/**
 * A file's bytes in chunks read on demand into one reused buffer. Each chunk
 * is valid only until the next one is requested. Memory stays at one chunk
 * whatever the file size (a file stream that reads ahead does not, when the
 * consumer is slower than the disk). Only a regular file is read (openRegular).
 */
export function* fileChunks(abs: string, chunkBytes = CHUNK_BYTES, flags = READ_FLAGS): Generator<Uint8Array> {
  const { fd } = openRegular(abs, flags);
  const buf = Buffer.allocUnsafe(chunkBytes);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, chunkBytes, null);
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A pull-based stream over a regular file (opened at once, openRegular): the
 * next chunk is read only when the consumer asks for it.
 */
export function fileStream(abs: string, chunkBytes = CHUNK_BYTES, flags = READ_FLAGS): ReadableStream<Uint8Array> {
  return fdStream(openRegular(abs, flags).fd, chunkBytes);
}

/** A stream over an open descriptor, from its current offset; the descriptor is closed at the end or on cancel. */
export function fdStream(fd: number, chunkBytes = CHUNK_BYTES): ReadableStream<Uint8Array> {
  let open: number | null = fd;
  const close = () => {
    if (open !== null) closeSync(open);
    open = null;
  };
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        try {
          const buf = new Uint8Array(chunkBytes);
          const n = readSync(open as number, buf, 0, chunkBytes, null);
          if (n === 0) {
            close();
            controller.close();
          } else controller.enqueue(n === chunkBytes ? buf : buf.subarray(0, n));
        } catch (err) {
          close();
          controller.error(err);
        }
      },
      cancel: close,
    },
    { highWaterMark: 1 },
  );
}

/** The rest of an open descriptor's bytes (it is not closed). */
export function readAll(fd: number, sizeHint = 0): Uint8Array {
  let buf = Buffer.allocUnsafe(Math.max(sizeHint + 1, 64));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      const grown = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(grown, 0, 0, len);
      buf = grown;
    }
    const n = readSync(fd, buf, len, buf.length - len, null);
    if (n === 0) return buf.subarray(0, len);
    len += n;
  }
}

/** Arrays one writev takes at most (IOV_MAX on Linux and macOS). */
const WRITEV_MAX = 1024;

/**
 * Writes every array to `fd`, in order, with as few calls as the system takes (writev of up to WRITEV_MAX arrays;
 * a short write goes on where it stopped). A 500-file patch's history pack is 1,000 arrays: one call instead of
 * a thousand. The writes run on the I/O threads: copying a pack's 8 MB into the page cache took the JavaScript
 * thread about 5 ms that the call's other work (its diffs) now has.
 */
export async function writeAllPieces(fd: number, pieces: readonly Uint8Array[]): Promise<void> {
  let i = 0;
  let done = 0; // bytes of pieces[i] already written
  while (i < pieces.length) {
    const batch = pieces.slice(i, i + WRITEV_MAX);
    if (done > 0) batch[0] = batch[0]!.subarray(done);
    let n = await new Promise<number>((resolve, reject) => writev(fd, batch as Uint8Array[], (err, written) => (err ? reject(err) : resolve(written))));
    let progressed = false;
    while (i < pieces.length && n >= pieces[i]!.length - done) {
      n -= pieces[i]!.length - done;
      done = 0;
      i++;
      progressed = true;
    }
    if (n === 0 && !progressed) throw Object.assign(new Error("EIO: write made no progress"), { code: "EIO", syscall: "writev" });
    done += n;
  }
}

/**
 * A regular file's bytes when it holds exactly `size` of them, read off the calling thread (READ_FLAGS: no
 * symlink followed at the last step, no FIFO waited on); null for anything else: missing, another size, grown
 * while read, not a regular file, not readable.
 */
export async function readRegularSized(abs: string, size: number): Promise<Buffer | null> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(abs, READ_FLAGS);
    const st = await fh.stat();
    if (!st.isFile() || st.size !== size) return null;
    const buf = Buffer.allocUnsafe(size + 1);
    let len = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, len, buf.length - len, len);
      if (bytesRead === 0) break;
      len += bytesRead;
      if (len > size) return null;
    }
    return len === size ? buf.subarray(0, size) : null;
  } catch {
    return null;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/**
 * readRegularSized on the calling thread (a worker's: verified-read-worker.ts), into memory of the array's own
 * (never a shared pool's slab), so that the array's buffer can be transferred whole.
 */
export function readRegularSizedSync(abs: string, size: number): Buffer | null {
  let fd = -1;
  try {
    fd = openSync(abs, READ_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size !== size) return null;
    const buf = Buffer.allocUnsafeSlow(size + 1);
    let len = 0;
    for (;;) {
      const n = readSync(fd, buf, len, buf.length - len, len);
      if (n === 0) break;
      len += n;
      if (len > size) return null;
    }
    return len === size ? buf.subarray(0, size) : null;
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** SHA-256 (hex) of a regular file's bytes, read in chunks (fileChunks), so memory stays flat whatever its size. */
export function sha256OfFile(abs: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const chunk of fileChunks(abs)) hasher.update(chunk);
  return hasher.digest("hex");
}

/**
 * A small configuration file's text (.gitignore, .gitattributes), following
 * symlinks as git does, or null when it is missing, unreadable or not a
 * regular file: a FIFO named .gitignore must not stop a walk.
 */
export function readRegularText(abs: string): string | null {
  try {
    const parts: Uint8Array[] = [];
    for (const chunk of fileChunks(abs, 64 * 1024, READ_FLAGS_FOLLOW)) parts.push(Buffer.from(chunk));
    return Buffer.concat(parts).toString("utf8");
  } catch {
    return null;
  }
}

/** openat(2)'s "the current directory" (Linux: the only platform with the native module). */
const AT_FDCWD = -100;

/**
 * A regular file's bytes, whole, following symlinks (a file the user names, as a patch file), read by the native
 * module in one call, a large file into memory whose pages are made present at once (src/native/populated.c:
 * 1.4 MB read by readFileSync took this VM 540 page faults, about 7 ms). Null where the caller reads it its own
 * way: no native module, not a regular file by its stat (a FIFO is never opened here: opening one would unblock its
 * writer), or any failure (the caller's read reports it).
 */
export function readRegularWhole(abs: string): Uint8Array | null {
  const m = nativeModule();
  if (!m) return null;
  try {
    if (!statSync(abs).isFile()) return null;
  } catch {
    return null;
  }
  const r = m.readFileAt(AT_FDCWD, abs, READ_FLAGS_FOLLOW);
  return typeof r === "number" ? null : r[1];
}
