/**
 * Directories held open, and file operations relative to them: the write
 * path's defence against a directory swapped for a symlink while it writes
 * (DESIGN decision 13). A path is resolved beneath the root once, without
 * following any symlink, to a directory descriptor; every later operation
 * names one entry inside a held descriptor, so no name is looked up from the
 * root again and a swap can at worst make the write fail, never land outside
 * the root or inside `.git`.
 *
 * Three ways to do it, chosen once per process:
 * - native (the C module, src/native/dirfd.c): openat2 with RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS (Linux 5.6+; elsewhere a walk that opens one name at a
 *   time with O_NOFOLLOW | O_DIRECTORY), then mkdirat, renameat2, unlinkat,
 *   openat(O_NOFOLLOW), symlinkat, readlinkat, fstatat relative to the held
 *   descriptors;
 * - proc (no native module, Linux): the same walk through
 *   `/proc/self/fd/N/name`, and every operation on such a path. The kernel
 *   jumps to the held directory at `/proc/self/fd/N` and looks up only the
 *   last name there, which is what the *at calls do; the guarantee is the same;
 * - paths (no native module and no /proc, e.g. macOS built without a C
 *   compiler): absolute paths, with every directory on the way lstat-checked
 *   (no symlink) and its identity compared with the held descriptor before and
 *   after each operation. This narrows the window but cannot close it: a swap
 *   between the check and the operation can still redirect that one
 *   operation, and is then reported (REPO_CHANGED) after the fact.
 *
 * `asyncPath` names an entry for Node's asynchronous file functions (the I/O
 * threads): a `/proc/self/fd/N/name` path where /proc exists, so bulk writes
 * and renames keep running off the event loop with the same guarantee.
 *
 * What no mode can prevent: a directory that another process moves out of the
 * root (a rename, not a symlink) after it was opened still receives the
 * writes aimed at it; they go to the directory that was checked, wherever it
 * now is.
 */
import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, renameSync, rmdirSync, symlinkSync, unlinkSync } from "node:fs";
import { availableParallelism, constants as osConstants } from "node:os";
import { join } from "node:path";
import { rememberSha256 } from "../core/content-hash";
import { repoChanged } from "../core/errors";
import { readAll } from "./file-chunks";
import { nativeModule } from "./native";

/** What an lstat says about an entry (node's Stats fits it, and so does the native module's answer). */
export interface FileStat {
  dev: number;
  ino: number;
  mode: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export type DirBackend = "native" | "proc" | "paths";

const { ENOENT, ENOTDIR, ELOOP, EXDEV, EEXIST, ENOSYS, EINVAL, ENOTSUP } = osConstants.errno;
const DIR_OPEN = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Reading a file: never through a symlink, never waiting on a FIFO. */
export const READ_OPEN = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** A new file: it must not exist, and a symlink put there is not followed. */
export const CREATE_OPEN = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const RENAME_NOREPLACE = 1;
const RENAME_EXCHANGE = 2;

let forced: DirBackend | null = null;
let procWorks: boolean | undefined;
let exchangeSupported = true;

/** Tests choose the backend (null: the one this process would use). */
export function configureDirHandles(opts: { backend: DirBackend | null }): void {
  forced = opts.backend;
}

/** The backend in use: native when the module is loaded, else proc on Linux, else paths. */
export function dirBackend(): DirBackend {
  if (forced) return forced;
  if (nativeModule()) return "native";
  return procAvailable() ? "proc" : "paths";
}

function procAvailable(): boolean {
  if (procWorks !== undefined) return procWorks;
  if (process.platform !== "linux") return (procWorks = false);
  let fd: number;
  try {
    fd = openSync("/", DIR_OPEN);
  } catch {
    return false; // no descriptor to spare right now: asked again next time, not remembered
  }
  try {
    procWorks = lstatSync(`/proc/self/fd/${fd}/.`, { throwIfNoEntry: false })?.ino === fstatSync(fd).ino;
  } catch {
    procWorks = false;
  } finally {
    closeSync(fd);
  }
  return procWorks;
}

const ERRNO_NAMES = new Map<number, string>(Object.entries(osConstants.errno).map(([name, n]) => [n as number, name]));

/** An Error like node:fs throws, naming the repo-relative path (never an absolute one). */
export function sysError(errno: number, syscall: string, label: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`${code}: ${syscall} ${label}`), { code, errno: -errno, syscall, path: label });
}

