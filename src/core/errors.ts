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

export function isDiskFull(err: unknown): boolean {
  if (err instanceof WorksnapError) return err.details.reason === "disk_full";
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && DISK_FULL_ERRNOS.includes(code);
}

/** Any thrown value as a WorksnapError; unknown failures become INTERNAL, never swallowed. */
export function asWorksnapError(err: unknown): WorksnapError {
  if (err instanceof WorksnapError) return err;
  const sys = err as NodeJS.ErrnoException | undefined;
  if (sys && typeof sys === "object" && typeof sys.code === "string") {
    const path = typeof sys.path === "string" ? sys.path : undefined;
    const details: ErrorDetails = path ? { errno: sys.code, path } : { errno: sys.code };
    if (sys.code === "ENOENT") return notFound(sys.message, details);
    if (sys.code === "EACCES" || sys.code === "EPERM") return permissionDenied(sys.message, details);
    if (sys.code === "EFBIG") return tooLarge(sys.message, details);
    if (DISK_FULL_ERRNOS.includes(sys.code)) return diskFull("the operation could not write its data", sys.code);
  }
  const message = err instanceof Error ? err.message : String(err);
  return internal(message, err instanceof Error && err.stack ? { stack: err.stack.split("\n").slice(0, 6) } : {});
}
