/**
 * A file as lines, without copying it: its bytes plus the offset where each
 * line starts. A line includes its "\n" terminator, so the last line of a
 * file without a final newline is different from the same text with one, and
 * "\ No newline at end of file" needs no special case when matching.
 *
 * Lines are compared against hunk lines (byte strings) byte by byte in place;
 * a line becomes a string only when asked for (a search beyond the stated
 * line's window, a reject's excerpt, a diff's line), so a file a patch edits
 * in a few places is never decoded whole (a 500-file patch's 8.5 MB of files
 * decoded as byte strings took a one-shot process 55 ms, a third of its apply
 * without the native module).
 */
import { nativeModule, type NativeModule } from "../../repo/native";
import { byteStringToText } from "./byte-string";
import type { LineExcerpt } from "./types";

const NL = 10;

export class FileLines {
  /** starts[i] is where line i begins; starts[count] is the end of the bytes. */
  readonly starts: Uint32Array;
  readonly count: number;
  private readonly buf: Buffer;
  private index: Map<string, number[]> | undefined;

  /**
   * A file's bytes as lines: with the native module its line starts are
   * found 32 bytes at a time (a 500-file patch's files took a one-shot
   * process 12 ms of cold JavaScript to index); the same numbers.
   */
  static ofBytes(bytes: Uint8Array, native: NativeModule | null = nativeModule()): FileLines {
    return new FileLines(bytes, native?.lineStarts(bytes) ?? undefined);
  }

  /** `starts`: the line starts, as lineStarts computes them, when the caller has them. */
  constructor(bytes: Uint8Array, given?: Uint32Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (given) {
      this.count = given.length - 1;
      this.starts = given;
      return;
    }
    const buf = this.buf;
    let starts = new Uint32Array(Math.max(16, (buf.length >>> 4) + 2));
    let n = 1;
    for (let i = buf.indexOf(NL); i >= 0; i = buf.indexOf(NL, i + 1)) {
      if (n + 1 >= starts.length) {
        const grown = new Uint32Array(starts.length * 2);
        grown.set(starts);
        starts = grown;
      }
      starts[n++] = i + 1;
    }
    const unterminated = buf.length > 0 && buf[buf.length - 1] !== NL;
    this.count = n - 1 + (unterminated ? 1 : 0);
    starts[this.count] = buf.length;
    this.starts = starts;
  }

  /** Whether line i is exactly `line` (a byte string, terminator included). */
  equals(i: number, line: string): boolean {
    const start = this.starts[i]!;
    return this.starts[i + 1]! - start === line.length && this.sameChars(start, line);
  }

  /** Whether line i is `text` (a byte string) followed by "\n" (eol) or by the end of the file (no eol). */
  equalsText(i: number, text: string, eol: boolean): boolean {
    const start = this.starts[i]!;
    const end = this.starts[i + 1]!;
    if (end - start !== text.length + (eol ? 1 : 0)) return false;
    if (eol ? this.buf[end - 1] !== NL : end !== this.buf.length) return false;
    return this.sameChars(start, text);
  }

  /** Whether the bytes from `at` are the chars of the byte string `s`. */
  private sameChars(at: number, s: string): boolean {
    const buf = this.buf;
    for (let k = 0; k < s.length; k++) if (buf[at + k] !== s.charCodeAt(k)) return false;
    return true;
  }

  /** Line i as a byte string, terminator included. */
  line(i: number): string {
    return this.buf.toString("latin1", this.starts[i]!, this.starts[i + 1]!);
  }

  /** True when the file is not empty and its last line has no "\n". */
  get lastLineUnterminated(): boolean {
    return this.count > 0 && this.buf[this.buf.length - 1] !== NL;
  }

  /** Positions of every line, by content. Built once, on the first search that needs it. */
  positions(line: string): readonly number[] {
    if (!this.index) {
      const index = new Map<string, number[]>();
      for (let i = 0; i < this.count; i++) {
        const key = this.line(i);
        const list = index.get(key);
        if (list) list.push(i);
        else index.set(key, [i]);
      }
      this.index = index;
    }
    return this.index.get(line) ?? EMPTY;
  }

  /** Lines [from, from+n) clamped to the file, decoded for a reject message. */
  excerpt(from: number, n: number): LineExcerpt {
    const start = Math.max(0, Math.min(from, this.count - 1));
    const end = Math.min(this.count, start + Math.max(1, n));
    const text: string[] = [];
    for (let i = start; i < end; i++) text.push(displayLine(this.line(i)));
    return { line: start + 1, text };
  }
}

const EMPTY: readonly number[] = [];
const MAX_DISPLAY_CHARS = 400;

/** A line without its "\n" (a "\r" stays visible), decoded as UTF-8, cut when very long. */
export function displayLine(line: string): string {
  const bare = line.endsWith("\n") ? line.slice(0, -1) : line;
  const cut = bare.length > MAX_DISPLAY_CHARS ? bare.slice(0, MAX_DISPLAY_CHARS) : bare;
  return byteStringToText(cut) + (cut.length < bare.length ? "…" : "");
}