function errnoOf(err: unknown): number {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code === "string") {
    const n = (osConstants.errno as Record<string, number>)[e.code];
    if (typeof n === "number") return n;
  }
  return typeof e?.errno === "number" ? Math.abs(e.errno) : -1;
}

/** A REPO_CHANGED error: a directory on the way is a symlink (or was replaced by one while the write ran). */
export function symlinkOnPath(rel: string, component: string): Error {
  return repoChanged(
    `${component} is a symbolic link, or was replaced by one while the write was under way; worksnap writes only through real directories inside the root. Nothing was written; check ${component} and retry`,
    { path: rel, symlink: component, reason: "symlink_on_path" },
  );
}

class NativeStat implements FileStat {
  constructor(
    readonly dev: number,
    readonly ino: number,
    readonly mode: number,
    readonly size: number,
    readonly mtimeMs: number,
    readonly ctimeMs: number,
  ) {}
  isFile(): boolean {
    return (this.mode & 0o170000) === 0o100000;
  }
  isDirectory(): boolean {
    return (this.mode & 0o170000) === 0o040000;
  }
  isSymbolicLink(): boolean {
    return (this.mode & 0o170000) === 0o120000;
  }
}

function checkName(name: string): void {
  if (!isName(name)) throw new Error(`not a single file name: ${JSON.stringify(name)}`);
}

function isName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}

/**
 * One directory held open. Operations name entries inside it; `rel` (the
 * directory's repo-relative path when it was opened) only labels errors.
 */
export class DirHandle {
  private open = true;

  constructor(
    readonly fd: number,
    readonly rel: string,
    /** Absolute path when it was opened: the paths backend's way in; messages never show it. */
    private readonly abs: string,
    private readonly tree: { backend: DirBackend; rootAbs: string },
  ) {}

  /** The repo-relative path of `name` in this directory, as errors show it. */
  label(name: string): string {
    return this.rel === "" || this.rel === "." ? name : `${this.rel}/${name}`;
  }

  /** A path the kernel resolves through this descriptor (proc) or, for the paths backend, the checked absolute path. */
  private via(name: string): string {
    checkName(name);
    if (this.tree.backend === "paths") {
      this.verify();
      return join(this.abs, name);
    }
    return `/proc/self/fd/${this.fd}/${name}`;
  }

  /**
   * For Node's asynchronous functions (the I/O threads): a path to `name` that
   * resolves through this descriptor, or null where there is none (the native
   * backend without /proc): then the caller uses the synchronous operations.
   */
  asyncPath(name: string): string | null {
    if (this.tree.backend === "native" && !procAvailable()) return null;
    if (this.tree.backend === "native") {
      checkName(name);
      return `/proc/self/fd/${this.fd}/${name}`;
    }
    return this.via(name);
  }

  /** The names in this directory. */
  list(): string[] {
    const p = this.tree.backend === "paths" || !procAvailable() ? null : `/proc/self/fd/${this.fd}`;
    if (p !== null) return readdirSync(p);
    this.verify();
    return readdirSync(this.abs);
  }

  /**
   * A path for removing `name` with everything in it (rm -r): the descriptor's
   * /proc path where there is one, else the absolute path, checked first.
   */
  removalPath(name: string): string {
    const p = this.asyncPath(name);
    if (p !== null) return p;
    this.verify();
    return join(this.abs, name);
  }

