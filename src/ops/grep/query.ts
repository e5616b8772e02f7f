/**
 * Grep options: validation, defaults and the compiled matcher.
 *
 * Matching model (ripgrep's default line-oriented search):
 * - a match lies within one line; lines end at `\n`; a `\r` before it is an
 *   ordinary character to the matcher (so `foo$` does not match "foo\r\n", as
 *   in rg without --crlf) and is dropped only from the text shown;
 * - a UTF-8 byte order mark at the start of a file is not content (as in rg);
 * - `fixedStrings` without `caseInsensitive` is a byte search (Buffer.indexOf)
 *   for the pattern's UTF-8 bytes, leftmost non-overlapping occurrences;
 * - a regex is JavaScript RegExp syntax with the `u` flag (`iu` when
 *   case-insensitive), run over lines decoded as UTF-8, rewritten
 *   (regex-analysis.ts) so that `.` matches any character but `\n`, `^`/`$`
 *   anchor only at line boundaries, nothing consumes `\n`, and `\w` `\d` `\s`
 *   `\b` have ripgrep's Unicode meanings instead of JavaScript's ASCII ones;
 *   invalid UTF-8 decodes to U+FFFD, which `.` matches (rg's `.` does not);
 * - `fixedStrings` with `caseInsensitive` is the regex path on the escaped
 *   pattern, so it matches exactly what `iu` matches (including the Kelvin
 *   sign for "k" and long s for "s"); for an ASCII pattern it runs as a
 *   Latin-1 `gi` search over the bytes (regex-scan.ts AsciiFold), except in
 *   a region holding one of those two signs;
 * - a pattern holding a line break is refused: it could never match.
 * Columns are 1-based byte offsets in the line, like `rg --column`.
 */
import { invalidArgument } from "../../core/errors";
import { decodeCursor, queryIdentity, type CursorPosition } from "./cursor";
import { planRegex, type RegexPlan } from "./regex-analysis";
import { fromRipgrepSyntax } from "./ripgrep-syntax";

export interface GrepOptions {
  pattern: string;
  fixedStrings?: boolean;
  caseInsensitive?: boolean;
  /** lines of context before and after each match, 0..10 */
  contextLines?: number;
  /** matches returned per call (default 200) */
  maxMatches?: number;
  /** candidates searched per call (default: no limit) */
  maxFiles?: number;
  /** budget for the JSON of `matches`, in bytes (default 60,000) */
  maxBytes?: number;
  cursor?: string;
  /** identity of everything else that decides the candidates: tree or snapshot id, paths, globs */
  queryKey: string;
  signal?: AbortSignal;
  /**
   * files read through their open() at once (default 8); files that name
   * their `absPath` are read ahead by reader threads instead, up to 1024
   * files / 64 MB ahead of the walk-order consumer
   */
  concurrency?: number;
  /** wall-clock budget for the call; when it runs out the answer is cut short with `timed_out` (default 10 s) */
  timeBudgetMs?: number;
  /** read size for large files and streams (default 4 MiB); small values exercise chunk boundaries in tests */
  chunkBytes?: number;
}

export type Matcher = { kind: "literal"; needle: Uint8Array } | { kind: "regex"; plan: RegexPlan };

export interface CompiledQuery {
  pattern: string;
  fixedStrings: boolean;
  caseInsensitive: boolean;
  contextLines: number;
  maxMatches: number;
  maxFiles: number;
  maxBytes: number;
  concurrency: number;
  timeBudgetMs: number;
  chunkBytes: number;
  matcher: Matcher;
  /** hash baked into cursors */
  identity: string;
  /** where a cursor says to resume; null for a first page */
  resume: CursorPosition | null;
}

export const DEFAULT_MAX_MATCHES = 200;
export const DEFAULT_MAX_BYTES = 60_000;
export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_TIME_BUDGET_MS = 10_000;
export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
export const MAX_CONTEXT_LINES = 10;
const MAX_PATTERN_LENGTH = 4096;

