import { isReservedPath } from "../../core/repo-path";
import { decodePath, splitNul } from "../../repo/git";

/**
 * What `git status --porcelain=v1 -z` names, for the task layer: every path
 * whose state differs from HEAD in the index or the work tree (both columns,
 * so a change that is staged and nothing more counts too).
 */
export interface StatusPaths {
  /** Changed, added, unmerged and untracked paths that are on disk; untracked directories end without "/". */
  present: string[];
  /** Untracked directories among `present` (their files are counted when listed). */
  untrackedDirs: string[];
  /** Paths deleted from the work tree, and the sources of renames. */
  absent: string[];
}

/**
 * `prefix`: RepoRoot.gitPrefix. Git's status names paths from the top of the
 * work tree; for a root below it only the paths under the root count, named
 * from the root (a root inside an untracked directory is "." untracked).
 */
export function statusPaths(raw: Uint8Array, prefix = ""): StatusPaths {
  const present = new Set<string>();
  const absent = new Set<string>();
  const untrackedDirs: string[] = [];
  const records = splitNul(raw);
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (rec.length < 4) continue;
    const x = String.fromCharCode(rec[0] as number);
    const y = String.fromCharCode(rec[1] as number);
    let path = decodePath(rec.subarray(3));
    let source: string | null = null;
    if (x === "R" || x === "C") source = decodePath((records[++i] as Uint8Array | undefined) ?? new Uint8Array());
    if (x === "!" || path === null) continue;
    if (prefix !== "") {
      if (x === "?" && path.endsWith("/") && prefix.startsWith(path)) path = "./";
      else if (!path.startsWith(prefix)) continue;
      else path = path.slice(prefix.length);
      if (source !== null) source = source.startsWith(prefix) ? source.slice(prefix.length) : null;
    }
    if (x === "?" && path.endsWith("/")) {
      path = path.slice(0, -1);
      untrackedDirs.push(path);
    }
    if (isReservedPath(path)) continue;
    if (y === "D" || (x === "D" && y === " ")) absent.add(path);
    else present.add(path);
    if (source !== null && x === "R" && !isReservedPath(source)) absent.add(source);
  }
  for (const p of present) absent.delete(p);
  return { present: [...present], untrackedDirs, absent: [...absent] };
}