  /** The paths backend: every directory from the root to this one is a real directory, and this one is the one held. */
  private verify(): void {
    const parts = this.rel === "" || this.rel === "." ? [] : this.rel.split("/");
    let cur = this.tree.rootAbs;
    for (const p of parts) {
      cur = join(cur, p);
      const st = lstatSync(cur, { throwIfNoEntry: false });
      const at = cur.slice(this.tree.rootAbs.length + 1);
      if (st?.isSymbolicLink()) throw symlinkOnPath(this.rel, at);
      if (!st?.isDirectory()) throw repoChanged(`${at} is no longer a directory (something removed or replaced it while the write was under way); nothing was written`, { path: this.rel, reason: "path_changed" });
    }
    const held = fstatSync(this.fd);
    const now = lstatSync(cur);
    if (held.ino !== now.ino || held.dev !== now.dev) throw symlinkOnPath(this.rel, this.rel);
  }

  /** After an operation by path (paths backend): still the same directories? A swap in between is reported. */
  private after<T>(value: T): T {
    if (this.tree.backend === "paths") this.verify();
    return value;
  }

  lstat(name: string): FileStat | null {
    if (this.tree.backend === "native") {
      checkName(name);
      const r = nativeModule()!.lstatAt(this.fd, name);
      if (typeof r === "number") {
        if (r === ENOENT || r === ENOTDIR) return null;
        throw sysError(r, "lstat", this.label(name));
      }
      return new NativeStat(r[0]!, r[1]!, r[2]!, r[3]!, r[4]!, r[5]!);
    }
    return this.after(lstatSync(this.via(name), { throwIfNoEntry: false }) ?? null);
  }

  /** A descriptor for `name` (flags and mode as open(2) takes them). */
  openFile(name: string, flags: number, mode = 0o666): number {
    if (this.tree.backend === "native") {
      checkName(name);
      const fd = nativeModule()!.openAt(this.fd, name, flags, mode);
      if (fd < 0) throw sysError(-fd, "open", this.label(name));
      return fd;
    }
    try {
      return this.after(openSync(this.via(name), flags, mode));
    } catch (err) {
      throw relabel(err, "open", this.label(name));
    }
  }

