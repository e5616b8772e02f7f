import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument } from "../../core/errors";
import { objectIdHexLength } from "../../repo/common-dir";
import { unifiedDiff, type DiffSide } from "../diff/unified";
import { renderUnits, splitFileDiff, unitCosts } from "./diff-split";
import { decodeCursor, encodeCursor } from "./page-cursor";
import {
  type ChangeCounts,
  type ChangePair,
  type ChangeStatus,
  type SidesBranch,
  countChanges,
  diffEntries,
  sidesBranch,
  sidesState,
  touchPairs,
} from "./changes";
import { narrowedSides, parsePathsArg } from "./paths-arg";
import { type SideEntry, openSides, sideName } from "./tree-side";
import { unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";

export interface DiffArgs {
  from: string;
  to: string;
  paths?: string[];
  context_lines?: number;
  /** Binary files as git's binary patches (`git diff --binary`), which apply, instead of `Binary files ... differ`. */
  binary?: boolean;
  lease_id?: string;
  cursor?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Page size in JSON-escaped characters of diff text; the CLI passes Infinity for one complete diff. */
  maxChars?: number;
  /** Files larger than this (either side) are listed in `omitted` instead of diffed. */
  maxFileBytes?: number;
}

export interface DiffFile {
  path: string;
  status: ChangeStatus;
  /** Set when only part of this file's diff is in this answer (the cursor continues it). */
  partial?: true;
}

export interface OmittedFile {
  path: string;
  status: ChangeStatus;
  reason: "too_large";
  bytes: number;
}

export type DiffResult = SidesBranch &
  UnreadableFields & {
  from: string;
  to: string;
  /** git-style unified diff text of `files`, LF line ends; `git apply` reproduces the target. */
  diff: string;
  files: DiffFile[];
  omitted: OmittedFile[];
  /** Over the whole comparison, not just this page. */
  counts: ChangeCounts;
  truncated: boolean;
  cursor?: string;
};

export const DIFF_CONTEXT_DEFAULT = 3;
export const DIFF_CONTEXT_MAX = 1000;
/** Diff text per answer, measured as escaped JSON, well under the response cap. */
export const DIFF_PAGE_CHARS = 60_000;
/** One unit (a hunk) larger than a page may still go out alone up to this. */
const DIFF_UNIT_HARD_MAX = 80_000;
export const DIFF_FILE_MAX_BYTES = 16 * 1024 * 1024;

interface Position {
  /** The file to resume at. */
  p: string;
  /** Units (hunks) of that file already returned. */
  u: number;
}

const isPosition = (v: unknown): v is Position =>
  typeof v === "object" && v !== null && typeof (v as Position).p === "string" && Number.isSafeInteger((v as Position).u) && (v as Position).u >= 0;

/**
 * snapshot_diff: a unified diff between two sides (snapshots or the work
 * tree), file by file in path order, computed from the stored blobs. Paged by
 * size: a cursor resumes at the next file, or inside a file at its next hunk
 * (with line numbers that apply on top of the previous pages).
 */
export async function snapshotDiff(ws: Workspace, args: DiffArgs): Promise<DiffResult> {
  const paths = parsePathsArg(args.paths);
  const context = args.context_lines ?? DIFF_CONTEXT_DEFAULT;
  if (!Number.isInteger(context) || context < 0 || context > DIFF_CONTEXT_MAX) {
    throw invalidArgument(`context_lines must be an integer from 0 to ${DIFF_CONTEXT_MAX}`, { arg: "context_lines" });
  }
  const opened = await openSides(ws, args, paths.scope);
  const sides = narrowedSides(opened, paths.filter);
  const keys = { tool: "snapshot_diff", query: { from: sideName(sides.from), to: sideName(sides.to), paths: paths.key, context, ...(args.binary ? { binary: true } : {}) }, state: sidesState(sides) };
  const pos = args.cursor === undefined ? null : decodeCursor(args.cursor, keys, isPosition);
  const pairs = diffEntries(sides.from.entries, sides.to.entries);
  let i = 0;
  if (pos) while (i < pairs.length && compareUtf8((pairs[i] as ChangePair).change.path, pos.p) < 0) i++;
  let skipUnits = pos && i < pairs.length && (pairs[i] as ChangePair).change.path === pos.p ? pos.u : 0;

  const oidHexLength = args.binary && ws.repo.gitDir ? objectIdHexLength(ws.repo.gitDir) : 40;
  const budget = args.maxChars ?? DIFF_PAGE_CHARS;
  const fileMax = args.maxFileBytes ?? DIFF_FILE_MAX_BYTES;
  const parts: string[] = [];
  const files: DiffFile[] = [];
  const omitted: OmittedFile[] = [];
  const shown: ChangePair[] = [];
  let used = 0;
  let next: Position | null = null;
  for (; i < pairs.length; i++, skipUnits = 0) {
    if (args.signal?.aborted) throw args.signal.reason ?? new Error("aborted");
    const pair = pairs[i] as ChangePair;
    const { path, status } = pair.change;
    const big = await largestSide(ws, pair);
    const pageEmpty = files.length + omitted.length === 0;
    if (big > fileMax) {
      const entry: OmittedFile = { path, status, reason: "too_large", bytes: big };
      if (!pageEmpty && used + listed(entry) > budget) {
        next = { p: path, u: 0 };
        break;
      }
      omitted.push(entry);
      used += listed(entry);
      shown.push(pair);
      continue;
    }
    const text = unifiedDiff(await diffSide(ws, pair.from), await diffSide(ws, pair.to), { context, binary: args.binary === true, oidHexLength });
    if (skipUnits === 0) {
      const cost = jsonChars(text) + listed({ path, status });
      if (used + cost <= budget) {
        parts.push(text);
        files.push({ path, status });
        shown.push(pair);
        used += cost;
        continue;
      }
      if (!pageEmpty) {
        next = { p: path, u: 0 };
        break;
      }
    }
    // This file alone overflows a page, or the page resumes inside it: page it by hunks.
    const split = splitFileDiff(text);
    if (skipUnits >= split.units) continue; // a cursor at the end of this file
    const costs = unitCosts(split, jsonChars);
    let u = skipUnits;
    let taken = listed({ path, status, partial: true });
    while (u < split.units && used + taken + (costs[u] as number) <= budget) taken += costs[u++] as number;
    if (u === skipUnits && (costs[u] as number) <= DIFF_UNIT_HARD_MAX) taken += costs[u++] as number;
    shown.push(pair);
    if (u === skipUnits) {
      // One hunk too large for any answer: the file is listed, not shown.
      const entry: OmittedFile = { path, status, reason: "too_large", bytes: costs[u] as number };
      omitted.push(entry);
      used += listed(entry);
      continue;
    }
    const piece = renderUnits(split, skipUnits, u);
    parts.push(piece);
    const partial = skipUnits > 0 || u < split.units;
    const entry: DiffFile = partial ? { path, status, partial: true } : { path, status };
    files.push(entry);
    used += jsonChars(piece) + listed(entry);
    if (u < split.units) {
      next = { p: path, u };
      break;
    }
  }
  touchPairs(sides, shown);
  const result: DiffResult = {
    ...sidesBranch(sides),
    from: sideName(sides.from),
    to: sideName(sides.to),
    diff: parts.join(""),
    files,
    omitted,
    counts: countChanges(pairs),
    truncated: next !== null,
    ...unreadableFields(sides.unreadable),
  };
  if (next) result.cursor = encodeCursor(keys, next);
  return result;
}

async function largestSide(ws: Workspace, pair: ChangePair): Promise<number> {
  const a = pair.from ? ((await ws.blobs.size(pair.from.blob)) ?? 0) : 0;
  const b = pair.to ? ((await ws.blobs.size(pair.to.blob)) ?? 0) : 0;
  return Math.max(a, b);
}

async function diffSide(ws: Workspace, e: SideEntry | null): Promise<DiffSide | null> {
  if (!e) return null;
  return { path: e.path, mode: e.mode, bytes: await ws.blobs.read(e.blob) };
}

/** What a files/omitted entry adds to the answer. */
function listed(entry: DiffFile | OmittedFile): number {
  return JSON.stringify(entry).length + 1;
}

function jsonChars(text: string): number {
  return JSON.stringify(text).length;
}
