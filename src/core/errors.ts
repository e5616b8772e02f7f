/**
 * Typed errors. Every failure inside core/repo/ops is a WorksnapError with a
 * spec section 4 code and structured details; each adapter maps it in one place.
 */
export const ERROR_CODES = [
  "NOT_FOUND",
  "INVALID_ARGUMENT",
  "REPO_CHANGED",
  "PERMISSION_DENIED",
  "TOO_LARGE",
  "INTERNAL",
  "STALE_LEASE",
  "BUSY",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorDetails = Record<string, unknown>;

export class WorksnapError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = "WorksnapError";
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export const notFound = (message: string, details?: ErrorDetails) =>
  new WorksnapError("NOT_FOUND", message, details);
export const invalidArgument = (message: string, details?: ErrorDetails) =>
  new WorksnapError("INVALID_ARGUMENT", message, details);
export const permissionDenied = (message: string, details?: ErrorDetails) =>
  new WorksnapError("PERMISSION_DENIED", message, details);
export const tooLarge = (message: string, details?: ErrorDetails) =>
  new WorksnapError("TOO_LARGE", message, details);
export const repoChanged = (message: string, details?: ErrorDetails) =>
  new WorksnapError("REPO_CHANGED", message, details);
export const internal = (message: string, details?: ErrorDetails) =>
  new WorksnapError("INTERNAL", message, details);
export const busy = (message: string, details?: ErrorDetails) =>
  new WorksnapError("BUSY", message, details);

/**
 * A write met a file system mounted read-only (EROFS: a read-only bind mount
 * or volume inside the work tree, a checkout on read-only media). `path` is
 * what the system named: a file, or a temporary name in the directory being
 * written, which is then what the message names.
 */
export function readOnlyFileSystem(path: string | null, outcome = ""): WorksnapError {
  const where = path === null || path.startsWith("/proc/") ? null : writtenIn(path);
  const state = where === ".mcp";
  const what = where === null ? "a file system the call writes to" : where === "." ? "the repository's root" : state ? "worksnap's state directory .mcp" : where;
  return permissionDenied(`${what} is on a file system mounted read-only${outcome ? `; ${outcome}` : ""}`, {
    errno: "EROFS",
    ...(where !== null ? { path: where } : {}),
    reason: "read_only_file_system",
  });
}

/** The path a write failed at, as a person knows it: `.mcp` for worksnap's own files, a directory for a temporary name in it. */
function writtenIn(path: string): string {
  if (path === ".mcp" || path.startsWith(".mcp/")) return ".mcp";
  const cut = path.lastIndexOf("/");
  if (!path.slice(cut + 1).startsWith(".worksnap-")) return path;
  return cut < 0 ? "." : path.slice(0, cut);
}

/** The system errors that mean "no room left": the device is full, or the user's quota is. */
export const DISK_FULL_ERRNOS: readonly string[] = ["ENOSPC", "EDQUOT"];

/**
 * The disk holding the repository is full (or its quota is used up). Spec
 * 000's error codes are kept: TOO_LARGE says the request does not fit, which
 * is what happened, and `details.reason: "disk_full"` says why; the message
 * says it in words. Never INTERNAL: nothing is broken, space is missing.
 */
export function diskFull(what: string, errno = "ENOSPC"): WorksnapError {
  const quota = errno === "EDQUOT";
  return tooLarge(`the disk is full (${quota ? "the disk quota is used up" : "no space left on the device that holds the repository"}): ${what}. Free some space and retry`, {
    reason: "disk_full",
    errno,
  });
}

/**
 * The errno when `err` says the disk is full: by its code, or by its text where
 * a child process (git) only gave a message; null otherwise.
 */
export function diskFullErrno(err: unknown): "ENOSPC" | "EDQUOT" | null {
  if (err instanceof WorksnapError) {
    if (err.details.reason === "disk_full") return err.details.errno === "EDQUOT" ? "EDQUOT" : "ENOSPC";
    if (err.code !== "INTERNAL") return null;
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return code;
  const message = err instanceof Error ? err.message : typeof err === "string" ? err : "";
  if (/\bEDQUOT\b|disk quota exceeded/i.test(message)) return "EDQUOT";
  return /\bENOSPC\b|no space left on device/i.test(message) ? "ENOSPC" : null;
}

export function isDiskFull(err: unknown): boolean {
  return diskFullErrno(err) !== null;
}

/**
 * Whether a file-system error says the path is not there (ENOENT, ENOTDIR). Only this makes a read NOT_FOUND:
 * any other failure (no descriptor free, permission) is reported as what it is.
 */
export function isMissingPath(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

const DESCRIPTOR_ERRNOS = new Set(["EMFILE", "ENFILE"]);

/**
 * The process (EMFILE) or the system (ENFILE) has no file descriptor left: a
 * passing shortage, not a fault of the request. Recognised by errno, or by
 * the text where a runtime or a child process only gave a message.
 */
export function isDescriptorShortage(err: unknown): boolean {
  if (err instanceof WorksnapError) {
    // an INTERNAL error may wrap what a child process said (git: "Too many open files")
    if (err.code === "BUSY") return err.details.reason === "descriptors";
    if (err.code !== "INTERNAL") return false;
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string" && DESCRIPTOR_ERRNOS.has(code)) return true;
  const message = err instanceof Error ? err.message : typeof err === "string" ? err : "";
  return /\b(EMFILE|ENFILE)\b|too many open files/i.test(message);
}

/**
 * Any thrown value as a WorksnapError; unknown failures become INTERNAL, never
 * swallowed. Details never carry a stack trace: an adapter logs the original
 * error where its operator reads (a server's stderr), not in the answer.
 */
export function asWorksnapError(err: unknown): WorksnapError {
  if (err instanceof WorksnapError && err.code !== "INTERNAL") return err;
  if (isDescriptorShortage(err)) {
    return busy("the server has no file descriptor free right now (too many open files); retry the call", { reason: "descriptors" });
  }
  const full = diskFullErrno(err);
  if (full !== null) return err instanceof WorksnapError && err.code === "TOO_LARGE" ? err : diskFull("the operation could not write its data", full);
  const sys = err as NodeJS.ErrnoException | undefined;
  if (sys && typeof sys === "object" && typeof sys.code === "string") {
    const path = typeof sys.path === "string" ? sys.path : undefined;
    const details: ErrorDetails = path ? { errno: sys.code, path } : { errno: sys.code };
    if (sys.code === "ENOENT") return notFound(sys.message, details);
    if (sys.code === "EACCES" || sys.code === "EPERM") {
      const dest = (sys as { dest?: unknown }).dest;
      if ([path, dest].some((p) => typeof p === "string" && /(^|\/)\.mcp(\/|$)/.test(p))) {
        return permissionDenied(`worksnap's state directory .mcp is not open to this user (${sys.message}); run worksnap as a user who may read and write it, usually the repository's owner`, { ...details, reason: "state_dir_permission" });
      }
      return permissionDenied(sys.message, details);
    }
    if (sys.code === "EFBIG") return tooLarge(sys.message, details);
    if (sys.code === "EROFS") return readOnlyFileSystem(path ?? null);
    // a symlink on a file system that has none (git's core.symlinks says otherwise, or git is not asked)
    if (sys.syscall === "symlink" && (sys.code === "ENOSYS" || sys.code === "EOPNOTSUPP" || sys.code === "ENOTSUP")) {
      return invalidArgument("this file system cannot hold symbolic links (set git's core.symlinks to false here to have links written as files holding their text, as git does)", { errno: sys.code });
    }
    // a name or path the file system cannot hold is bad input, whatever call met it
    if (sys.code === "ENAMETOOLONG") return invalidArgument("a file name or path is too long for the file system", { errno: sys.code });
  }
  if (err instanceof WorksnapError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return internal(message);
}
