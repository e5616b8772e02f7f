/**
 * Applies one file's hunks in memory, all or nothing: every hunk is placed
 * first (match.ts), and only when all of them fit are the new bytes built.
 * Unchanged stretches are copied from the original bytes as whole ranges, so
 * a large file with few hunks costs about one copy of the file.
 */
import { availableParallelism } from "node:os";
import { knowsSha256, rememberSha256 } from "../../core/content-hash";
import { type NativeModule, nativeModule } from "../../repo/native";
import { FileLines } from "./lines";
import { HunkMatcher, hunkSides } from "./match";
import type { LineChange } from "../../core/line-change";
import type { ApplyResult, HunkLine, HunkOffset, HunkReject, PatchHunk, PatchSource } from "./types";

interface Splice {
  /** Replaced line range [start, end) of the original. */
  start: number;
  end: number;
  newText: string;
}

/** `native`: the module whose apply to try first (tests pass null for the TypeScript path alone). */
export function applyHunks(bytes: Uint8Array, hunks: PatchHunk[], native: NativeModule | null = nativeModule()): ApplyResult {
  return (native && applyNatively(bytes, hunks, native)) || applyHere(bytes, hunks);
}

/**
 * The native apply, for hunks parsed from one patch with the native module:
 * it places and splices them from the patch's bytes, the same way, and
 * declines (null) whatever it does not do alike or a hunk that does not fit,
 * which the TypeScript path then applies or rejects with its reasons. A
 * 500-file, 5,000-hunk patch took a one-shot process about 33 ms of cold
 * JavaScript to apply.
 */
function applyNatively(bytes: Uint8Array, hunks: PatchHunk[], native: NativeModule): ApplyResult | null {
  const patch = hunks[0]?.body?.patch;
  const spec = patch ? nativeSpec(hunks, patch) : null;
  if (!patch || !spec) return null;
  const applied = native.patchApply(bytes, patch.bytes, patch.starts, spec);
  return applied && nativeResult(hunks, applied);
}

/** The hunks as the native apply takes them (body lines from, to; stated old start), or null when not all come from `patch`. */
function nativeSpec(hunks: PatchHunk[], patch: PatchSource): Int32Array | null {
  const spec = new Int32Array(hunks.length * 3);
  for (let k = 0; k < hunks.length; k++) {
    const h = hunks[k]!;
    if (h.body?.patch !== patch) return null;
    spec[3 * k] = h.body.from;
    spec[3 * k + 1] = h.body.to;
    spec[3 * k + 2] = h.oldStart;
  }
  return spec;
}

/** Below this many bytes of files in all, starting threads costs more than it saves. */
const MANY_THREADS_MIN_BYTES = 1 << 20;
const MANY_MAX_THREADS = 8;

/**
 * applyHunks for many files of one patch at once (each file's own hunks, applied to its bytes): with the native
 * module, placed and spliced on every core, each file's old and new bytes hashed on the same thread and their
 * SHA-256 remembered (core/content-hash.ts), which a write of the result asks for next (a 500-file patch: its
 * apply and the hashing of 17 MB were two passes, one of them on the JavaScript thread alone). A file the native
 * apply declines, and every file without the module, goes through applyHunks.
 */
