import { lstatSync, statSync } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { WorksnapError, invalidArgument, permissionDenied } from "../../core/errors";
import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import type { RepoRoot } from "../../repo/root";

/**
 * What whole-tree work could not read. As git and ripgrep do, a file that
 * cannot be read (permission denied, or a FIFO, socket or device where a file
 * was listed) and a directory that cannot be opened are skipped and named,
 * and the work goes on: one bad file never fails a snapshot, a listing, a
 * grep or a comparison. A path named explicitly that cannot be read is
 * still an error (unreadableError).
 */
export interface UnreadableFields {
  /** The first UNREADABLE_CAP paths skipped, sorted by bytes; absent when none. */
  unreadable?: string[];
  /** How many were skipped in all; absent when none. */
  unreadable_total?: number;
}

/** Paths named in an answer; the count says how many more there were. */
export const UNREADABLE_CAP = 50;

/** The answer's fields for these skipped paths (any order, repeats allowed): nothing when there are none. */
export function unreadableFields(paths: Iterable<string>): UnreadableFields {
  const all = [...new Set(paths)].sort(compareUtf8);
  if (all.length === 0) return {};
  return { unreadable: all.slice(0, UNREADABLE_CAP), unreadable_total: all.length };
}

/** `entries` without the unreadable paths and whatever lies under an unreadable directory; O(entries x depth). */
export function withoutUnreadable<T extends { path: string }>(entries: T[], unreadable: readonly string[]): T[] {
  if (unreadable.length === 0) return entries;
  const skipped = new Set(unreadable);
  return entries.filter((e) => {
    if (skipped.has(e.path)) return false;
    for (let i = e.path.indexOf("/"); i >= 0; i = e.path.indexOf("/", i + 1)) if (skipped.has(e.path.slice(0, i))) return false;
    return true;
  });
}

/**
 * Refuses a named path (not the root) that could not be read at all: the
 * caller asked for exactly that file, so skipping it would answer a
 * different question. A directory holding unreadable files is not refused.
 */
export function refuseNamedUnreadable(repo: RepoRoot, scope: readonly RepoPath[], unreadable: readonly string[]): void {
  if (unreadable.length === 0) return;
  const skipped = new Set(unreadable);
  for (const p of scope) {
    if (p === ROOT) continue;
    if (skipped.has(p)) throw unreadableError(repo, p);
    // a directory the scope lies in that could not be opened
    const dir = unreadable.find((u) => isWithin(p, u as RepoPath));
    if (dir !== undefined) throw permissionDenied(`cannot read ${p}: the directory ${dir} cannot be opened (permission denied)`, { path: p, directory: dir });
  }
}

/**
 * Why `path` cannot be read: not a regular file (a FIFO, socket or device:
 * INVALID_ARGUMENT, never read, whoever asks) or permission denied.
 */
export function unreadableError(repo: RepoRoot, path: string): WorksnapError {
  const kind = specialKind(join(repo.root, path));
  if (kind !== null) return notRegularFile(path, kind);
  return permissionDenied(`cannot read ${path}: permission denied`, { path });
}

/** The error for a path that holds a FIFO, socket or device: answered at once, the thing is never opened for reading. */
export function notRegularFile(path: string, kind: string): WorksnapError {
  return invalidArgument(`${path} is not a regular file (it is a ${kind}); only regular files and symlinks can be read`, { path, kind });
}

/** "FIFO", "socket", "device" for what lstat (stat with `follow`) finds there; null for anything else. */
export function specialKind(abs: string, follow = false): string | null {
  let st;
  try {
    st = follow ? statSync(abs) : lstatSync(abs);
  } catch {
    return null;
  }
  return kindOf(st);
}

export function kindOf(st: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string | null {
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return null;
}
