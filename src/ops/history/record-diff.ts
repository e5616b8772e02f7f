/**
 * The diff the history stores for one change (spec 002 section 2.2 step 6),
 * and whether that diff alone replays it.
 *
 * Small files get the ordinary unified diff of the whole file. A large text
 * file with scattered edits (the 50 MB bundle with 1,000 hunks) would cost a
 * line diff of every one of its million lines, although almost all of them
 * are equal: there the equal stretches are found by comparing bytes (memcmp
 * speed), each changed stretch is diffed on its own, and the unified diffs of
 * those islands, with their context, are joined with their hunk headers moved
 * to the islands' places in the file. The result is the same kind of diff
 * (3 lines of context, git's hunk grouping), usually byte for byte the same.
 *
 * A patch's edit brings its line changes along: the diff is rendered from
 * those, straight from the files' bytes (no diff of the files at all, nothing
 * decoded: diff/placed-diff.ts), once they are checked against both files;
 * changes that do not fit are ignored and the files diffed as above.
 *
 * A diff of the files is verified: parsed back and applied to the old bytes,
 * it must give exactly the new ones (and the mode), or the recorder stores the
 * new bytes beside it (binary content, type changes, or a defect here).
 */
import { isUtf8 } from "node:buffer";
import { isBinary } from "../../core/binary";
import type { LineChange } from "../../core/line-change";
import { lineChanges, splitLines } from "../diff/line-diff";
import { afterLines, beforeLines, countLines } from "../diff/line-offsets";
import { placeChanges, renderPlacedDiff } from "../diff/placed-diff";
import { unifiedDiff, type DiffSide } from "../diff/unified";
import type { PathState } from "../write/edit-recorder";
import { applyHunks } from "../patch/apply";
import { parsePatch } from "../patch/parse";

export interface RecordedDiff {
  /** The unified diff; "" when nothing changed. */
  diff: string;
  /** Whether applying `diff` to the old state gives exactly the new one (bytes and mode). */
  replays: boolean;
}

/** A RecordedDiff as the UTF-8 bytes the history stores (empty when nothing changed). */
export interface RecordedDiffBytes {
  bytes: Uint8Array;
  replays: boolean;
}

