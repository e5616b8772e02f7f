/**
 * Byte-level helpers: fixed-string search with Buffer.indexOf (memmem speed,
 * no decoding, no regex) and the newline arithmetic that turns byte offsets
 * into line numbers.
 */
import { nativeModule } from "../../repo/native";
import type { RegionScan } from "./regex-scan";

export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Non-overlapping occurrences of `needle`, leftmost first (what ripgrep reports
 * for `-F`): "aaa" holds one "aa", at offset 0.
 */
export function literalScan(region: Uint8Array, needle: Uint8Array, maxRecords: number): RegionScan {
  const buf = asBuffer(region);
  const starts: number[] = [];
  const ends: number[] = [];
  let count = 0;
  let pos = 0;
  for (;;) {
    const p = buf.indexOf(needle, pos);
    if (p < 0) break;
    if (count < maxRecords) {
      starts.push(p);
      ends.push(p + needle.length);
    }
    count++;
    pos = p + needle.length;
  }
  return { starts, ends, count };
}

/** Index of the last `\n` before `pos`, or -1. (Buffer.lastIndexOf reads a negative offset from the end.) */
export function lastNewlineBefore(buf: Buffer, pos: number): number {
  return pos <= 0 ? -1 : buf.lastIndexOf(10, pos - 1);
}

/** Start of the line holding byte `pos`. */
export function lineStartOf(buf: Buffer, pos: number): number {
  return lastNewlineBefore(buf, pos) + 1;
}

/** Below this span a memchr per line costs less than a call into the native module (loaded on first such span). */
const NATIVE_COUNT_MIN = 4096;

/**
 * Number of `\n` bytes in [from, to): SIMD in the native module for long
 * spans; otherwise memchr per line, which beats a word-at-a-time loop on
 * source text, and never touches `.buffer`, which makes JavaScriptCore copy a
 * fresh typed array.
 */
export function countNewlines(buf: Buffer, from: number, to: number): number {
  const native = to - from >= NATIVE_COUNT_MIN ? nativeModule() : null;
  if (native) return native.countByte(buf, 10, Math.max(0, from), Math.min(buf.length, to));
  let c = 0;
  for (let i = buf.indexOf(10, from); i >= 0 && i < to; i = buf.indexOf(10, i + 1)) c++;
  return c;
}

/** Moves `pos` back to the start of the UTF-8 character it falls in (never before `floor`). */
export function charStartAtOrBefore(bytes: Uint8Array, pos: number, floor: number): number {
  while (pos > floor && (bytes[pos]! & 0xc0) === 0x80) pos--;
  return pos;
}

/** Moves `pos` forward past UTF-8 continuation bytes (never beyond `ceil`). */
export function charStartAtOrAfter(bytes: Uint8Array, pos: number, ceil: number): number {
  while (pos < ceil && (bytes[pos]! & 0xc0) === 0x80) pos++;
  return pos;
}

/** Length in bytes of the longest line (without its `\n`). */
export function longestLine(buf: Buffer): number {
  const native = buf.length >= NATIVE_COUNT_MIN ? nativeModule() : null;
  if (native) return native.longestRun(buf, 10);
  let longest = 0;
  let start = 0;
  for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, nl + 1)) {
    if (nl - start > longest) longest = nl - start;
    start = nl + 1;
  }
  return Math.max(longest, buf.length - start);
}
