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

export function statusPaths(raw: Uint8Array): StatusPaths {
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