/** Files below this size are diffed whole. */
export const ISLAND_MIN_BYTES = 1 << 20;
const CONTEXT = 3;
/** Equal lines that must end a window before it counts as back in step. */
const SYNC_LINES = 2 * CONTEXT + 2;
const FIRST_WINDOW_LINES = 64;
const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `lines`, when the caller knows them (a patch's changes as placed): the diff
 * is rendered from them, with the same context and hunk grouping, when they
 * fit both files (it then replays); otherwise the files are diffed.
 */
export function recordDiff(beforePath: string, before: PathState, afterPath: string, after: PathState, lines?: LineChange[]): RecordedDiff {
  const placed = placedDiff(beforePath, before, afterPath, after, lines);
  return placed ? { diff: decoder.decode(placed), replays: true } : diffOfFiles(beforePath, before, afterPath, after);
}

/** recordDiff as bytes, for the history's files: a patch's diff is rendered as bytes, never as a string. */
export function recordDiffBytes(beforePath: string, before: PathState, afterPath: string, after: PathState, lines?: LineChange[]): RecordedDiffBytes {
  const placed = placedDiff(beforePath, before, afterPath, after, lines);
  if (placed) return { bytes: placed, replays: true };
  const { diff, replays } = diffOfFiles(beforePath, before, afterPath, after);
  return { bytes: diff === "" ? EMPTY : encoder.encode(diff), replays };
}

function placedDiff(beforePath: string, before: PathState, afterPath: string, after: PathState, lines?: LineChange[]): Uint8Array | null {
  return before && after && lines ? renderPlacedDiff({ path: beforePath, ...before }, { path: afterPath, ...after }, lines, CONTEXT) : null;
}

/** The diff of the two states, verified (diffReplays). */
function diffOfFiles(beforePath: string, before: PathState, afterPath: string, after: PathState): RecordedDiff {
  const from: DiffSide | null = before ? { path: beforePath, ...before } : null;
  const to: DiffSide | null = after ? { path: afterPath, ...after } : null;
  const diff = (from && to ? islandDiff(from, to) : null) ?? unifiedDiff(from, to);
  return { diff, replays: after === null || diffReplays(diff, before, after) };
}

/** Whether `changes` (sorted, in line numbers of both files) turn `a` into `b` (placed-diff.ts, placeChanges). */
export function changesFit(a: Buffer, b: Buffer, changes: LineChange[]): boolean {
  return placeChanges(a, b, changes) !== null;
}

/**
 * Whether the diff alone reproduces the new bytes and mode: one text section
 * whose hunks, applied to the old bytes, give exactly the new ones.
 */
export function diffReplays(diff: string, before: PathState, after: NonNullable<PathState>): boolean {
  if (diff === "") return before !== null && before.mode === after.mode;
  const parsed = parsePatch(diff);
  const file = parsed.files[0];
  if (parsed.files.length !== 1 || parsed.rejects.length > 0 || !file || file.binary) return false;
  if ((file.newMode ?? before?.mode ?? "100644") !== after.mode) return false;
  const applied = applyHunks(before?.bytes ?? EMPTY, file.hunks);
  return applied.ok && view(applied.bytes).equals(view(after.bytes));
}

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// ---------------------------------------------------------------------------
// Islands

/** Old lines [aLine, aLine + aLines) at bytes [aStart, aEnd) became new bytes [bStart, bEnd) (bLines lines). */
interface Region {
  aLine: number;
  aLines: number;
  bLine: number;
  bLines: number;
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

/** The diff joined from islands, or null when the whole-file diff is the right one (small, binary, NUL bytes). */
export function islandDiff(from: DiffSide, to: DiffSide, minBytes = ISLAND_MIN_BYTES): string | null {
  if (Math.max(from.bytes.length, to.bytes.length) < minBytes) return null;
  if (from.mode === "120000" || to.mode === "120000" || from.bytes.length === 0 || to.bytes.length === 0) return null;
  const a = view(from.bytes);
  const b = view(to.bytes);
  // A NUL anywhere could make one island look binary while the whole file is text (git sniffs 8000 bytes only).
  if (isBinary(a) || isBinary(b) || a.indexOf(0) >= 0 || b.indexOf(0) >= 0 || !isUtf8(a) || !isUtf8(b)) return null;
  const regions = changedRegions(a, b);
  if (regions === null || regions.length === 0) return null;
  let header: string | null = null;
  let out = "";
  for (const island of groupIslands(regions)) {
    const text = islandText(a, b, from, to, island);
    if (text === null) return null;
    header ??= text.header;
    out += text.hunks;
  }
  return header === null ? null : header + out;
}

/** Number of equal leading bytes of a[i..] and b[j..]. */
function commonLength(a: Buffer, i: number, b: Buffer, j: number): number {
  const max = Math.min(a.length - i, b.length - j);
  let done = 0;
  let chunk = 64 * 1024;
  while (done < max) {
    const n = Math.min(chunk, max - done);
    if (a.compare(b, j + done, j + done + n, i + done, i + done + n) === 0) {
      done += n;
      chunk = Math.min(chunk * 2, 1 << 22);
      continue;
    }
    // The first difference is inside [done, done + n): halve until one byte is left.
    let lo = done;
    let hi = done + n;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (a.compare(b, j + lo, j + mid, i + lo, i + mid) === 0) lo = mid;
      else hi = mid;
    }
    return lo;
  }
  return max;
}

/**
 * The changed stretches, in order: equal bytes are skipped with memcmp; at a
 * difference, windows of both sides (growing until one holds a change
 * followed by SYNC_LINES equal lines, or they reach the end) are line-diffed
 * to find where the two files are back in step.
 */
function changedRegions(a: Buffer, b: Buffer): Region[] | null {
  const out: Region[] = [];
  let i = 0;
  let j = 0;
  let line = 0;
  let delta = 0;
  for (;;) {
    const same = commonLength(a, i, b, j);
    if (i + same === a.length && j + same === b.length) return out;
    // Back to the start of the line holding the first difference (never before i: i and j start lines).
    const start = same === 0 ? i : Math.max(i, a.lastIndexOf(10, i + same - 1) + 1);
    line += countLines(a, i, start);
    j += start - i;
    i = start;
    for (let window = FIRST_WINDOW_LINES; ; window *= 4) {
      const wa = afterLines(a, i, window);
      const wb = afterLines(b, j, window);
      const atEnd = wa === a.length && wb === b.length;
      const linesA = splitLines(a.toString("latin1", i, wa));
      const linesB = splitLines(b.toString("latin1", j, wb));
      const changes = lineChanges(linesA, linesB);
      if (changes.length === 0) return null; // cannot happen (the first lines differ); the whole-file diff takes over
      // Back in step after the first change followed by SYNC_LINES equal lines. (The windows cut both files at the
      // same line count, so when lines were added or removed their ends differ: that last change is the cut's.)
      let k = 0;
      while (k < changes.length && (k + 1 < changes.length ? changes[k + 1]!.oldStart : linesA.length) - changes[k]!.oldEnd < SYNC_LINES) k++;
      if (k === changes.length && !atEnd) continue;
      const last = k < changes.length ? changes[k]! : null;
      const aLines = last ? last.oldEnd : linesA.length;
      const bLines = last ? last.newEnd : linesB.length;
      const aEnd = last ? i + byteLength(linesA, aLines) : a.length;
      const bEnd = last ? j + byteLength(linesB, bLines) : b.length;
      out.push({ aLine: line, aLines, bLine: line + delta, bLines, aStart: i, aEnd, bStart: j, bEnd });
      line += aLines;
      delta += bLines - aLines;
      i = aEnd;
      j = bEnd;
      break;
    }
    if (i >= a.length && j >= b.length) return out;
  }
}

function byteLength(lines: string[], count: number): number {
  let n = 0;
  for (let k = 0; k < count; k++) n += lines[k]!.length;
  return n;
}

/** Regions whose contexts touch (at most 2 * CONTEXT equal lines apart) share a hunk, so they share an island. */
function groupIslands(regions: Region[]): Region[][] {
  const out: Region[][] = [];
  for (const r of regions) {
    const cur = out[out.length - 1];
    const prev = cur?.[cur.length - 1];
    if (cur && prev && r.aLine - (prev.aLine + prev.aLines) <= 2 * CONTEXT) cur.push(r);
    else out.push([r]);
  }
  return out;
}

/** One island's unified diff: its header, and its hunks with line numbers moved to the island's place. */
function islandText(a: Buffer, b: Buffer, from: DiffSide, to: DiffSide, island: Region[]): { header: string; hunks: string } | null {
  const first = island[0]!;
  const last = island[island.length - 1]!;
  const aFrom = beforeLines(a, first.aStart, CONTEXT);
  const lead = countLines(a, aFrom, first.aStart);
  const bFrom = first.bStart - (first.aStart - aFrom);
  const aTo = afterLines(a, last.aEnd, CONTEXT);
  const bTo = last.bEnd + (aTo - last.aEnd);
  const piece = unifiedDiff({ ...from, bytes: a.subarray(aFrom, aTo) }, { ...to, bytes: b.subarray(bFrom, bTo) });
  const at = piece.indexOf("\n@@ -");
  if (at < 0) return null;
  const aShift = first.aLine - lead;
  const bShift = first.bLine - lead;
  // Hunk headers are the lines starting "@@ -" (every body line starts with " ", "-", "+" or "\\").
  let hunks = "";
  let pos = at + 1;
  while (pos < piece.length) {
    const next = piece.indexOf("\n@@ -", pos);
    const end = next < 0 ? piece.length : next + 1;
    const m = /^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@/.exec(piece.slice(pos, piece.indexOf("\n", pos)));
    if (!m) return null;
    hunks += `@@ -${Number(m[1]) + aShift}${m[2]} +${Number(m[3]) + bShift}${m[4]} @@${piece.slice(pos + m[0].length, end)}`;
    pos = end;
  }
  return { header: piece.slice(0, at + 1), hunks };
}
