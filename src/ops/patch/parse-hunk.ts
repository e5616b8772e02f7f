/**
 * Reads one hunk ("@@ -a,b +c,d @@" plus its body) from the patch's lines.
 *
 * The header counts decide where the body ends, the way git reads it, as long
 * as they agree with the body. When they do not (a count too small, with more
 * body lines right after, or too large, with the body ending early), the body
 * is taken to be the run of diff lines and the counts are recounted from it,
 * with a warning. A line that is not a diff line, followed again by diff
 * lines, is garbage inside the hunk: the hunk is malformed.
 */
import { byteStringToText } from "./byte-string";
import type { HunkLine } from "./types";

const show = (s: string) => JSON.stringify(byteStringToText(s));

/**
 * The patch's lines as byte strings, without their "\n": an array of them
 * (the patch split), or lines cut from the patch's bytes when asked for
 * (PatchBytes), so that the bodies the native reader read are never split.
 */
export interface PatchLines {
  readonly length: number;
  at(j: number): string | undefined;
}

export interface ParsedHunkBody {
  oldStart: number;
  newStart: number;
  statedOld: number;
  statedNew: number;
  oldLines: number;
  newLines: number;
  /** The body: lines [from, to) of the patch. */
  from: number;
  to: number;
  /** The body read; absent when it is read on demand (hunkLinesOf), the native reader having checked it. */
  lines?: HunkLine[];
}

export type HunkParse =
  | { ok: true; hunk: ParsedHunkBody; recounted: boolean; next: number }
  | { ok: false; message: string; next: number };

const HEADER = /^@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@/;

