import { invalidArgument } from "./errors";

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
    segments.push(seg);
  }
  if (segments.length === 0) return ROOT;
  return segments.join("/") as RepoPath;
}

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

/** worksnap's own state and git's: never listed, never written through the tools. */
export function isReservedPath(p: string): boolean {
  return p === ".git" || p === ".mcp" || p.startsWith(".git/") || p.startsWith(".mcp/");
}
