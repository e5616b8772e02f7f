import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument } from "../../core/errors";
import type { FileMode } from "../../core/file-mode";
import type { Fingerprint } from "../../repo/fingerprint";
import { touch } from "../live/leases";
import { decodeCursor, encodeCursor } from "./page-cursor";
import { narrowedSides, parsePathsArg } from "./paths-arg";
import { type OpenedSides, type SideEntry, openSides, sideName } from "./tree-side";
import { unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";

export type ChangeStatus = "added" | "modified" | "deleted" | "mode_changed";

export interface Change {
  path: string;
  status: ChangeStatus;
  /** Present when the mode differs (mode_changed, or modified with a mode change too). */
  old_mode?: FileMode;
  new_mode?: FileMode;
}

/** A change with both sides' entries, for callers that go on to read the content. */
export interface ChangePair {
  change: Change;
  from: SideEntry | null;
  to: SideEntry | null;
}

export interface ChangeCounts {
  added: number;
  modified: number;
  deleted: number;
  mode_changed: number;
  total: number;
}

export interface ChangesArgs {
  from: string;
  to: string;
  paths?: string[];
  lease_id?: string;
  limit?: number;
  cursor?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** The fields that put an answer comparing two sides in one of spec section 5's branches. */
export type SidesBranch = { cache_hint: "immutable" } | { cache_hint: "until_dirty"; lease_id: string; fingerprint: Fingerprint };

export type ChangesResult = SidesBranch &
  UnreadableFields & {
  from: string;
  to: string;
  changes: Change[];
  counts: ChangeCounts;
  truncated: boolean;
  cursor?: string;
};

export const CHANGES_DEFAULT_LIMIT = 1000;
export const CHANGES_MAX_LIMIT = 10_000;
/** Changes stop being added past this much JSON, so an answer stays small for a model. */
export const CHANGES_BYTE_BUDGET = 60_000;

/**
 * Merge-walks two path-sorted entry lists (UTF-8 byte order) in one pass:
 * O(n + m), no file reads. Content equality is blob equality. There is no
 * rename detection: a moved file is a deletion plus an addition.
 */
export function diffEntries(from: SideEntry[], to: SideEntry[]): ChangePair[] {
  const out: ChangePair[] = [];
  let i = 0;
  let j = 0;
  while (i < from.length || j < to.length) {
    const a = from[i];
    const b = to[j];
    const cmp = a === undefined ? 1 : b === undefined ? -1 : a.path === b.path ? 0 : compareUtf8(a.path, b.path);
    if (cmp < 0) {
      out.push({ change: { path: (a as SideEntry).path, status: "deleted" }, from: a as SideEntry, to: null });
      i++;
    } else if (cmp > 0) {
      out.push({ change: { path: (b as SideEntry).path, status: "added" }, from: null, to: b as SideEntry });
      j++;
    } else {
      const x = a as SideEntry;
      const y = b as SideEntry;
      if (x.blob !== y.blob || x.mode !== y.mode) {
        const change: Change = { path: x.path, status: x.blob !== y.blob ? "modified" : "mode_changed" };
        if (x.mode !== y.mode) {
          change.old_mode = x.mode;
          change.new_mode = y.mode;
        }
        out.push({ change, from: x, to: y });
      }
      i++;
      j++;
    }
  }
  return out;
}

export function countChanges(pairs: ChangePair[]): ChangeCounts {
  const counts: ChangeCounts = { added: 0, modified: 0, deleted: 0, mode_changed: 0, total: pairs.length };
  for (const p of pairs) counts[p.change.status]++;
  return counts;
}

export function sidesBranch(sides: OpenedSides): SidesBranch {
  return sides.lease ? { cache_hint: "until_dirty", lease_id: sides.lease.id, fingerprint: sides.lease.fingerprint } : { cache_hint: "immutable" };
}

/** What a comparison's cursor is tied to: the resolved sides (a work tree side by its fingerprint). */
export function sidesState(sides: OpenedSides): unknown {
  const key = (s: OpenedSides["from"]) => (s.kind === "worktree" ? { worktree: s.fingerprint } : s.kind === "snapshot" ? s.id : { commit: s.commit });
  return [key(sides.from), key(sides.to)];
}

/** Records that the caller saw these paths of the work tree (spec 2.3): the live blob, or null when absent there. */
export function touchPairs(sides: OpenedSides, pairs: ChangePair[]): void {
  if (!sides.lease) return;
  for (const p of pairs) {
    const live = sides.to.kind === "worktree" ? p.to : p.from;
    touch(sides.lease, p.change.path, live?.blob ?? null);
  }
}

/**
 * snapshot_changes: which files differ between two sides (snapshots or the
 * work tree), sorted by path, with counts of every status; paged by `limit`,
 * a byte budget and a cursor.
 */
export async function snapshotChanges(ws: Workspace, args: ChangesArgs): Promise<ChangesResult> {
  const paths = parsePathsArg(args.paths);
  const limit = args.limit ?? CHANGES_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > CHANGES_MAX_LIMIT) {
    throw invalidArgument(`limit must be an integer from 1 to ${CHANGES_MAX_LIMIT}`, { arg: "limit" });
  }
  const opened = await openSides(ws, args, paths.scope);
  const sides = narrowedSides(opened, paths.filter);
  const keys = { tool: "snapshot_changes", query: { from: sideName(sides.from), to: sideName(sides.to), paths: paths.key }, state: sidesState(sides) };
  const after = args.cursor === undefined ? null : decodeCursor(args.cursor, keys, (p): p is string => typeof p === "string");
  const pairs = diffEntries(sides.from.entries, sides.to.entries);
  let start = 0;
  if (after !== null) while (start < pairs.length && compareUtf8((pairs[start] as ChangePair).change.path, after) <= 0) start++;
  const page: ChangePair[] = [];
  let used = 0;
  for (let k = start; k < pairs.length && page.length < limit; k++) {
    const p = pairs[k] as ChangePair;
    used += JSON.stringify(p.change).length + 1;
    if (used > CHANGES_BYTE_BUDGET && page.length > 0) break;
    page.push(p);
  }
  touchPairs(sides, page);
  const truncated = start + page.length < pairs.length;
  const result: ChangesResult = {
    ...sidesBranch(sides),
    from: sideName(sides.from),
    to: sideName(sides.to),
    changes: page.map((p) => p.change),
    counts: countChanges(pairs),
    truncated,
    ...unreadableFields(sides.unreadable),
  };
  if (truncated) result.cursor = encodeCursor(keys, (page[page.length - 1] as ChangePair).change.path);
  return result;
}
