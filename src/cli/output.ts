import { fstatSync, statSync } from "node:fs";
import { canonicalJson } from "../core/canonical-json";
import { writeFully } from "../core/write-fully";
import { publicError } from "../core/public-error";
import { nativeModule } from "../repo/native";
import { UsageError } from "./args";

/**
 * Exit codes. `io` (EX_IOERR) is a failed write of the output, `busy`
 * (EX_TEMPFAIL) a BUSY refusal worth retrying, and `brokenPipe` the status a
 * shell shows for a tool that SIGPIPE ended (128 + 13): the reader of our
 * output went away (`| head`), so we stop quietly, as `cat` or `git log` do.
 */
export const EXIT = { ok: 0, user: 1, usage: 2, internal: 70, io: 74, busy: 75, brokenPipe: 141 } as const;

/** Standard output could not take what the command wrote: the command stops, and main exits with its code. */
export class OutputError extends Error {
  constructor(readonly errno: string) {
    super(`cannot write to standard output: ${errno}`);
    this.name = "OutputError";
  }

  get exitCode(): number {
    return this.errno === "EPIPE" ? EXIT.brokenPipe : EXIT.io;
  }
}

/**
 * Every byte the CLI prints goes through here. A write returns only once all
 * of it is in the file or pipe, so nothing is left in a buffer when the
 * process exits (process.exit drops what a stream still holds: output into a
 * slow pipe was cut at 64 KiB); a pipe set non-blocking is waited on (writeFully).
 */
function writeAll(fd: number, data: string | Uint8Array): void {
  try {
    writeFully(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
  } catch (err) {
    throw new OutputError((err as NodeJS.ErrnoException).code ?? "EIO");
  }
}

/** The command's output. Throws OutputError when it cannot be written (EPIPE: the reader is gone). */
export function stdout(data: string | Uint8Array): void {
  writeAll(1, data);
}

/**
 * Messages for the person (progress, notes, errors). Best effort: with stderr
 * closed there is nobody to tell, and the command's own outcome stands.
 */
export function stderr(data: string): void {
  try {
    writeAll(2, data);
  } catch {
    // nowhere left to report it
  }
}

/** Whether `path` names the file this process's stdout writes to (`-o /dev/stdout`, or the pipe it is). */
export function isStdout(path: string): boolean {
  try {
    const out = fstatSync(1);
    const named = statSync(path);
    return out.dev === named.dev && out.ino === named.ino;
  } catch {
    return false;
  }
}

export function printJson(value: unknown): void {
  stdout(`${canonicalJson(value)}\n`);
}

/**
 * Whether fd is a terminal; asked of the descriptor, so the runtime's stream objects are never created. The
 * native module asks isatty(3) itself: loading the runtime's tty module (and the stream modules it brings) cost
 * each command 5-7 ms of start-up; without the module (the darwin executables) it is loaded when first asked.
 */
export function isTerminal(fd: 0 | 1 | 2): boolean {
  const m = nativeModule();
  return m ? m.isatty(fd) : (require("node:tty") as typeof import("node:tty")).isatty(fd);
}

export const color = {
  enabled: (fd: 1 | 2) => isTerminal(fd) && !process.env.NO_COLOR,
  wrap: (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s),
};

/**
 * The one place the CLI maps errors: a message on stderr (or JSON on stdout
 * with --json) and an exit code. The error is the one an MCP client would get
 * (publicError): repository paths relative to the root, no stack trace.
 */
export function reportError(err: unknown, json: boolean, root: string | null): number {
  if (err instanceof OutputError) {
    if (err.errno !== "EPIPE") stderr(`worksnap: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof UsageError) {
    stderr(`worksnap: ${err.message}\nRun with --help for usage.\n`);
    return EXIT.usage;
  }
  const e = publicError(err, { root, foreignPaths: "keep" });
  try {
    if (json) printJson({ error: e });
    else stderr(`worksnap: ${e.code}: ${e.message}\n`);
  } catch (writeErr) {
    if (writeErr instanceof OutputError) return writeErr.exitCode;
    throw writeErr;
  }
  return e.code === "INTERNAL" ? EXIT.internal : e.code === "BUSY" ? EXIT.busy : EXIT.user;
}

/** How long work runs before its progress bar appears: 300 ms, or WORKSNAP_PROGRESS_AFTER_MS (a whole number of ms). */
function progressAfterMs(): number {
  const v = process.env.WORKSNAP_PROGRESS_AFTER_MS;
  return v !== undefined && /^[0-9]{1,7}$/.test(v) ? Number(v) : 300;
}

/** A progress bar on stderr, only when stderr is a terminal and the work is long. */
export function progressBar(label: string): (done: number, total: number) => void {
  if (!isTerminal(2)) return () => undefined;
  const started = Date.now();
  const after = progressAfterMs();
  let shown = false;
  let finished = false;
  return (done, total) => {
    // Long work only: many items, and still going after `after` ms.
    if (finished || total < 500 || (!shown && Date.now() - started < after)) return;
    shown = true;
    const width = 30;
    const frac = total === 0 ? 1 : done / total;
    const bar = "#".repeat(Math.round(frac * width)).padEnd(width, ".");
    stderr(`\r${label} [${bar}] ${done}/${total}`);
    if (done >= total) {
      stderr("\n");
      finished = true;
    }
  };
}

/** Names on stderr what an answer skipped because it could not be read (its `unreadable` fields), if anything. */
export function warnUnreadable(r: { unreadable?: string[]; unreadable_total?: number }): void {
  const names = r.unreadable ?? [];
  const total = r.unreadable_total ?? names.length;
  if (total === 0) return;
  const more = total > names.length ? ` and ${total - names.length} more` : "";
  stderr(`worksnap: skipped ${total} path${total === 1 ? "" : "s"} that cannot be read: ${names.join(", ")}${more}\n`);
}

/**
 * Names on stderr what a capture left out on purpose (its `skipped` counts): names that are not UTF-8, which
 * a snapshot cannot hold, and submodules, which are repositories of their own.
 */
export function warnSkipped(skipped: { non_utf8: number; submodules: number }): void {
  const parts = [
    skipped.non_utf8 > 0 && `${skipped.non_utf8} path${skipped.non_utf8 === 1 ? "" : "s"} whose name is not UTF-8 (snapshots hold UTF-8 names only)`,
    skipped.submodules > 0 && `${skipped.submodules} submodule${skipped.submodules === 1 ? "" : "s"} (a repository of its own)`,
  ].filter(Boolean);
  if (parts.length > 0) stderr(`worksnap: skipped ${parts.join(" and ")}\n`);
}