  /** A regular file's bytes and the stat of the very file read (a symlink there is ELOOP, not followed). */
  readFile(name: string): { bytes: Uint8Array; stat: FileStat } {
    if (this.tree.backend === "native") {
      // One call instead of open, fstat, reads and close: a 500-file patch's reads, cold, were mostly those calls.
      checkName(name);
      const r = nativeModule()!.readFileAt(this.fd, name, READ_OPEN);
      if (typeof r === "number") throw sysError(Math.abs(r), r > 0 ? "open" : "read", this.label(name));
      const [n, bytes] = r;
      return { bytes: bytes ?? new Uint8Array(0), stat: new NativeStat(n[0]!, n[1]!, n[2]!, n[3]!, n[4]!, n[5]!) };
    }
    const fd = this.openFile(name, READ_OPEN);
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return { bytes: new Uint8Array(0), stat };
      // A view, not a copy: on a 50 MB file the copy costs as much as the read.
      const buf = readAll(fd, stat.size);
      return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), stat };
    } finally {
      closeSync(fd);
    }
  }

  readlink(name: string): Uint8Array {
    if (this.tree.backend === "native") {
      checkName(name);
      const r = nativeModule()!.readlinkAt(this.fd, name);
      if (typeof r === "number") throw sysError(r, "readlink", this.label(name));
      return new Uint8Array(r.buffer, r.byteOffset, r.byteLength);
    }
    try {
      return this.after(new Uint8Array(readlinkSync(this.via(name), { encoding: "buffer" })));
    } catch (err) {
      throw relabel(err, "readlink", this.label(name));
    }
  }

  mkdir(name: string, mode = 0o777): void {
    this.call("mkdir", name, () => nativeModule()!.mkdirAt(this.fd, name, mode), (p) => mkdirSync(p, { mode }));
  }

  unlink(name: string): void {
    this.call("unlink", name, () => nativeModule()!.unlinkAt(this.fd, name, false), (p) => unlinkSync(p));
  }

  rmdir(name: string): void {
    this.call("rmdir", name, () => nativeModule()!.unlinkAt(this.fd, name, true), (p) => rmdirSync(p));
  }

  symlink(target: Uint8Array, name: string): void {
    this.call("symlink", name, () => nativeModule()!.symlinkAt(target, this.fd, name), (p) =>
      symlinkSync(Buffer.from(target.buffer, target.byteOffset, target.byteLength), p),
    );
  }

  /** Renames `name` here to `toName` in `to` (replacing what is there, unless `noReplace`: then EEXIST). */
  rename(name: string, to: DirHandle, toName: string, noReplace = false): void {
    if (this.tree.backend === "native") {
      checkName(name);
      checkName(toName);
      let errno = nativeModule()!.renameAt(this.fd, name, to.fd, toName, noReplace ? RENAME_NOREPLACE : 0);
      // RENAME_NOREPLACE unsupported by this file system: the caller checked the destination is free
      if (noReplace && (errno === EINVAL || errno === ENOSYS || errno === ENOTSUP)) errno = nativeModule()!.renameAt(this.fd, name, to.fd, toName, 0);
      if (errno !== 0) throw sysError(errno, "rename", `${this.label(name)} -> ${to.label(toName)}`);
      return;
    }
    try {
      renameSync(this.via(name), to.via(toName));
      this.after(undefined);
      to.after(undefined);
    } catch (err) {
      throw relabel(err, "rename", `${this.label(name)} -> ${to.label(toName)}`);
    }
  }

  /**
   * Swaps `name` here and `toName` in `to` in one step (renameat2
   * RENAME_EXCHANGE, native only): true when done. False when it could not be
   * done (no native module, a platform or file system without it, a name gone
   * meanwhile); the caller renames instead.
   */
  exchange(name: string, to: DirHandle, toName: string): boolean {
    if (this.tree.backend !== "native" || !exchangeSupported) return false;
    checkName(name);
    checkName(toName);
    const errno = nativeModule()!.renameAt(this.fd, name, to.fd, toName, RENAME_EXCHANGE);
    if (errno === 0) return true;
    if (errno === ENOSYS || errno === EINVAL || errno === ENOTSUP) exchangeSupported = false;
    return false;
  }

  /** Makes the directory's entries durable. Some file systems refuse fsync on a directory; that is not an error. */
  fsync(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // the renames are atomic regardless
    }
  }

  /** A subdirectory, held open (never through a symlink). */
  openDir(name: string): DirHandle {
    const fd = this.openFile(name, DIR_OPEN);
    return new DirHandle(fd, this.label(name), join(this.abs, name), this.tree);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
  }

  private call(syscall: string, name: string, native: () => number, byPath: (p: string) => void): void {
    if (this.tree.backend === "native") {
      checkName(name);
      const errno = native();
      if (errno !== 0) throw sysError(errno, syscall, this.label(name));
      return;
    }
    try {
      byPath(this.via(name));
      this.after(undefined);
    } catch (err) {
      throw relabel(err, syscall, this.label(name));
    }
  }
}

/** Errors of path operations carry the repo-relative label, never the /proc or absolute path used. */
function relabel(err: unknown, syscall: string, label: string): unknown {
  const errno = errnoOf(err);
  if (errno <= 0 || (err as { code?: string }).code === "REPO_CHANGED") return err;
  return sysError(errno, syscall, label);
}

/** An entry as TreeHandles.readEntries gives it. */
export interface ReadEntry {
  /** The name's lstat; null when it does not exist (or a name on the way is not a directory). */
  stat: FileStat | null;
  /** For a regular file: its bytes and the fstat of the file read (readFile), or the error reading it; else null. */
  read: { bytes: Uint8Array; stat: FileStat } | Error | null;
}

