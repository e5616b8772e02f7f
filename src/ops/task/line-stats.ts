import { isBinary } from "../../core/binary";
import { lineChanges, splitLines } from "../diff/line-diff";
import { bytesToByteString } from "../patch/byte-string";
import type { ChangePair } from "../snapshot/changes";
import type { Workspace } from "../workspace";

/** Files larger than this on either side are counted as binary (no line counts), as a diff would list them omitted. */
const MAX_TEXT_BYTES = 16 * 1024 * 1024;

export interface LineStats {
  added: number;
  removed: number;
  /** Files counted without lines (binary on either side, or too large). */
  binary: number;
}

/**
 * Added and removed lines over changed files, as `git diff --numstat` counts
 * them: a line diff of each text file (the count of lines on either side of a
 * minimal diff does not depend on which minimal diff), nothing for binary
 * files (a NUL in the first 8000 bytes, git's rule). A line that only gains
 * or loses its final newline counts as one removed and one added.
 */
export async function lineStats(ws: Workspace, pairs: readonly ChangePair[]): Promise<LineStats> {
  const stats: LineStats = { added: 0, removed: 0, binary: 0 };
  for (const p of pairs) {
    if (p.from && p.to && p.from.blob === p.to.blob) continue; // a mode change only
    const [a, b] = await Promise.all([p.from ? ws.blobs.read(p.from.blob) : new Uint8Array(), p.to ? ws.blobs.read(p.to.blob) : new Uint8Array()]);
    if (a.length > MAX_TEXT_BYTES || b.length > MAX_TEXT_BYTES || isBinary(a) || isBinary(b)) {
      stats.binary++;
      continue;
    }
    const x = splitLines(bytesToByteString(a));
    const y = splitLines(bytesToByteString(b));
    for (const c of lineChanges(x, y)) {
      stats.removed += c.oldEnd - c.oldStart;
      stats.added += c.newEnd - c.newStart;
    }
  }
  return stats;
}
