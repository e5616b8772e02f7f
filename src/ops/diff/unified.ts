/**
 * Renders a git-style unified diff of one file (the renderer: it only builds
 * text). The output is accepted by `git apply` and by our own patch parser and
 * reproduces the target exactly.
 *
 * What the returned string encodes: text files are diffed only when both sides
 * are valid UTF-8 without NUL in the first 8000 bytes; their lines are decoded
 * as UTF-8 into an ordinary JS string, so encoding the result as UTF-8 gives
 * back the exact bytes of every line (CR of CRLF lines included; each line of
 * the diff itself ends with LF). Anything else is "binary" and gets only the
 * `Binary files ... differ` line, as git does without --binary, or with the
 * `binary` option its bytes as git's binary patch (patch/binary-patch.ts).
 *
 * Paths are written as git writes them, C-quoted when they contain a control
 * character, `"` or `\`; non-ASCII stays UTF-8 (core.quotePath=false), which
 * git apply reads unchanged. No `index` or `similarity index` lines are written:
 * git apply needs neither for text patches.
 */
import type { FileMode } from "../../core/file-mode";
import { isBinary } from "../../core/binary";
import { invalidArgument } from "../../core/errors";
import { byteStringToText, bytesToByteString, isValidUtf8 } from "../patch/byte-string";
import { binaryPatchText } from "../patch/binary-patch";
import { quoteCStyle } from "../patch/git-quote";
import { FileLines } from "../patch/lines";
import type { LineChange } from "../../core/line-change";
import { lineChanges, splitLines } from "./line-diff";

export interface DiffSide {
  path: string;
  bytes: Uint8Array;
  mode: FileMode;
}

export interface UnifiedDiffOptions {
  /** Lines of context around each change; default 3. */
  context?: number;
  /**
   * The line changes between the two sides, when the caller knows them (a
   * patch's, as placed): rendered as they are instead of diffing the sides.
   * They must be right; only the lines they and their context name are read.
   */
  changes?: LineChange[];
  /**
   * A file that is not text gets its bytes as git's binary patch (`git diff
   * --binary`: the full index line, `GIT binary patch`, literal hunks), which
   * `git apply` and worksnap's patching apply, instead of `Binary files ...
   * differ`.
   */
  binary?: boolean;
  /** The length of the object ids a binary patch's `index` line carries: 64 for a SHA-256 repository; default 40. */
  oidHexLength?: 40 | 64;
}

/** git's line after a last line without newline. */
export const NO_NEWLINE = "\\ No newline at end of file\n";

/** "" when the two sides are identical; `from` null = added, `to` null = deleted. */
export function unifiedDiff(from: DiffSide | null, to: DiffSide | null, opts: UnifiedDiffOptions = {}): string {
  const context = opts.context ?? 3;
  if (!Number.isInteger(context) || context < 0) throw invalidArgument(`context must be a non-negative integer, got ${context}`);
  if (!from && !to) return "";
  if (from && to && isSymlink(from.mode) !== isSymlink(to.mode)) {
    // A type change is a deletion and a creation, as git shows it.
    return unifiedDiff(from, null, opts) + unifiedDiff(null, to, opts);
  }
  const a = (from ?? to)!.path;
  const b = (to ?? from)!.path;
  const oldBytes = from?.bytes ?? EMPTY;
  const newBytes = to?.bytes ?? EMPTY;
  const sameContent = from !== null && to !== null && sameBytes(oldBytes, newBytes);
  if (sameContent && a === b && from!.mode === to!.mode) return "";

  let out = sectionHeader(from, to);
  if (sameContent || (oldBytes.length === 0 && newBytes.length === 0)) return out;

  const oldName = from ? quoteCStyle(`a/${a}`) : "/dev/null";
  const newName = to ? quoteCStyle(`b/${b}`) : "/dev/null";
  if (!isDiffableText(oldBytes) || !isDiffableText(newBytes)) {
    if (opts.binary) return out + binaryPatchText(from ? oldBytes : null, to ? newBytes : null, from && to && from.mode === to.mode ? from.mode : null, opts.oidHexLength);
    return `${out}Binary files ${oldName} and ${newName} differ\n`;
  }

  out += namesHeader(oldName, newName);
  if (opts.changes) {
    const hunks = renderHunks(FileLines.ofBytes(oldBytes), FileLines.ofBytes(newBytes), opts.changes, context);
    return out + byteStringToText(hunks);
  }
  const oldLines = splitLines(bytesToByteString(oldBytes));
  const newLines = splitLines(bytesToByteString(newBytes));
  return out + byteStringToText(renderHunks(arrayLines(oldLines), arrayLines(newLines), lineChanges(oldLines, newLines), context));
}

