/**
 * Line ranges over bytes: 1-based, inclusive, lines end at LF (a CR before it
 * stays part of the line's bytes). Works on a whole buffer or on a stream so a
 * range near the start of a 2 GB file is read without loading the file.
 *
 * The cap is a budget of what the answer will carry: the length of the
 * slice as a JSON string (jsonCost), not its raw bytes, so a slice within the
 * cap always fits in one answer, quotes and control characters included.
 */
export interface LineSlice {
  bytes: Uint8Array;
  startLine: number;
  endLine: number;
  /** Total lines, when the whole input was seen. */
  totalLines?: number;
  /** The cap cut the range short. */
  cut: boolean;
}

export function countLines(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  let i = bytes.indexOf(10);
  while (i >= 0) {
    n++;
    i = bytes.indexOf(10, i + 1);
  }
  return bytes[bytes.length - 1] === 10 ? n : n + 1;
}

/** What one byte takes inside a JSON string: a quote, a backslash, LF, CR, tab, BS and FF take 2, other control characters 6. */
function byteCost(b: number): number {
  if (b === 34 || b === 92) return 2;
  if (b < 32) return b === 10 || b === 13 || b === 9 || b === 8 || b === 12 ? 2 : 6;
  return 1;
}

/**
 * The length bytes[from, to) takes inside a JSON string, counted in UTF-8
 * bytes (at least the UTF-16 units a JSON text is measured in).
 */
export function jsonCost(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let cost = 0;
  for (let i = from; i < to; i++) cost += byteCost(bytes[i] as number);
  return cost;
}

/** The end of the longest prefix of bytes[from, to) whose jsonCost is within `budget`, cut on a UTF-8 boundary. */
function fitting(bytes: Uint8Array, from: number, to: number, budget: number): number {
  let cost = 0;
  let i = from;
  while (i < to && cost + byteCost(bytes[i] as number) <= budget) cost += byteCost(bytes[i++] as number);
  return charBoundary(bytes.subarray(0, to), i);
}

export function sliceLines(bytes: Uint8Array, start: number, end: number, cap: number): LineSlice {
  const total = countLines(bytes);
  let line = 1;
  let pos = 0;
  while (line < start && pos < bytes.length) {
    const nl = bytes.indexOf(10, pos);
    if (nl < 0) {
      pos = bytes.length;
      break;
    }
    pos = nl + 1;
    line++;
  }
  const from = pos;
  let last = line - 1;
  let cut = false;
  let used = 0;
  while (last < end && pos < bytes.length) {
    const nl = bytes.indexOf(10, pos);
    const next = nl < 0 ? bytes.length : nl + 1;
    const cost = jsonCost(bytes, pos, next);
    if (used + cost > cap) {
      cut = true;
      // A single line longer than the cap is returned in part, cut on a UTF-8 boundary.
      if (last < start) return { bytes: bytes.subarray(from, fitting(bytes, from, next, cap)), startLine: start, endLine: start, totalLines: total, cut };
      break;
    }
    used += cost;
    pos = next;
    last++;
  }
  return { bytes: bytes.subarray(from, pos), startLine: start, endLine: Math.max(last, start - 1), totalLines: total, cut };
}

/** A streamed slice: how far the stream was read, and (when asked) the hash of what was read. */
export interface StreamedSlice extends LineSlice {
  /**
   * Bytes of the input read to produce the slice: from the start up to the
   * end of the slice, or the whole input when it was read to the end
   * (totalLines is then known).
   */
  readBytes: number;
  /** With `hash`: SHA-256 (hex) of the first readBytes bytes. */
  readSha256?: string;
}

/**
 * A line range from a stream, read only as far as the range needs: the
 * stream is cancelled once the last line of the range (or the cap) is
 * reached, so lines 1-2 of a 2 GB file cost one chunk. totalLines is known
 * only when the input ended before that (a start past the end reads it all).
 */
export async function sliceLinesFromStream(stream: ReadableStream<Uint8Array>, start: number, end: number, cap: number, hash = false): Promise<StreamedSlice> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  let line = 1;
  let cut = false;
  let lastComplete = start - 1;
  let readBytes = 0;
  let lastByte = -1;
  let ended = false;
  const hasher = hash ? new Bun.CryptoHasher("sha256") : null;
  const reader = stream.getReader();
  try {
    outer: for (;;) {
      const { value, done } = await reader.read();
      if (done || !value) {
        ended = true;
        break;
      }
      let pos = 0;
      /** where in this chunk the slice stopped; the chunk's length when it did not */
      let stoppedAt = value.length;
      try {
        while (pos < value.length) {
          const nl = value.indexOf(10, pos);
          const stop = nl < 0 ? value.length : nl + 1;
          if (line >= start && line <= end) {
            const cost = jsonCost(value, pos, stop);
            if (kept + cost > cap) {
              cut = true;
              if (lastComplete < start) {
                // The first line alone is over the cap: return its start, cut on a UTF-8 boundary.
                const upTo = fitting(value, pos, stop, cap - kept);
                parts.push(value.slice(pos, upTo));
                stoppedAt = upTo;
              } else stoppedAt = pos;
              break outer;
            }
            parts.push(value.slice(pos, stop));
            kept += cost;
          }
          if (nl < 0) break;
          if (line >= start && line <= end) lastComplete = line;
          line++;
          pos = stop;
          if (line > end) {
            stoppedAt = stop;
            break outer;
          }
        }
      } finally {
        hasher?.update(value.subarray(0, stoppedAt));
        readBytes += stoppedAt;
        if (stoppedAt > 0) lastByte = value[stoppedAt - 1] as number;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = Buffer.concat(parts);
  const partialLine = bytes.length > 0 && bytes[bytes.length - 1] !== 10;
  const endLine = partialLine ? lastComplete + 1 : lastComplete;
  const out: StreamedSlice = { bytes: new Uint8Array(bytes), startLine: start, endLine: Math.max(endLine, start - 1), cut, readBytes };
  // `line` counts the newlines seen plus one: the lines of the whole input, once it ended
  if (ended) out.totalLines = readBytes === 0 ? 0 : lastByte === 10 ? line - 1 : line;
  if (hasher) out.readSha256 = hasher.digest("hex");
  return out;
}

/** The largest offset <= `at` that does not split a UTF-8 sequence. */
function charBoundary(bytes: Uint8Array, at: number): number {
  let i = Math.min(at, bytes.length);
  while (i > 0 && i < bytes.length && ((bytes[i] as number) & 0xc0) === 0x80) i--;
  return i;
}

/**
 * A slice whose bytes go out as base64 (not UTF-8 text) cut to at most
 * `maxBytes`, at the last line end that fits (or mid-line for a single line),
 * with its end line and `cut` set accordingly: base64 takes 4 characters for
 * every 3 bytes, so a slice that fits as text may not.
 */
export function shrinkSlice(slice: LineSlice, maxBytes: number): LineSlice {
  if (slice.bytes.length <= maxBytes) return slice;
  const nl = slice.bytes.lastIndexOf(10, maxBytes - 1);
  const bytes = slice.bytes.subarray(0, nl >= 0 ? nl + 1 : maxBytes);
  return { ...slice, bytes, endLine: slice.startLine + countLines(bytes) - 1, cut: true };
}
