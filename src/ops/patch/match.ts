/**
 * Where a hunk applies (spec 3.2): byte for byte, whole old side (context and
 * removed lines), no fuzz. First at the stated line; otherwise at the nearest
 * exact match, the earlier one on a tie, never before the end of the previous
 * hunk of the same file.
 *
 * Search cost: the stated line and a small window around it are checked
 * directly. Beyond that the file's line index (built once per file, on first
 * need) gives the positions of the hunk's rarest old line, and only those
 * positions are verified, nearest first. A hunk whose old side contains a line
 * the file does not have fails at once, so many bad hunks never scan the file
 * more than once.
 */
import { displayLine, FileLines } from "./lines";
import type { HunkLine, HunkReject, PatchHunk } from "./types";

/** The hunk's old side (its lines, unjoined) and its new side as one byte string. */
export interface HunkSides {
  old: HunkLine[];
  newText: string;
  /** The new side ends without a newline, so the hunk must end at the end of the file. */
  newUnterminated: boolean;
}

export function hunkSides(hunk: PatchHunk): HunkSides | string {
  const old: HunkLine[] = [];
  const added: string[] = [];
  let oldOpen = false;
  let newOpen = false;
  for (const l of hunk.lines) {
    if (l.kind !== " " && l.kind !== "-" && l.kind !== "+") return `line kind ${JSON.stringify(l.kind)} is not " ", "-" or "+"`;
    if (l.kind !== "+") {
      if (oldOpen) return "a line without newline is not the last of the old side";
      old.push(l);
      oldOpen = !l.eol;
    }
    if (l.kind !== "-") {
      if (newOpen) return "a line without newline is not the last of the new side";
      added.push(l.eol ? l.text + "\n" : l.text);
      newOpen = !l.eol;
    }
  }
  return { old, newText: added.join(""), newUnterminated: newOpen };
}

/** A hunk line as it appears in the file, terminator included. */
function full(l: HunkLine): string {
  return l.eol ? l.text + "\n" : l.text;
}

export type Placement = { ok: true; start: number; end: number; offset: number } | { ok: false; reject: HunkReject };

const WINDOW = 64;
const MAX_EXCERPT = 20;
const MAX_VOTING_OCCURRENCES = 1000;

/** The 0-based line where the hunk says its old side starts (for an insertion: the line it goes before). */
export function statedStart(hunk: PatchHunk, oldCount: number): number {
  return oldCount === 0 ? hunk.oldStart : Math.max(0, hunk.oldStart - 1);
}

export class HunkMatcher {
  constructor(
    readonly file: FileLines,
    private readonly hunk: PatchHunk,
    private readonly sides: HunkSides,
  ) {}

  private fits(start: number): boolean {
    const { old, newUnterminated } = this.sides;
    if (start < 0 || start + old.length > this.file.count) return false;
    if (newUnterminated && start + old.length !== this.file.count) return false;
    for (let k = 0; k < old.length; k++) {
      const l = old[k]!;
      if (!this.file.equalsText(start + k, l.text, l.eol)) return false;
    }
    return true;
  }

  /** Places the hunk at or after `minStart`. `sealed`: an earlier hunk already ended the file without newline. */
  place(minStart: number, sealed: boolean): Placement {
    const { sides } = this;
    const m = sides.old.length;
    const p0 = statedStart(this.hunk, m);
    if (sealed && (m > 0 || sides.newText !== "")) {
      return this.mismatch(p0, "an earlier hunk already removed the newline at the end of the file, so nothing can follow it");
    }
    if (m === 0) return this.placeInsertion(p0, minStart);
    if (p0 >= minStart && this.fits(p0)) return { ok: true, start: p0, end: p0 + m, offset: 0 };
    const found = this.nearest(p0, minStart);
    if (found >= 0) return { ok: true, start: found, end: found + m, offset: found - p0 };
    return this.mismatch(p0, this.explain(p0, minStart));
  }

  private placeInsertion(p0: number, minStart: number): Placement {
    const { file, sides } = this;
    if (p0 > file.count) return this.mismatch(p0, `it inserts after line ${p0}, but the file has ${file.count} lines`);
    if (p0 < minStart) return this.mismatch(p0, `it inserts after line ${p0}, inside or before the previous hunk (which ends at line ${minStart})`);
    if (sides.newUnterminated && p0 !== file.count) {
      return this.mismatch(p0, "its last added line has no newline, but it does not insert at the end of the file");
    }
    if (p0 === file.count && file.lastLineUnterminated && sides.newText !== "") {
      return this.mismatch(p0, `line ${file.count} has no newline at end of file; a hunk adding lines after it must remove and re-add that line`);
    }
    return { ok: true, start: p0, end: p0, offset: 0 };
  }