/** Below this many entries the native call's threads do not pay. */
const READ_MANY_MIN = 16;
const READ_MANY_THREADS = 4;

/** One entry the way readEntries reads many (lstat, then readFile for a regular file). */
function readEntry(dir: DirHandle, name: string): ReadEntry | Error {
  let stat: FileStat | null;
  try {
    stat = dir.lstat(name);
  } catch (err) {
    return err as Error;
  }
  if (!stat?.isFile()) return { stat, read: null };
  try {
    return { stat, read: dir.readFile(name) };
  } catch (err) {
    return { stat, read: err as Error };
  }
}

/**
 * The directories one call works in, held open for the call: the root, and
 * every directory asked for (by repo-relative path), each resolved beneath
 * the root once. Close it when the call ends (after every asynchronous
 * operation on its descriptors has settled).
 */
export class TreeHandles {
  readonly root: DirHandle;
  private readonly dirs = new Map<string, DirHandle | null>();
  /** Every handle opened, closed together (a forgotten directory's handle may still be in a caller's hands). */
  private readonly opened: DirHandle[] = [];
  private readonly ctx: { backend: DirBackend; rootAbs: string };

  private constructor(rootAbs: string) {
    this.ctx = { backend: dirBackend(), rootAbs };
    const fd = openSync(rootAbs, DIR_OPEN);
    this.root = new DirHandle(fd, "", rootAbs, this.ctx);
  }

  /** Opens the root (a canonical absolute path). */
  static open(rootAbs: string): TreeHandles {
    return new TreeHandles(rootAbs);
  }

  get backend(): DirBackend {
    return this.ctx.backend;
  }

  /**
   * Many entries of held directories, each as `lstat` gives it and, when that
   * is a regular file, as `readFile` reads it: with the native module in one
   * call that reads them on a few threads (a 500-file patch's reads were
   * mostly the calls from JavaScript, one lstat and one read per file), each
   * file hashed by the thread that read it and its SHA-256 remembered
   * (core/content-hash.ts: the write and the history hash what it read), else
   * one entry at a time. An lstat failure other than "absent" is the entry's
   * error, a read failure its `read`: the errors lstat and readFile throw.
   */
  readEntries(items: readonly { dir: DirHandle; name: string }[]): (ReadEntry | Error)[] {
    if (this.ctx.backend !== "native" || items.length < READ_MANY_MIN || !items.every((it) => isName(it.name))) {
      return items.map(({ dir, name }) => readEntry(dir, name));
    }
    const fds = Int32Array.from(items, (it) => it.dir.fd);
    const threads = Math.min(READ_MANY_THREADS, availableParallelism());
    const [n, e, bytes, digests] = nativeModule()!.readManyAt(fds, items.map((it) => it.name), READ_OPEN, threads);
    return items.map(({ dir, name }, k) => {
      const lstatErr = e[3 * k]!;
      if (lstatErr === ENOENT || lstatErr === ENOTDIR) return { stat: null, read: null };
      if (lstatErr !== 0) return sysError(lstatErr, "lstat", dir.label(name));
      const at = 14 * k;
      const stat = new NativeStat(n[at]!, n[at + 1]!, n[at + 2]!, n[at + 3]!, n[at + 4]!, n[at + 5]!);
      if (!stat.isFile()) return { stat, read: null };
      const readErr = e[3 * k + 1]!;
      if (readErr !== 0) return { stat, read: sysError(Math.abs(readErr), readErr > 0 ? "open" : "read", dir.label(name)) };
      const opened = new NativeStat(n[at + 7]!, n[at + 8]!, n[at + 9]!, n[at + 10]!, n[at + 11]!, n[at + 12]!);
      const read = bytes[k] ?? new Uint8Array(0);
      // hashed where it was read: the write's hashing and the history's find it known
      if (bytes[k]) rememberSha256(read, digests.toString("hex", 32 * k, 32 * k + 32));
      return { stat, read: { bytes: read, stat: opened } };
    });
  }

