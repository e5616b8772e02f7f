/**
 * File names in patch headers. Names are byte strings here (C-quoting may
 * encode arbitrary bytes) and become RepoPaths only after validation: an
 * absolute path, a `..` segment or a path into .git/.mcp is an error, never
 * an escape from the repository.
 *
 * Prefixes: a leading "a/" or "b/" is stripped from names taken from the
 * `diff --git`, `---` and `+++` lines (names in `rename from` lines carry no
 * prefix). Nothing else is stripped, so a plain `--- src/x.ts` patch means
 * src/x.ts, and a `--no-prefix` git patch is read as written.
 */
import { isReservedPath, parseRepoPath, ROOT, type RepoPath } from "../../core/repo-path";
import { WorksnapError } from "../../core/errors";
import { byteStringToBytes, byteStringToText, isValidUtf8 } from "./byte-string";
import { unquoteCStyle } from "./git-quote";

export const DEV_NULL = "/dev/null";

export function stripPrefix(name: string): string {
  return name.startsWith("a/") || name.startsWith("b/") ? name.slice(2) : name;
}

/**
 * The name in a `--- name` / `+++ name` line: quoted, or up to a TAB (which
 * starts a timestamp). Returns null for /dev/null, undefined when unreadable.
 */
export function headerName(rest: string): string | null | undefined {
  let name: string;
  if (rest.startsWith('"')) {
    const q = unquoteCStyle(rest);
    if (!q) return undefined;
    name = q.value;
  } else {
    const tab = rest.indexOf("\t");
    name = tab >= 0 ? rest.slice(0, tab) : rest;
  }
  if (name === DEV_NULL) return null;
  if (name === "") return undefined;
  return stripPrefix(name);
}

/** The name in `rename from name` and the like: quoted or the rest of the line, no prefix. */
export function plainName(rest: string): string | undefined {
  if (rest.startsWith('"')) return unquoteCStyle(rest)?.value;
  return rest === "" ? undefined : rest;
}

/**
 * The two names of `diff --git A B` (prefixes stripped). Unquoted names with
 * spaces are ambiguous: like git, pick the split where both names are equal,
 * or the only space when there is one. null when the line cannot be split.
 */
export function gitHeaderNames(rest: string): { old: string; new: string } | null {
  if (rest.startsWith('"')) {
    const first = unquoteCStyle(rest);
    if (!first || rest[first.end] !== " ") return null;
    const second = rest.slice(first.end + 1);
    const b = second.startsWith('"') ? unquoteCStyle(second)?.value : second;
    return b === undefined || b === "" ? null : { old: stripPrefix(first.value), new: stripPrefix(b) };
  }
  const quotedSecond = rest.indexOf(' "');
  if (quotedSecond > 0) {
    const b = unquoteCStyle(rest, quotedSecond + 1);
    return b ? { old: stripPrefix(rest.slice(0, quotedSecond)), new: stripPrefix(b.value) } : null;
  }
  const spaces: number[] = [];
  for (let k = rest.indexOf(" "); k >= 0; k = rest.indexOf(" ", k + 1)) spaces.push(k);
  for (const k of spaces) {
    const a = stripPrefix(rest.slice(0, k));
    const b = stripPrefix(rest.slice(k + 1));
    if (a === b && a !== "") return { old: a, new: b };
  }
  if (spaces.length === 1) {
    const k = spaces[0]!;
    return { old: stripPrefix(rest.slice(0, k)), new: stripPrefix(rest.slice(k + 1)) };
  }
  return null;
}

export type NameCheck = { ok: true; path: RepoPath } | { ok: false; display: string; message: string };

/** A header name (byte string) as a RepoPath, or why it cannot be one. */
export function checkName(name: string): NameCheck {
  const display = byteStringToText(name);
  // Decoding would turn the bytes that are not UTF-8 into U+FFFD, i.e. name another file; worksnap names files by
  // UTF-8 paths only (as a capture skips other names), so such a name is refused, never guessed.
  if (display.includes("\uFFFD") && !isValidUtf8(byteStringToBytes(name))) {
    return { ok: false, display, message: `patch path ${JSON.stringify(display)} is not valid UTF-8 (the patch names a file by other bytes); worksnap reads and writes only files whose paths are UTF-8` };
  }
  let path: RepoPath;
  try {
    path = parseRepoPath(display, "patch path");
  } catch (err) {
    if (err instanceof WorksnapError) return { ok: false, display, message: err.message };
    throw err;
  }
  if (path === ROOT) return { ok: false, display, message: `patch path ${JSON.stringify(display)} names the repository root, not a file` };
  if (isReservedPath(path)) {
    return { ok: false, display, message: `patch path ${JSON.stringify(display)} is inside .git or .mcp, which patches may not change` };
  }
  return { ok: true, path };
}
