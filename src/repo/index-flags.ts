/**
 * The index entries git status does not look at: assume-unchanged (the
 * entry's CE_VALID bit) and skip-worktree (an extended flag, in indexes of
 * version 3 and 4), read from the index file itself (git's
 * index-format.txt), for worksnap's status on its copy of the index
 * (skipWorktreeMayBePresent, status-index.ts), through index-entries.ts.
 */
import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { searchUtf8 } from "../core/byte-order";
import { isMissingPath } from "../core/errors";
import { writeCacheFile } from "./cache-file";
import { CE_SKIP_WORKTREE, CE_VALID, type IndexEntry, type Pick, indexEntries, indexEntriesOfFile, indexVersion } from "./index-entries";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";
import { ensureStateDir } from "./state-dir";

/** One flagged entry: its path as the index stores it, and which flags it carries. */
export interface HiddenEntry {
  path: string;
  assumeUnchanged: boolean;
  skipWorktree: boolean;
}

/** An entry git status does not look at: flagged assume-unchanged or skip-worktree. */
const flagged: Pick = (flags, extended) => (flags & CE_VALID) !== 0 || (extended & CE_SKIP_WORKTREE) !== 0;

function hidden(entries: IndexEntry[] | null): HiddenEntry[] | null {
  return entries?.map((e) => ({ path: e.path, assumeUnchanged: (e.flags & CE_VALID) !== 0, skipWorktree: (e.extended & CE_SKIP_WORKTREE) !== 0 })) ?? null;
}

/**
 * The flagged entries of an index file's bytes, in index order; null when the
 * bytes are not an index this reader understands (index-entries.ts).
 */
export function hiddenEntries(index: Uint8Array): HiddenEntry[] | null {
  return hidden(indexEntries(index, flagged));
}

/** hiddenEntries of the index file at `path`, read through one reused window (index-entries.ts); null as above, and when the file cannot be read. */
export function hiddenEntriesOfFile(path: string, windowBytes = 1 << 20): HiddenEntry[] | null {
  return hidden(indexEntriesOfFile(path, flagged, windowBytes));
}

/** What is kept of an index's skip-worktree entries, per version of the index file (its identity). */
interface SkipWorktree {
  identity: string;
  /**
   * Where they are to be looked for in the work tree, from its top: the path of each present one and the
   * top-most absent path above each absent one (presentSkipWorktree); null when the index could not be read or
   * there are more than MAX_MARKS.
   */
  marks: string[] | null;
}

/** More places to look at than this (a sparse checkout by file, not by directory): a status cannot tell cheaply. */
const MAX_MARKS = 4096;

/** The places last found per index file: a server asks about the same index again and again. */
const known = new Map<string, SkipWorktree>();

/**
 * The skip-worktree entries' places for the repository's index while its identity (index-identity.ts) is
 * `identity`: read from the file once per version of it, then kept in memory and in
 * `.mcp/cache/skip-worktree.json` for the next process. null when it is no longer the file of that identity.
 */
function skipWorktreeOf(repo: RepoRoot, identity: string): SkipWorktree | null {
  const indexPath = join(repo.gitDir as string, "index");
  const cached = known.get(indexPath);
  if (cached?.identity === identity) return cached;
  const cacheFile = join(repo.stateDir, "cache", "skip-worktree.json");
  try {
    const onDisk = JSON.parse(readFileSync(cacheFile, "utf8")) as Partial<SkipWorktree>;
    if (onDisk.identity === identity && (onDisk.marks === null || (Array.isArray(onDisk.marks) && onDisk.marks.every((m) => typeof m === "string")))) {
      const found = { identity, marks: onDisk.marks };
      known.set(indexPath, found);
      return found;
    }
  } catch {
    // not read yet, or unreadable: read the index
  }
  const entries = hiddenEntriesOfFile(indexPath);
  if (indexIdentity(indexPath) !== identity) return null; // replaced while it was read, or before
  let marks: string[] | null = null;
  if (entries !== null) {
    const { present, absent } = presentSkipWorktree(topOf(repo), entries.filter((e) => e.skipWorktree));
    marks = [...present.map((e) => e.path), ...absent];
    if (marks.length > MAX_MARKS) marks = null;
  }
  const found = { identity, marks };
  known.set(indexPath, found);
  try {
    ensureStateDir(repo.stateDir);
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, cacheFile, JSON.stringify(found));
  } catch {
    // a cache only: the next process reads the index again
  }
  return found;
}