export function applyHunksMany(items: readonly { bytes: Uint8Array; hunks: PatchHunk[] }[], native: NativeModule | null = nativeModule()): ApplyResult[] {
  const patch = items[0]?.hunks[0]?.body?.patch;
  const specs = native && patch ? items.map((it) => nativeSpec(it.hunks, patch)) : [];
  if (!native || !patch || specs.some((s) => s === null)) return items.map((it) => applyHunks(it.bytes, it.hunks, native));
  let bytes = 0;
  for (const it of items) bytes += it.bytes.length;
  const threads = bytes < MANY_THREADS_MIN_BYTES ? 1 : Math.min(MANY_MAX_THREADS, availableParallelism());
  // an old file hashed already (a history that took its checkpoints as soon as it was read) is not hashed again
  const known = Uint8Array.from(items, (it) => (knowsSha256(it.bytes) ? 1 : 0));
  const [results, digests] = native.patchApplyMany(
    items.map((it) => it.bytes),
    patch.bytes,
    patch.starts,
    specs as Int32Array[],
    threads,
    known,
  );
  return items.map((it, k) => {
    if (!known[k]) rememberSha256(it.bytes, digests.toString("hex", 64 * k, 64 * k + 32));
    const applied = results[k];
    if (!applied) return applyHere(it.bytes, it.hunks);
    rememberSha256(applied[0], digests.toString("hex", 64 * k + 32, 64 * k + 64));
    return nativeResult(it.hunks, applied);
  });
}

function nativeResult(hunks: PatchHunk[], [out, placed]: [Uint8Array, Int32Array]): ApplyResult {
  const offsets: HunkOffset[] = [];
  for (let k = 0; k < hunks.length; k++) if (placed[k] !== 0) offsets.push({ index: hunks[k]!.index, offset: placed[k]! });
  const lines: LineChange[] = [];
  for (let q = hunks.length; q < placed.length; q += 4) lines.push({ oldStart: placed[q]!, oldEnd: placed[q + 1]!, newStart: placed[q + 2]!, newEnd: placed[q + 3]! });
  return { ok: true, bytes: out, offsets, lines };
}

function applyHere(bytes: Uint8Array, hunks: PatchHunk[]): ApplyResult {
  const file = FileLines.ofBytes(bytes);
  const rejects: HunkReject[] = [];
  const splices: Splice[] = [];
  const offsets: HunkOffset[] = [];
  const lines: LineChange[] = [];
  let minStart = 0;
  let sealed = false;
  /** New lines minus old lines of the hunks placed so far: where the next hunk's new side starts. */
  let delta = 0;
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
    delta = hunkChanges(hunk, placed.start, placed.start + delta, lines);
    if (placed.offset !== 0) offsets.push({ index: hunk.index, offset: placed.offset });
    minStart = placed.end;
    sealed = sides.newUnterminated;
  }
  if (rejects.length > 0) return { ok: false, rejects };
  return { ok: true, bytes: splice(bytes, file, splices), offsets, lines };
}

/**
 * The line changes of one placed hunk, appended to `out` in 0-based line
 * numbers of the old and the new file: each run of removed and added lines
 * between context lines, less the lines it removes and adds back unchanged
 * at its ends (a patch may restate lines). Returns the new delta (new line
 * index minus old line index after the hunk).
 */
function hunkChanges(hunk: PatchHunk, oldAt: number, newAt: number, out: LineChange[]): number {
  const body = hunk.lines;
  let i = oldAt;
  let j = newAt;
  let k = 0;
  while (k < body.length) {
    if (body[k]!.kind === " ") {
      i++;
      j++;
      k++;
      continue;
    }
    const removed: HunkLine[] = [];
    const added: HunkLine[] = [];
    for (; k < body.length && body[k]!.kind !== " "; k++) (body[k]!.kind === "-" ? removed : added).push(body[k]!);
    let head = 0;
    while (head < removed.length && head < added.length && sameLine(removed[head]!, added[head]!)) head++;
    let tail = 0;
    while (tail < removed.length - head && tail < added.length - head && sameLine(removed[removed.length - 1 - tail]!, added[added.length - 1 - tail]!)) tail++;
    if (head + tail < removed.length || head + tail < added.length) {
      out.push({ oldStart: i + head, oldEnd: i + removed.length - tail, newStart: j + head, newEnd: j + added.length - tail });
    }
    i += removed.length;
    j += added.length;
  }
  return j - i;
}

function sameLine(a: HunkLine, b: HunkLine): boolean {
  return a.eol === b.eol && a.text === b.text;
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