  /** The nearest exact match at or after minStart, the earlier one on a tie; -1 when there is none. */
  nearest(p0: number, minStart: number): number {
    for (let d = 1; d <= WINDOW; d++) {
      if (p0 - d >= minStart && this.fits(p0 - d)) return p0 - d;
      if (p0 + d >= minStart && this.fits(p0 + d)) return p0 + d;
    }
    const { old } = this.sides;
    let anchor = 0;
    let positions = this.file.positions(full(old[0]!));
    for (let k = 1; k < old.length && positions.length > 0; k++) {
      const p = this.file.positions(full(old[k]!));
      if (p.length < positions.length) (anchor = k), (positions = p);
    }
    const target = p0 + anchor;
    let right = lowerBound(positions, target);
    let left = right - 1;
    while (left >= 0 || right < positions.length) {
      const dl = left >= 0 ? target - positions[left]! : Infinity;
      const dr = right < positions.length ? positions[right]! - target : Infinity;
      let start: number;
      if (dl <= dr) {
        start = positions[left--]! - anchor;
        if (start < minStart) {
          left = -1;
          continue;
        }
      } else start = positions[right++]! - anchor;
      if (start >= minStart && this.fits(start)) return start;
    }
    return -1;
  }

  private mismatch(p0: number, why: string): Placement {
    const m = this.sides.old.length;
    const shown = Math.min(Math.max(m, 1), MAX_EXCERPT);
    const reject: HunkReject = {
      index: this.hunk.index,
      reason: "context_mismatch",
      message: `hunk ${this.hunk.index} (${this.hunk.header}) does not apply: ${why}`,
    };
    if (this.file.count > 0) {
      reject.expected_at = this.file.excerpt(Math.min(p0, Math.max(0, this.file.count - shown)), shown);
      const closest = m > 0 ? this.closest(p0) : undefined;
      if (closest) {
        reject.closest = this.file.excerpt(closest.start, shown);
        reject.message += `; closest partial match: ${closest.votes} of ${m} old line${m === 1 ? "" : "s"} at line ${reject.closest.line}`;
      }
    }
    return { ok: false, reject };
  }

  /** Why the old side is not at the stated line, and whether it is anywhere else. */
  private explain(p0: number, minStart: number): string {
    const { file, sides } = this;
    const m = sides.old.length;
    const subject = m === 1 ? "its old line (context or removed)" : `its ${m} old lines (context and removed)`;
    if (p0 < minStart && this.fits(p0)) {
      return `${subject} ${m === 1 ? "is" : "are"} at line ${p0 + 1}, but that overlaps or precedes the previous hunk (which ends at line ${minStart}), and ${m === 1 ? "it is" : "they are"} nowhere after it`;
    }
    let why = `${subject} ${m === 1 ? "is" : "are"} not at line ${p0 + 1}`;
    for (let k = 0; k < m; k++) {
      const at = p0 + k;
      if (at >= file.count) {
        why += ` (the file has only ${file.count} lines)`;
        break;
      }
      const expected = full(sides.old[k]!);
      if (!file.equals(at, expected)) {
        why += ` (line ${at + 1} is ${show(file.line(at))}, the hunk expects ${show(expected)})`;
        break;
      }
    }
    if (minStart > 0) {
      const earlier = this.nearest(p0, 0);
      if (earlier >= 0) return `${why}; ${m === 1 ? "it matches" : "they match"} only at line ${earlier + 1}, which overlaps or precedes the previous hunk (which ends at line ${minStart})`;
    }
    if (sides.newUnterminated && this.matchesIgnoringEnd(p0)) {
      return `${why}; its last added line has no newline, so it must end at the end of the file`;
    }
    return `${why}, and nowhere else in the file`;
  }

  private matchesIgnoringEnd(p0: number): boolean {
    const relaxed = new HunkMatcher(this.file, this.hunk, { ...this.sides, newUnterminated: false });
    return relaxed.fits(p0) || relaxed.nearest(p0, 0) >= 0;
  }

  /** The alignment where the most old-side lines match the file line for line. */
  private closest(p0: number): { start: number; votes: number } | undefined {
    const { old } = this.sides;
    const votes = new Map<number, number>();
    for (let k = 0; k < old.length; k++) {
      const positions = this.file.positions(full(old[k]!));
      if (positions.length > MAX_VOTING_OCCURRENCES) continue;
      for (const p of positions) votes.set(p - k, (votes.get(p - k) ?? 0) + 1);
    }
    let best: { start: number; votes: number } | undefined;
    for (const [start, n] of votes) {
      if (
        !best ||
        n > best.votes ||
        (n === best.votes && Math.abs(start - p0) < Math.abs(best.start - p0)) ||
        (n === best.votes && Math.abs(start - p0) === Math.abs(best.start - p0) && start < best.start)
      ) {
        best = { start, votes: n };
      }
    }
    if (!best) return undefined;
    return { start: Math.max(0, best.start), votes: best.votes };
  }
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A file or hunk line for a message: decoded, with a missing final newline said in words. */
function show(line: string): string {
  const terminated = line.endsWith("\n");
  return JSON.stringify(displayLine(line)) + (terminated ? "" : " (no newline at end of file)");
}
