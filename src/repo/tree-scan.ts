import { compareUtf8 } from "../core/byte-order";
import { isReservedPath, isWithin, type RepoPath } from "../core/repo-path";
import { decodePath, git, splitNul } from "./git";
import type { RepoRoot } from "./root";

/** How a candidate's content is known without reading it. */
export interface TreeEntry {
  path: string;
  /** git mode: "100644", "100755" or "120000". */
  mode: string;
  /** The index blob id when the work tree file is known to equal the index (clean tracked file). */
  gitOid?: string;
}

export interface ScanSkips {
  /** Names that are not valid UTF-8. */
  non_utf8: number;
  /** Gitlinks and nested repositories, which are not descended into. */
  submodules: number;
}

export interface TreeScan {
  entries: TreeEntry[];
  skipped: ScanSkips;
}

interface StatusInfo {
  /** Paths whose work tree content differs from the index (or that are unmerged). */
  dirty: Set<string>;
  /** Tracked paths missing from the work tree. */
  missing: Set<string>;
  untrackedFiles: string[];
  untrackedDirs: string[];
  nonUtf8: number;
}

const UNMERGED = new Set(["DD", "AU", "UD", "UA", "DU", "AA", "UU"]);

/** Parses `git status --porcelain=v1 -z`. */
export function parseStatus(raw: Uint8Array): StatusInfo {
  const info: StatusInfo = { dirty: new Set(), missing: new Set(), untrackedFiles: [], untrackedDirs: [], nonUtf8: 0 };
  const records = splitNul(raw);
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (rec.length < 4) continue;
    const xy = String.fromCharCode(rec[0] as number, rec[1] as number);
    const path = decodePath(rec.subarray(3));
    if (xy[0] === "R" || xy[0] === "C") i++; // the source path follows as its own record
    if (path === null) {
      if (xy === "??") info.nonUtf8++;
      continue;
    }
    if (xy === "??") {
      if (path.endsWith("/")) info.untrackedDirs.push(path.slice(0, -1));
      else info.untrackedFiles.push(path);
      continue;
    }
    if (xy === "!!") continue;
    const y = xy[1];
    if (UNMERGED.has(xy)) {
      info.dirty.add(path);
    } else if (y === "D") {
      info.missing.add(path);
    } else if (y !== " ") {
      info.dirty.add(path);
    }
  }
  return info;
}

function inScope(path: string, scope: RepoPath[]): boolean {
  for (const s of scope) if (isWithin(path, s)) return true;
  return false;
}

/** Pathspecs that mean exactly these paths, never globs. */
export function literalPathspecs(scope: RepoPath[]): string[] {
  return scope.map((p) => (p === "." ? ":(literal)." : `:(literal)${p}`));
}

/**
 * Candidate files of a git work tree under `scope`, sorted by UTF-8 bytes:
 * the index (minus files missing on disk) plus untracked, not-ignored files.
 * Clean tracked files carry their index blob id so nobody has to read them.
 */
export async function scanGitTree(repo: RepoRoot, status: Uint8Array, scope: RepoPath[]): Promise<TreeScan> {
  const st = parseStatus(status);
  const skipped: ScanSkips = { non_utf8: st.nonUtf8, submodules: 0 };
  const specs = literalPathspecs(scope);
  const staged = await git(["ls-files", "-s", "-z", "--", ...specs], { cwd: repo.root });
  const byPath = new Map<string, TreeEntry>();
  for (const rec of splitNul(staged.stdout)) {
    // "<mode> <oid> <stage>\t<path>"
    const tab = rec.indexOf(9);
    if (tab < 0) continue;
    const meta = new TextDecoder().decode(rec.subarray(0, tab)).split(" ");
    const path = decodePath(rec.subarray(tab + 1));
    if (path === null) {
      skipped.non_utf8++;
      continue;
    }
    const mode = meta[0] as string;
    if (mode === "160000") {
      skipped.submodules++;
      continue;
    }
    if (isReservedPath(path) || st.missing.has(path) || byPath.has(path)) continue;
    const clean = meta[2] === "0" && !st.dirty.has(path);
    byPath.set(path, clean ? { path, mode, gitOid: meta[1] as string } : { path, mode });
  }
  for (const path of st.untrackedFiles) {
    if (!isReservedPath(path) && inScope(path, scope)) byPath.set(path, { path, mode: "" });
  }
  const dirs = st.untrackedDirs.filter((d) => !isReservedPath(d) && (inScope(d, scope) || scope.some((s) => isWithin(s, d as RepoPath))));
  if (dirs.length > 0) {
    const others = await git(["ls-files", "-z", "--others", "--exclude-standard", "--", ...literalPathspecs(dirs as RepoPath[])], {
      cwd: repo.root,
    });
    for (const rec of splitNul(others.stdout)) {
      const path = decodePath(rec);
      if (path === null) {
        skipped.non_utf8++;
        continue;
      }
      if (path.endsWith("/")) {
        skipped.submodules++;
        continue;
      }
      if (!isReservedPath(path) && inScope(path, scope)) byPath.set(path, { path, mode: "" });
    }
  }
  const entries = [...byPath.values()].sort((a, b) => compareUtf8(a.path, b.path));
  return { entries, skipped };
}