/** The top of the work tree the root lies in (index paths are named from there). */
function topOf(repo: RepoRoot): string {
  return repo.root.slice(0, repo.root.length - repo.gitPrefix.length) || "/";
}

/**
 * Skip-worktree entries (a sparse checkout, or `git update-index --skip-worktree`) split by whether the work tree
 * holds something at their path. git leaves them out of the work tree and out of its status, so the index alone
 * says nothing of them: one absent is not a file of the tree (nor are its directories), one present is read like
 * any file git does not vouch for. Each directory above them is looked at once, from the top, so a sparse
 * checkout's absent directories cost one lstat each, not one per entry. Only a missing path (or one below
 * something that is not a directory) is absent; any other failure leaves the entry to the capture, which names
 * what it cannot read. `absentEntries`: the absent entries themselves, in their order.
 */
export function presentSkipWorktree<E extends { path: string }>(root: string, hidden: readonly E[]): { present: E[]; absent: string[]; absentEntries: E[] } {
  const dirs = new Map<string, boolean>();
  const isDir = (dir: string): boolean => {
    let known = dirs.get(dir);
    if (known === undefined) {
      try {
        known = lstatSync(join(root, dir)).isDirectory();
      } catch (err) {
        known = !isMissingPath(err); // not looked into: the entry's own lstat decides
      }
      dirs.set(dir, known);
    }
    return known;
  };
  const present: E[] = [];
  const absent: string[] = [];
  const absentEntries: E[] = [];
  for (let k = 0; k < hidden.length; ) {
    const e = hidden[k] as E;
    let cut: string | null = null;
    for (let i = e.path.indexOf("/"); i >= 0 && cut === null; i = e.path.indexOf("/", i + 1)) {
      const dir = e.path.slice(0, i);
      if (!isDir(dir)) cut = dir;
    }
    if (cut !== null) {
      // the entries below an absent directory come together (byte order): "dir/..." sorts before "dir0", the
      // first name after every one of them
      absent.push(cut);
      const next = searchUtf8(hidden, `${cut}0`, pathOf, k + 1);
      for (; k < next; k++) absentEntries.push(hidden[k] as E);
      continue;
    }
    try {
      lstatSync(join(root, e.path));
      present.push(e);
    } catch (err) {
      if (isMissingPath(err)) {
        absent.push(e.path);
        absentEntries.push(e);
      } else present.push(e);
    }
    k++;
  }
  return { present, absent, absentEntries };
}

const pathOf = (e: { path: string }) => e.path;

/**
 * Whether a skip-worktree entry of the index of this identity may have something at its path in the work tree
 * now. git, reading an index, clears the flag of such an entry ("present despite skipped"), and a status that
 * writes the index keeps it cleared: on worksnap's copy of the index (status-index.ts) later statuses would then
 * name that file deleted once it is gone again, while the user's index still skips it and the user's status says
 * nothing. Where an entry may be present, the status runs on the user's index instead.
 *
 * An index of version 2 cannot hold the flag (its header is all that is read); otherwise the places skipWorktreeOf
 * keeps are looked at (a handful of lstats for a sparse checkout by directories). True when it cannot tell.
 */
export function skipWorktreeMayBePresent(repo: RepoRoot, identity: string): boolean {
  if (!repo.gitDir) return false;
  const indexPath = join(repo.gitDir, "index");
  if (known.get(indexPath)?.identity !== identity) {
    const version = indexVersion(indexPath);
    if (version === null) return true;
    if (version === 2) {
      // kept like any other answer for this version of the index: a status asks again and again
      if (indexIdentity(indexPath) === identity) known.set(indexPath, { identity, marks: [] });
      return false;
    }
  }
  const marks = skipWorktreeOf(repo, identity)?.marks ?? null;
  if (marks === null) return true;
  const top = topOf(repo);
  for (const mark of marks) {
    try {
      lstatSync(join(top, mark));
      return true;
    } catch (err) {
      if (!isMissingPath(err)) return true;
    }
  }
  return false;
}