/** Strips the CR of a CRLF-terminated patch line, for header lines only (never for content). */
export function headerLine(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

export function isHunkHeader(line: string): boolean {
  return line.startsWith("@@ ") || line === "@@" || line === "@@\r";
}

/** `--- x` directly followed by `+++ y`: the start of a plain file patch. */
export function isHeaderPair(lines: PatchLines, j: number): boolean {
  return lines.at(j)!.startsWith("--- ") && j + 1 < lines.length && lines.at(j + 1)!.startsWith("+++ ");
}

export function isFileStart(lines: PatchLines, j: number): boolean {
  return lines.at(j)!.startsWith("diff --git ") || isHeaderPair(lines, j);
}

function isDiffLine(line: string): boolean {
  const c = line.charCodeAt(0);
  return c === 32 || c === 43 || c === 45 || c === 92;
}

/** git format-patch's trailer: "-- " followed by the version line. */
function isSignature(lines: PatchLines, j: number): boolean {
  return lines.at(j) === "-- " && (j + 1 >= lines.length || !isDiffLine(lines.at(j + 1)!));
}

/**
 * End (exclusive) of the run of diff lines starting at `i`. Empty lines inside
 * the run count (an editor stripped the space of an empty context line);
 * trailing empty lines do not.
 */
export function diffRunEnd(lines: PatchLines, i: number): number {
  let j = i;
  let end = i;
  while (j < lines.length) {
    const line = lines.at(j)!;
    if (line === "") {
      j++;
      continue;
    }
    if (!isDiffLine(line) || isFileStart(lines, j) || isSignature(lines, j)) break;
    j++;
    end = j;
  }
  return end;
}

const SPACE = 32;
const PLUS = 43;
const MINUS = 45;
const BACKSLASH = 92;

/** Reads the body the way git does, driven by the header counts; -1 when the counts do not fit. */
function countedBodyEnd(lines: PatchLines, i: number, oldCount: number, newCount: number): number {
  let j = i;
  let olds = 0;
  let news = 0;
  while (olds < oldCount || news < newCount) {
    if (j >= lines.length) return -1;
    const line = lines.at(j)!;
    const c = line.length === 0 ? SPACE : line.charCodeAt(0);
    if (c === SPACE) {
      if (olds >= oldCount || news >= newCount) return -1;
      olds++;
      news++;
    } else if (c === MINUS) {
      if (olds >= oldCount) return -1;
      olds++;
    } else if (c === PLUS) {
      if (news >= newCount) return -1;
      news++;
    } else if (c !== BACKSLASH) return -1;
    j++;
  }
  if (j < lines.length && lines.at(j)!.charCodeAt(0) === BACKSLASH) j++;
  return j;
}

/** After a body that ended early: a non-diff line followed again by diff lines is garbage in the hunk. */
function garbageInside(lines: PatchLines, end: number): number {
  let k = end;
  while (k < lines.length) {
    const line = lines.at(k)!;
    if (line.trim() === "" || isHunkHeader(line) || isFileStart(lines, k)) return -1;
    if (isDiffLine(line) && !isSignature(lines, k)) return end;
    k++;
  }
  return -1;
}

/** The lines of a body already known to be well formed (a hunk the native reader read). */
export function hunkLinesOf(lines: PatchLines, from: number, to: number): HunkLine[] {
  const read = toHunkLines(lines, from, to);
  if (typeof read === "string") throw new Error(`hunk body at patch line ${from}: ${read}`);
  return read;
}

/** The body, lines [from, to) of the patch, as hunk lines; a string saying why when it is malformed. */
function toHunkLines(lines: PatchLines, from: number, to: number): HunkLine[] | string {
  const out: HunkLine[] = [];
  // Whether the old / new side already had a line without newline: nothing may follow it on that side.
  let oldClosed = false;
  let newClosed = false;
  for (let j = from; j < to; j++) {
    const line = lines.at(j)!;
    const c = line === "" ? " " : line[0];
    if (c === "\\") {
      const prev = out[out.length - 1];
      if (!prev) return `${show(line)} does not follow a line`;
      prev.eol = false;
      if (prev.kind !== "+") oldClosed = true;
      if (prev.kind !== "-") newClosed = true;
      continue;
    }
    if ((c !== "+" && oldClosed) || (c !== "-" && newClosed)) {
      return `"\\ No newline at end of file" follows a line that is not the last of the ${c !== "+" && oldClosed ? "old" : "new"} side`;
    }
    out.push({ kind: c as HunkLine["kind"], text: line === "" ? "" : line.slice(1), eol: true });
  }
  return out;
}

/** Parses the hunk whose header is lines[i]. Patch line numbers in messages are 1-based. */
export function parseHunkAt(lines: PatchLines, i: number): HunkParse {
  const header = headerLine(lines.at(i)!);
  const m = HEADER.exec(header);
  if (!m) {
    return {
      ok: false,
      message: `patch line ${i + 1}: hunk header ${show(header)} is not of the form "@@ -start,count +start,count @@"`,
      next: Math.max(i + 1, diffRunEnd(lines, i + 1)),
    };
  }
  const oldStart = Number(m[1]);
  const statedOld = m[2] === undefined ? 1 : Number(m[2]);
  const newStart = Number(m[3]);
  const statedNew = m[4] === undefined ? 1 : Number(m[4]);

  let end = countedBodyEnd(lines, i + 1, statedOld, statedNew);
  let recounted = false;
  if (end < 0 || diffRunEnd(lines, end) > end) {
    end = diffRunEnd(lines, i + 1);
    recounted = true;
    const garbage = garbageInside(lines, end);
    if (garbage >= 0) {
      return {
        ok: false,
        message: `patch line ${garbage + 1}: ${show(lines.at(garbage)!)} inside the hunk is not a context (" "), removed ("-") or added ("+") line`,
        next: diffRunEnd(lines, garbage + 1),
      };
    }
  }
  const hunkLines = toHunkLines(lines, i + 1, end);
  if (typeof hunkLines === "string") return { ok: false, message: `hunk at patch line ${i + 1}: ${hunkLines}`, next: end };
  if (hunkLines.length === 0) return { ok: false, message: `hunk at patch line ${i + 1} has no lines`, next: end };
  let oldLines = 0;
  let newLines = 0;
  for (const l of hunkLines) {
    if (l.kind !== "+") oldLines++;
    if (l.kind !== "-") newLines++;
  }
  return {
    ok: true,
    hunk: { oldStart, newStart, statedOld, statedNew, oldLines, newLines, from: i + 1, to: end, lines: hunkLines },
    recounted: recounted && (oldLines !== statedOld || newLines !== statedNew),
    next: end,
  };
}
