import { type ErrorCode, type ErrorDetails, WorksnapError } from "../../core/errors";
import type { PublicError } from "../../core/public-error";

/**
 * The task layer's error codes (the `code` of a `🧢|!|` line). The first four
 * are spec 003's; the rest name failures the spec does not list. Each is
 * carried by a WorksnapError (details.wire_code) whose substrate code the CLI
 * maps to its exit code as usual.
 */
export const WIRE_ERROR_CODES = {
  NO_TASK: "no such task, or no active task when taskId is omitted",
  SNAPSHOT_NOT_FOUND: "no stored snapshot has this id or prefix",
  INVALID_MODE: "mode, action or topic is not one of the listed values",
  VALIDATION_FAILED: "an argument is missing, of the wrong type, or not allowed here",
  TASK_ENDED: "the task was ended already; start a new one",
  CHECK_COMMAND_NOT_FOUND: "a configured check command could not be started (not installed?)",
  CHECK_TIMEOUT: "a check command ran past its timeout and its process group was killed",
  CHECK_CANCELLED: "the request was cancelled; the running check was killed",
  CONFIG_INVALID: "worksnap.json (checks or patterns) is not valid",
  NOT_FOUND: "a named file does not exist",
  REPO_CHANGED: "the work tree changed under the operation; nothing was written",
  PERMISSION_DENIED: "a path is reserved or outside the root, or a file cannot be read",
  TOO_LARGE: "the answer or input is too large",
  BUSY: "the server is short of resources for the moment; call again",
  INTERNAL: "an unexpected failure (a bug or the environment)",
} as const;

export type WireErrorCode = keyof typeof WIRE_ERROR_CODES;

export function taskError(wireCode: WireErrorCode, code: ErrorCode, message: string, details: ErrorDetails = {}): WorksnapError {
  return new WorksnapError(code, message, { ...details, wire_code: wireCode });
}

export const noTask = (message: string, details?: ErrorDetails) => taskError("NO_TASK", "NOT_FOUND", message, details);
export const validationFailed = (message: string, details?: ErrorDetails) => taskError("VALIDATION_FAILED", "INVALID_ARGUMENT", message, details);
export const invalidMode = (message: string, details?: ErrorDetails) => taskError("INVALID_MODE", "INVALID_ARGUMENT", message, details);

/** Arguments whose value picks an operation: a bad value there is INVALID_MODE, not VALIDATION_FAILED. */
const MODE_ARGS = new Set(["mode", "action", "topic"]);

/**
 * The wire code of any error: the one an op set, else derived from the
 * substrate code (a snapshot that does not resolve is SNAPSHOT_NOT_FOUND; an
 * argument that failed to parse on mode/action/topic is INVALID_MODE).
 */
export function wireCodeOf(err: PublicError): WireErrorCode {
  const set = err.details.wire_code;
  if (typeof set === "string" && set in WIRE_ERROR_CODES) return set as WireErrorCode;
  switch (err.code) {
    case "NOT_FOUND":
      return "snapshot_id" in err.details ? "SNAPSHOT_NOT_FOUND" : "NOT_FOUND";
    case "INVALID_ARGUMENT": {
      // the adapter's parser names the arguments whose value is not one of the allowed ones
      const notOneOf = Array.isArray(err.details.not_one_of) ? (err.details.not_one_of as string[]) : [];
      if (notOneOf.some((arg) => MODE_ARGS.has(arg))) return "INVALID_MODE";
      return "VALIDATION_FAILED";
    }
    case "STALE_LEASE":
    case "REPO_CHANGED":
      return "REPO_CHANGED";
    case "PERMISSION_DENIED":
    case "TOO_LARGE":
    case "INTERNAL":
    case "BUSY":
      return err.code;
  }
}