  /**
   * The directory at `rel` (repo-relative, "" or "." for the root), held
   * open: null when a name on the way does not exist or is not a directory
   * (a file in the way: the caller says so). A symlink on the way is
   * REPO_CHANGED (symlinkOnPath): the caller resolved `rel` to a path without
   * symlinks, so one there now was put there meanwhile.
   */
  dir(rel: string): DirHandle | null {
    if (rel === "" || rel === ".") return this.root;
    const known = this.dirs.get(rel);
    if (known !== undefined) return known;
    const h = this.openBeneath(rel);
    this.dirs.set(rel, h);
    return h;
  }

  /** The directory at `rel`, made (with its missing parents) when absent; every directory made is appended to `made`. */
  ensureDir(rel: string, made: string[] = []): DirHandle {
    const have = this.dir(rel);
    if (have) return have;
    const parts = rel.split("/");
    let cur = this.root;
    let path = "";
    for (const p of parts) {
      path = path === "" ? p : `${path}/${p}`;
      const next = this.dirs.get(path);
      if (next) {
        cur = next;
        continue;
      }
      try {
        cur.mkdir(p);
        made.push(path);
      } catch (err) {
        if (errnoOf(err) !== EEXIST) throw err;
      }
      cur = this.child(cur, p, path);
      this.dirs.set(path, cur);
    }
    return cur;
  }

  /** Forgets a directory this call removed (a later ensureDir makes it again). */
  forget(rel: string): void {
    for (const key of [...this.dirs.keys()]) if (key === rel || key.startsWith(`${rel}/`)) this.dirs.delete(key);
  }

  close(): void {
    for (const h of this.opened.splice(0)) h.close();
    this.dirs.clear();
    this.root.close();
  }

  private held(h: DirHandle): DirHandle {
    this.opened.push(h);
    return h;
  }

  private openBeneath(rel: string): DirHandle | null {
    if (this.ctx.backend === "native") {
      const fd = nativeModule()!.dirOpenBeneath(this.root.fd, rel);
      if (fd >= 0) return this.held(new DirHandle(fd, rel, join(this.ctx.rootAbs, rel), this.ctx));
      if (-fd === ENOENT) return null;
      if (-fd !== ELOOP && -fd !== ENOTDIR && -fd !== EXDEV) throw sysError(-fd, "open", rel);
      return this.walk(rel); // which name is in the way, and what it is
    }
    return this.walk(rel);
  }

  /** One name at a time from the nearest directory already held. */
  private walk(rel: string): DirHandle | null {
    const parts = rel.split("/");
    let cur = this.root;
    let path = "";
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      path = path === "" ? p : `${path}/${p}`;
      const held = i < parts.length - 1 ? this.dirs.get(path) : undefined;
      if (held === null) return null;
      if (held) {
        cur = held;
        continue;
      }
      const st = cur.lstat(p);
      if (!st || !(st.isDirectory() || st.isSymbolicLink())) return null;
      if (st.isSymbolicLink()) throw symlinkOnPath(rel, path);
      const next = this.child(cur, p, path);
      if (i < parts.length - 1) this.dirs.set(path, next);
      cur = next;
    }
    return cur;
  }

  /** A subdirectory opened; a symlink or a file there now (it was a directory a moment ago, or was just made) is REPO_CHANGED. */
  private child(parent: DirHandle, name: string, path: string): DirHandle {
    try {
      return this.held(parent.openDir(name));
    } catch (err) {
      const errno = errnoOf(err);
      if (errno !== ELOOP && errno !== ENOTDIR) throw err;
      if (parent.lstat(name)?.isSymbolicLink()) throw symlinkOnPath(path, path);
      throw repoChanged(`${path} is no longer a directory (something replaced it while the write was under way); nothing was written`, { path, reason: "path_changed" });
    }
  }
}
