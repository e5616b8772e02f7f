/**
 * A commit's files read from the index instead of from the commit's tree.
 *
 * A comparison of a commit with the work tree lists the index anyway (the work tree's side is made from it), and
 * the commit is usually HEAD or near it: git tells how the commit differs from the index (`git diff-index --cached
 * --raw`, a walk of the commit's tree against the index that prints only what differs, about 90 ms for 100k files)
 * far sooner than it lists the commit's tree (`git ls-tree -r`: 11 MB for 100k files, about 400 ms listed and
 * read). The commit's files are then the index's entries, where git names no difference, and the commit's side of
 * each difference git names: exactly what listRevisionTree lists (test/repo/revision-via-index.test.ts holds the
 * two equal over staged, deleted, added, intent-to-add, unmerged, sparse and renamed entries).
 */
import { compareUtf8 } from "../core/byte-order";
import type { FileMode } from "../core/file-mode";
import { isReservedPath, type RepoPath } from "../core/repo-path";
import { decodePath, git, type GitResult } from "./git";
import type { RevisionEntry } from "./git-revision";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";
import { indexRecords, literalPathspecs, mergeSorted } from "./tree-scan";
import { join } from "node:path";

/** Where the index is, and its identity before the listing and this were started (indexIdentity). */
export interface IndexRead {
  path: string;
  identity: string | null;
}

/** The index's identity now, to be given to revisionViaIndex with the listing started after it. */
export function indexRead(repo: RepoRoot): IndexRead | null {
  if (!repo.gitDir) return null;
  const path = join(repo.gitDir, "index");
  return { path, identity: indexIdentity(path) };
}

/**
 * The files of `commit` under `scope`, as listRevisionTree lists them (paths from the root, sorted by bytes,
 * gitlinks, names that are not UTF-8 and reserved paths left out), made from `listing` (`git ls-files -s -v -z` of
 * `scope`, tree-scan.ts) and `git diff-index --cached` of the same scope. Null where it cannot be told so: the index
 * was replaced while the two were read (they must have read the same one), or it holds an entry of a kind this
 * does not read (a sparse index's directory). The caller then lists the commit's tree.
 */
export async function revisionViaIndex(repo: RepoRoot, commit: string, scope: RepoPath[], listing: Promise<GitResult>, before: IndexRead): Promise<RevisionEntry[] | null> {
  if (before.identity === null) return null;
  const args = ["diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", "--ignore-submodules=none"];
  // a root below the top of the work tree: its part, named from it, as the listing names it
  if (repo.gitPrefix !== "") args.push("--relative");
  const [differ, listed] = await Promise.all([git([...args, commit, "--", ...literalPathspecs(scope)], { cwd: repo.root }), listing]);
  const changed = commitSideOfDifferences(differ.stdout);
  if (changed === null) return null;
  const fromIndex: RevisionEntry[] = [];
  let sorted = true;
  let last = "";
  for (const rec of indexRecords(listed.stdout)) {
    const path = rec.path;
    if (path === null || rec.reserved || changed.named.has(path)) continue;
    // an entry git names no difference for is one the commit holds alike: a file of stage 0 (an unmerged path
    // always differs), or a gitlink, which no side holds as a file
    const mode = MODES.get(rec.mode);
    if (rec.stage !== "0" || mode === undefined) return null;
    if (mode === "160000") continue;
    if (sorted && last !== "" && (rec.wide ? compareUtf8(last, path) > 0 : last > path)) sorted = false;
    last = path;
    fromIndex.push({ path, mode, oid: rec.oid });
  }
  if (indexIdentity(before.path) !== before.identity) return null;
  if (!sorted) fromIndex.sort((a, b) => compareUtf8(a.path, b.path));
  return changed.entries.length === 0 ? fromIndex : mergeSorted(fromIndex, changed.entries);
}

/** The index's modes, as a commit's side lists them (a gitlink is left out). */
const MODES = new Map<string, FileMode | "160000">([
  ["100644", "100644"],
  ["100755", "100755"],
  ["120000", "120000"],
  ["160000", "160000"],
]);

/**
 * `git diff-index --raw -z` output as the commit's side of each difference: every path named (`named`), and the
 * files the commit holds there (`entries`, sorted by bytes): its mode and blob, where its mode is a file's (000000:
 * the commit has nothing there; 160000: a gitlink). Null for a record this does not read.
 */
function commitSideOfDifferences(raw: Uint8Array): { named: Set<string>; entries: RevisionEntry[] } | null {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const named = new Set<string>();
  const entries: RevisionEntry[] = [];
  // ":<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0", one path a record without renames
  for (let at = 0; at < bytes.length; ) {
    const headEnd = bytes.indexOf(0, at);
    const pathEnd = headEnd < 0 ? -1 : bytes.indexOf(0, headEnd + 1);
    if (pathEnd < 0 || bytes[at] !== 0x3a) return null;
    const [oldMode, , oldOid] = bytes.toString("latin1", at + 1, headEnd).split(" ") as [string, string, string];
    const path = decodePath(bytes.subarray(headEnd + 1, pathEnd));
    at = pathEnd + 1;
    if (path === null || isReservedPath(path)) continue;
    named.add(path);
    if (oldMode === "000000" || oldMode === "160000") continue;
    const mode = MODES.get(oldMode);
    if (mode === undefined || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oldOid)) return null;
    entries.push({ path, mode: mode as FileMode, oid: oldOid });
  }
  for (let i = 1; i < entries.length; i++) {
    if (compareUtf8((entries[i - 1] as RevisionEntry).path, (entries[i] as RevisionEntry).path) > 0) {
      entries.sort((a, b) => compareUtf8(a.path, b.path));
      break;
    }
  }
  return { named, entries };
}