/** The `diff --git` line and what follows it before the names: new, deleted, mode change, rename. */
export function sectionHeader(from: DiffSide | null, to: DiffSide | null): string {
  const a = (from ?? to)!.path;
  const b = (to ?? from)!.path;
  let out = `diff --git ${quoteCStyle(`a/${a}`)} ${quoteCStyle(`b/${b}`)}\n`;
  if (!from) out += `new file mode ${to!.mode}\n`;
  else if (!to) out += `deleted file mode ${from.mode}\n`;
  else {
    if (from.mode !== to.mode) out += `old mode ${from.mode}\nnew mode ${to.mode}\n`;
    if (a !== b) out += `rename from ${quoteCStyle(a)}\nrename to ${quoteCStyle(b)}\n`;
  }
  return out;
}

/** The `---` and `+++` lines. */
export function namesHeader(oldName: string, newName: string): string {
  return `--- ${oldName}${tabIfSpace(oldName)}\n+++ ${newName}${tabIfSpace(newName)}\n`;
}

/** Lines by index: a file's split lines, or its line index (patch/lines.ts). */
interface Lines {
  readonly count: number;
  line(i: number): string;
}

function arrayLines(lines: string[]): Lines {
  return { count: lines.length, line: (i) => lines[i]! };
}

const EMPTY = new Uint8Array(0);

function isSymlink(mode: FileMode): boolean {
  return mode === "120000";
}

/** What this renderer diffs as text: no NUL in git's sniff window, valid UTF-8. */
export function isDiffableText(bytes: Uint8Array): boolean {
  return !isBinary(bytes) && isValidUtf8(bytes);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** git ends a ---/+++ name containing a space with a TAB, so the name's end is unambiguous. */
function tabIfSpace(name: string): string {
  return name.includes(" ") ? "\t" : "";
}

/**
 * Groups changes into hunks the way git does: two changes share a hunk when
 * the unchanged lines between them are at most 2 * context (their contexts
 * touch or overlap). Returns the hunks as a byte string.
 */
function renderHunks(a: Lines, b: Lines, changes: LineChange[], context: number): string {
  const parts: string[] = [];
  let i = 0;
  while (i < changes.length) {
    let j = i;
    while (j + 1 < changes.length && changes[j + 1]!.oldStart - changes[j]!.oldEnd <= 2 * context) j++;
    const first = changes[i]!;
    const last = changes[j]!;
    const oldLo = Math.max(0, first.oldStart - context);
    const oldHi = Math.min(a.count, last.oldEnd + context);
    const newLo = first.newStart - (first.oldStart - oldLo);
    const newHi = last.newEnd + (oldHi - last.oldEnd);
    parts.push(`@@ -${hunkRange(oldLo, oldHi - oldLo)} +${hunkRange(newLo, newHi - newLo)} @@\n`);
    emit(parts, " ", a, oldLo, first.oldStart);
    for (let k = i; k <= j; k++) {
      const c = changes[k]!;
      emit(parts, "-", a, c.oldStart, c.oldEnd);
      emit(parts, "+", b, c.newStart, c.newEnd);
      emit(parts, " ", a, c.oldEnd, k < j ? changes[k + 1]!.oldStart : oldHi);
    }
    i = j + 1;
  }
  return parts.join("");
}

/** git's hunk range: "start,count", "start" alone for one line, the line before for none. */
export function hunkRange(start0: number, count: number): string {
  if (count === 0) return `${start0},0`;
  if (count === 1) return `${start0 + 1}`;
  return `${start0 + 1},${count}`;
}

function emit(parts: string[], mark: string, lines: Lines, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const line = lines.line(i);
    parts.push(mark, line);
    if (!line.endsWith("\n")) parts.push("\n", NO_NEWLINE);
  }
}
