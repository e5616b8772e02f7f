/**
 * The index entries a sparse checkout leaves out of the work tree: flagged
 * skip-worktree and absent from it. git's status and `git diff HEAD` take
 * such an entry for what the index holds (nothing on disk says otherwise);
 * a comparison of a commit with the work tree does the same (tree-side.ts),
 * so a sparse checkout of a monorepo is not told it deleted every file
 * outside its cone, and no blob outside the cone is read (or fetched, in a
 * partial clone) to say so.
 */
import { compareUtf8 } from "../core/byte-order";
import type { FileMode } from "../core/file-mode";
import type { RepoPath } from "../core/repo-path";
import { join } from "node:path";
import { hiddenEntriesOfFile, presentSkipWorktree } from "./index-flags";
import type { GitResult } from "./git";
import type { RepoRoot } from "./root";
import { indexRecords, startIndexListing } from "./tree-scan";
import { plainIndex } from "./untracked-guess";

/** An index entry outside the sparse checkout: its path from the root, mode and git blob id. */
export interface SparseEntry {
  path: string;
  mode: FileMode;
  oid: string;
}

/**
 * The skip-worktree entries under `scope` the work tree holds nothing at, sorted by bytes. An index of version 2,
 * not split, holds none (the flag needs version 3): answered without reading it, the usual case; another is
 * listed by git only when its flags show such an entry. `listing`: the index listing for `scope`, when the caller
 * has it started already (a work tree read lists the index anyway).
 */
export async function absentSkipWorktree(repo: RepoRoot, scope: RepoPath[], listing?: Promise<GitResult>): Promise<SparseEntry[]> {
  if (!repo.gitDir || plainIndex(repo.gitDir)) return [];
  // an index of version 3 or 4 with no such entry (`feature.manyFiles` writes version 4, `git add -N` version 3):
  // the flags read from the file itself (about 9 ms for 100k entries), not a listing from git (about 50)
  const marks = hiddenEntriesOfFile(join(repo.gitDir, "index"));
  if (marks !== null && !marks.some((e) => e.skipWorktree)) return [];
  const flagged: SparseEntry[] = [];
  for (const rec of indexRecords((await (listing ?? startIndexListing(repo, scope))).stdout)) {
    // ls-files -v: S skip-worktree, s skip-worktree and assume-unchanged; gitlinks are never files of a side
    if ((rec.tag !== "S" && rec.tag !== "s") || rec.stage !== "0" || rec.path === null || rec.reserved || rec.mode === "160000") continue;
    flagged.push({ path: rec.path, mode: rec.mode as FileMode, oid: rec.oid });
  }
  if (flagged.length === 0) return [];
  // git keeps its index in byte order: sorted again only if a listing ever says otherwise
  for (let i = 1; i < flagged.length; i++) {
    if (compareUtf8((flagged[i - 1] as SparseEntry).path, (flagged[i] as SparseEntry).path) > 0) {
      flagged.sort((a, b) => compareUtf8(a.path, b.path));
      break;
    }
  }
  return presentSkipWorktree(repo.root, flagged).absentEntries;
}
