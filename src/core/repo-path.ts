import { invalidArgument, permissionDenied } from "./errors";
import { perPath } from "./per-path";

/**
 * A validated, normalised repo-relative path (spec 1.2): POSIX separators, no
 * `.`/`..`/empty segments, no leading `/` or `~`, no NUL, no trailing `/`.
 * The root is ".". Distinct from absolute file-system paths by construction.
 */
export type RepoPath = string & { readonly __brand: "RepoPath" };

export const ROOT = "." as RepoPath;

/**
 * Parses user input into a RepoPath, or throws INVALID_ARGUMENT naming the
 * argument and what is wrong with it. `src`, `src/` and `./src` are the same path.
 */
export function parseRepoPath(input: unknown, argName = "path"): RepoPath {
  if (typeof input !== "string") throw invalidArgument(`${argName} must be a string`, { arg: argName });
  const reject = (why: string) =>
    invalidArgument(`${argName} ${JSON.stringify(input)} ${why}`, { arg: argName, path: input });
  if (input.includes("\0")) throw reject("contains a NUL byte");
  // not echoed: an absolute path names this machine's layout, and the caller knows what it sent
  if (input.startsWith("/")) throw invalidArgument(`${argName} is an absolute path; paths are relative to the repository root (".")`, { arg: argName });
  if (/^[A-Za-z]:([\\/]|$)/.test(input)) throw reject("is a Windows absolute path; use repo-relative paths");
  if (input.startsWith("~")) throw reject("starts with ~; paths are relative to the repository root");
  if (input.includes("\\")) throw reject("contains a backslash; use / as the separator");
  const segments: string[] = [];
  for (const seg of input.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") throw reject("contains a .. segment; paths may not leave the repository root");
    const bytes = Buffer.byteLength(seg, "utf8");
    if (bytes > NAME_MAX) {
      throw invalidArgument(`${argName} has a name of ${bytes} bytes (${JSON.stringify(seg.slice(0, 40))}...); a file name may be at most ${NAME_MAX} bytes`, {
        arg: argName,
        name_bytes: bytes,
        limit: NAME_MAX,
      });
    }
    segments.push(seg);
  }
  if (segments.length === 0) return ROOT;
  const path = segments.join("/");
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes >= PATH_MAX) {
    throw invalidArgument(`${argName} is ${bytes} bytes long; a path may be at most ${PATH_MAX - 1} bytes`, { arg: argName, path_bytes: bytes, limit: PATH_MAX - 1 });
  }
  return path as RepoPath;
}

/** The longest file name the file systems worksnap runs on accept, in bytes (NAME_MAX). */
export const NAME_MAX = 255;
/**
 * The system's limit on a path, in bytes with its terminating NUL (PATH_MAX:
 * 4096 on Linux, 1024 on macOS). A repo-relative path must be shorter; one
 * that fits but is too long once joined to the root fails with ENAMETOOLONG,
 * which asWorksnapError maps to INVALID_ARGUMENT as well.
 */
export const PATH_MAX = process.platform === "darwin" ? 1024 : 4096;

/** Internal constructor for paths that come from trusted sources (git, our walk). */
export function trustedRepoPath(p: string): RepoPath {
  return p as RepoPath;
}

export function isRoot(p: RepoPath): boolean {
  return p === ROOT;
}

/** True when `p` is `dir` itself or lies under it. */
export function isWithin(p: string, dir: RepoPath): boolean {
  if (dir === ROOT) return true;
  return p === dir || (p.length > dir.length && p.startsWith(dir) && p.charCodeAt(dir.length) === 47);
}

export function parentOf(p: RepoPath): RepoPath {
  const i = p.lastIndexOf("/");
  return (i < 0 ? ROOT : p.slice(0, i)) as RepoPath;
}

export function baseName(p: RepoPath): string {
  const i = p.lastIndexOf("/");
  return i < 0 ? p : p.slice(i + 1);
}

/** Every ancestor directory of `p`, nearest last, excluding the root: "a/b/c" -> ["a", "a/b"]. */
export function ancestorsOf(p: string): RepoPath[] {
  const out: RepoPath[] = [];
  let i = p.indexOf("/");
  while (i >= 0) {
    out.push(p.slice(0, i) as RepoPath);
    i = p.indexOf("/", i + 1);
  }
  return out;
}

