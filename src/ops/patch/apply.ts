/**
 * Applies one file's hunks in memory, all or nothing: every hunk is placed
 * first (match.ts), and only when all of them fit are the new bytes built.
 * Unchanged stretches are copied from the original bytes as whole ranges, so
 * a large file with few hunks costs about one copy of the file.
 */
import { bytesToByteString } from "./byte-string";
import { FileLines } from "./lines";
import { HunkMatcher, hunkSides } from "./match";
import type { ApplyResult, HunkOffset, HunkReject, PatchHunk } from "./types";

interface Splice {
  /** Replaced line range [start, end) of the original. */
  start: number;
  end: number;
  newText: string;
}

export function applyHunks(bytes: Uint8Array, hunks: PatchHunk[]): ApplyResult {
  const file = new FileLines(bytesToByteString(bytes));
  const rejects: HunkReject[] = [];
  const splices: Splice[] = [];
  const offsets: HunkOffset[] = [];
  let minStart = 0;
  let sealed = false;
  for (const hunk of hunks) {
    const sides = hunkSides(hunk);
    if (typeof sides === "string") {
      rejects.push({ index: hunk.index, reason: "malformed", message: `hunk ${hunk.index} (${hunk.header}): ${sides}` });
      continue;
    }
    const placed = new HunkMatcher(file, hunk, sides).place(minStart, sealed);
    if (!placed.ok) {
      rejects.push(placed.reject);
      continue;
    }
    splices.push({ start: placed.start, end: placed.end, newText: sides.newText });
    if (placed.offset !== 0) offsets.push({ index: hunk.index, offset: placed.offset });
    minStart = placed.end;
    sealed = sides.newUnterminated;
  }
  if (rejects.length > 0) return { ok: false, rejects };
  return { ok: true, bytes: splice(bytes, file, splices), offsets };
}

function splice(bytes: Uint8Array, file: FileLines, splices: Splice[]): Uint8Array {
  let size = bytes.length;
  for (const s of splices) size += s.newText.length - (file.starts[s.end]! - file.starts[s.start]!);
  const out = new Uint8Array(size);
  const writer = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let from = 0;
  let at = 0;
  for (const s of splices) {
    const until = file.starts[s.start]!;
    at += source.copy(writer, at, from, until);
    const text = s.newText;
    if (text.length > 64) at += writer.write(text, at, "latin1");
    else for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
    from = file.starts[s.end]!;
  }
  source.copy(writer, at, from);
  return out;
}
