import { asWorksnapError, type ErrorCode, type ErrorDetails, WorksnapError } from "./errors";

/** An error as an answer shows it: `{code, message, details}`, with no machine internals in it. */
export interface PublicError {
  code: ErrorCode;
  message: string;
  details: ErrorDetails;
}

export interface PublicErrorOptions {
  /** The repository root (canonical): a path under it is shown relative to it, the root itself as ".". */
  root: string | null;
  /**
   * Other absolute paths in text worksnap did not write itself (a system
   * message, git's stderr, an INTERNAL error): "redact" keeps only their last
   * name (`…/attributes`), for a client on the other side of a protocol;
   * "keep" leaves them for the person who owns the machine (the CLI).
   */
  foreignPaths: "redact" | "keep";
}

/**
 * The one sanitising step every adapter applies where it maps errors (MCP
 * errorResult, the CLI's reportError): repository paths become repo-relative
 * in the message and in every string of the details, and no stack trace is
 * ever part of an error (asWorksnapError keeps none). The original error,
 * stack and all, is for a server's log on stderr.
 */
export function publicError(err: unknown, opts: PublicErrorOptions): PublicError {
  const e = asWorksnapError(err);
  const foreign = !(err instanceof WorksnapError) || e.code === "INTERNAL";
  const relative = opts.root ? relativizer(opts.root) : (s: string) => s;
  const clean = foreign && opts.foreignPaths === "redact" ? (s: string) => redactAbsolutePaths(relative(s)) : relative;
  return { code: e.code, message: clean(e.message), details: mapStrings(e.details, clean) as ErrorDetails };
}

/** `<root>/a/b` → `a/b`, `<root>` alone → `.`; a longer name that merely starts like the root is left alone. */
export function relativizer(root: string): (s: string) => string {
  const base = root.length > 1 ? root.replace(/\/+$/, "") : root;
  if (base === "/" || base === "") return (s) => s;
  // the root, then either more path (dropped with its slashes) or the end of the path (the root itself: ".")
  const pattern = new RegExp(`${escapeRegExp(base)}(?:(/+)(?=${PATH_CHAR})|/*(?!${PATH_CHAR}))`, "g");
  return (s) => (s.includes(base) ? s.replace(pattern, (_m, more: string | undefined) => (more === undefined ? "." : "")) : s);
}

/**
 * An absolute path that is not the repository's: `/home/u/.config/git/x` →
 * `…/x`. A path starts after a separator (start, space, quote, bracket, `=`,
 * `:`); `//` (a URL) and a lone `/` are not paths.
 */
export function redactAbsolutePaths(s: string): string {
  return s.replace(/(^|[\s'"`(\[{<=:,])\/(?!\/)([^\s'"`()\[\]{}<>,;]+)/g, (_m, lead: string, rest: string) => {
    const trimmed = rest.replace(/[.:]+$/, "");
    const tail = rest.slice(trimmed.length);
    const last = trimmed.slice(trimmed.lastIndexOf("/") + 1);
    return `${lead}…/${last}${tail}`;
  });
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, f);
    return out;
  }
  return value;
}

/** A character that continues a path (anything but a separator in prose, quotes and brackets). */
const PATH_CHAR = "[^\\s'\"`()\\[\\]{}<>,;:]";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