export function compileQuery(opts: GrepOptions): CompiledQuery {
  const { pattern } = opts;
  if (typeof pattern !== "string") throw invalidArgument("pattern must be a string", { arg: "pattern" });
  if (pattern === "") throw invalidArgument("pattern must not be empty", { arg: "pattern" });
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw invalidArgument(`pattern is longer than ${MAX_PATTERN_LENGTH} characters`, { arg: "pattern" });
  }
  if (typeof opts.queryKey !== "string") throw invalidArgument("queryKey must be a string", { arg: "queryKey" });
  const fixedStrings = flag(opts.fixedStrings, "fixed_strings");
  const caseInsensitive = flag(opts.caseInsensitive, "case_insensitive");
  const identity = queryIdentity({ pattern, fixedStrings, caseInsensitive, queryKey: opts.queryKey });
  let cursor: CursorPosition | null = null;
  if (opts.cursor !== undefined) {
    if (typeof opts.cursor !== "string") throw invalidArgument("cursor must be a string", { arg: "cursor" });
    cursor = decodeCursor(opts.cursor, identity);
  }
  return {
    pattern,
    fixedStrings,
    caseInsensitive,
    contextLines: int(opts.contextLines, "context_lines", 0, MAX_CONTEXT_LINES, 0),
    maxMatches: int(opts.maxMatches, "max_matches", 1, 1_000_000, DEFAULT_MAX_MATCHES),
    maxFiles: int(opts.maxFiles, "max_files", 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    maxBytes: int(opts.maxBytes, "maxBytes", 1, 64 * 1024 * 1024, DEFAULT_MAX_BYTES),
    concurrency: int(opts.concurrency, "concurrency", 1, 256, DEFAULT_CONCURRENCY),
    timeBudgetMs: int(opts.timeBudgetMs, "timeBudgetMs", 1, 24 * 3600 * 1000, DEFAULT_TIME_BUDGET_MS),
    chunkBytes: int(opts.chunkBytes, "chunkBytes", 1, 1024 * 1024 * 1024, DEFAULT_CHUNK_BYTES),
    matcher: compileMatcher(pattern, fixedStrings, caseInsensitive),
    identity,
    resume: cursor,
  };
}

function compileMatcher(pattern: string, fixedStrings: boolean, caseInsensitive: boolean): Matcher {
  if (pattern.includes("\n")) {
    throw invalidArgument(
      "pattern contains a line break; grep matches within one line, so search for each line's text separately",
      { arg: "pattern" },
    );
  }
  if (fixedStrings && !caseInsensitive) return { kind: "literal", needle: new Uint8Array(Buffer.from(pattern, "utf8")) };
  // a pattern written for ripgrep ((?i)foo, [[:alpha:]], \p{Greek}) runs as ripgrep would run it
  const js = fixedStrings ? { source: escapeRegex(pattern), caseInsensitive } : fromRipgrepSyntax(pattern, caseInsensitive);
  const source = js.source;
  const plan = planRegex(source, js.caseInsensitive);
  if (fixedStrings && /^[\x00-\x7f]*$/.test(pattern)) plan.fold = { source, guards: foldGuards(pattern), lower: pattern.toLowerCase() };
  return { kind: "regex", plan };
}

/** UTF-8 of the non-ASCII characters that `iu` folds to a letter of an ASCII pattern (AsciiFold). */
function foldGuards(pattern: string): number[][] {
  const guards: number[][] = [];
  if (/k/i.test(pattern)) guards.push([...Buffer.from("\u212a", "utf8")]);
  if (/s/i.test(pattern)) guards.push([...Buffer.from("\u017f", "utf8")]);
  return guards;
}

/** Escapes the syntax characters, which are the only identity escapes `u` mode allows. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw invalidArgument(`${name} must be true or false`, { arg: name });
  return value;
}

function int(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    const range = max >= Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw invalidArgument(`${name} must be an integer ${range}`, { arg: name, value });
  }
  return value;
}