export function joinRepoPath(dir: RepoPath, name: string): RepoPath {
  return (dir === ROOT ? name : `${dir}/${name}`) as RepoPath;
}

/** The first segment of the path, used to fence off `.git` and `.mcp`. */
export function topSegment(p: RepoPath): string {
  const i = p.indexOf("/");
  return i < 0 ? p : p.slice(0, i);
}

/**
 * worksnap's own state and git's: never listed, never written through the
 * tools. `.git` is reserved as any segment (git's own rule: a nested
 * repository's hooks are as dangerous as ours), `.mcp` as the first one.
 * Names are compared as the file systems that fold them would see them
 * (reservedName), everywhere: `.GIT/config` is `.git/config` on macOS and
 * Windows, and refusing it on Linux too keeps a repository safe to check out
 * on either (git refuses such names in trees for the same reason).
 *
 * `from` (0, or just after a "/") skips segments already known not to be
 * reserved: a listing in path order checks only what a path does not share
 * with the directory of the path before it.
 */
export function isReservedPath(p: string, from = 0): boolean {
  let start = from;
  for (;;) {
    const slash = p.indexOf("/", start);
    const end = slash < 0 ? p.length : slash;
    // only a segment starting with ".", "g", "m" or a character HFS+ ignores can fold to a reserved name
    const c = p.charCodeAt(start) | 0x20;
    if ((c === 46 || c === 0x67 || c === 0x6d || c >= 0x200c) && mayFoldToReserved(p, start, end)) {
      const name = reservedName(p.slice(start, end));
      if (name === ".git" || (start === 0 && name === ".mcp")) return true;
    }
    if (slash < 0) return false;
    start = slash + 1;
  }
}
perPath(isReservedPath);


/**
 * Whether p[start, end) can fold to a reserved name at all (reservedName does
 * the folding). An ASCII segment folds by lower case and by cutting at its
 * end only, so it must start, in any case, with ".git", ".mcp", "git~1" or
 * "mcp~1"; a segment with any other character is left to reservedName. Most
 * names fail this at once ("main.ts", "generated"), without the slice,
 * normalisation and regular expressions of the folding.
 */
function mayFoldToReserved(p: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (p.charCodeAt(i) >= 0x80) return true;
  const at = (i: number) => (start + i < end ? p.charCodeAt(start + i) | 0x20 : -1);
  const c0 = at(0);
  if (c0 === 46) {
    const c1 = at(1);
    return (c1 === 0x67 && at(2) === 0x69 && at(3) === 0x74) || (c1 === 0x6d && at(2) === 0x63 && at(3) === 0x70);
  }
  // "git~1", "mcp~1": "~" (0x7e) and "1" (0x31) are unchanged by | 0x20
  if (c0 === 0x67) return at(1) === 0x69 && at(2) === 0x74 && at(3) === 0x7e && at(4) === 0x31;
  if (c0 === 0x6d) return at(1) === 0x63 && at(2) === 0x70 && at(3) === 0x7e && at(4) === 0x31;
  return true;
}
perPath(mayFoldToReserved);


/** Throws PERMISSION_DENIED for a reserved path (isReservedPath): what every tool answers for one. */
export function refuseReserved(p: string): void {
  if (isReservedPath(p)) throw permissionDenied(`${p} is reserved for git and worksnap state`, { path: p });
}

/** Code points HFS+ ignores in names (git's is_hfs_dotgit list), so ".g\u200cit" names ".git" on a Mac. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * A name as a case-folding, normalising file system compares it, for the
 * reserved names only: without the code points HFS+ ignores, NFC, lower
 * case; then as NTFS reads it: trailing dots and spaces dropped, an
 * alternate data stream (":...") cut off, the 8.3 short names `GIT~1` and
 * `MCP~1` taken for `.git` and `.mcp`.
 */
function reservedName(segment: string): string {
  let name = segment.replace(HFS_IGNORED, "").normalize("NFC").toLowerCase();
  const colon = name.indexOf(":");
  if (colon >= 0) name = name.slice(0, colon);
  name = name.replace(/[. ]+$/, "");
  if (name === "git~1") return ".git";
  if (name === "mcp~1") return ".mcp";
  return name;
}
