/**
 * git's binary patches (`git diff --binary`): after `GIT binary patch`, a
 * forward hunk and an optional reverse one, each `literal SIZE` (the new
 * bytes) or `delta SIZE` (git's delta of the old bytes into the new), SIZE
 * being the length once inflated, then the zlib-deflated data in lines of
 * base 85 (a length character, `A`-`Z` for 1-26 bytes and `a`-`z` for 27-52,
 * then 5 characters per 4 bytes), then an empty line. Read as git's apply.c
 * and patch-delta.c read them; written as diff.c writes them, literal only
 * (a delta is never needed to apply, only smaller).
 *
 * A binary patch carries the full object ids of both sides on its `index`
 * line: git applies one only to the exact bytes it was made from, and checks
 * that the result is the bytes it was made to give. So does worksnap.
 */
import { gitBlobHash } from "../../core/hash";

/** The most bytes one hunk may inflate to: a file's bytes, as workspace_write_file takes at most. */
export const HUNK_MAX_BYTES = 256 * 1024 * 1024;

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const DIGIT = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/**
 * node:zlib, loaded on the first binary hunk: loading it (and node:stream beneath it) costs every process
 * about 6 ms at start, which a command that meets no binary patch should not pay.
 */
function zlib(): typeof import("node:zlib") {
  return require("node:zlib") as typeof import("node:zlib");
}

/** One hunk, inflated. */
export interface BinaryHunk {
  kind: "literal" | "delta";
  data: Uint8Array;
}

/** A file's binary patch: the sides' full object ids (from the `index` line) and its hunks. */
export interface BinaryPatch {
  oldOid: string;
  newOid: string;
  forward: BinaryHunk;
  reverse: BinaryHunk | null;
}

/** Lines as the patch parser has them: byte strings (one char per byte), without their newline. */
interface Lines {
  readonly length: number;
  at(i: number): string | undefined;
}

export type ParsedBinary = { ok: true; forward: BinaryHunk; reverse: BinaryHunk | null; next: number } | { ok: false; message: string; next: number };

/** The hunks after a `GIT binary patch` line (`at`: the line after it); `next`: the first line after them. */
export function parseBinaryHunks(lines: Lines, at: number): ParsedBinary {
  const forward = parseHunk(lines, at);
  if (!forward.ok) return forward;
  if (forward.hunk === null) return { ok: false, message: `patch line ${at + 1}: a binary patch without data (expected "literal SIZE" or "delta SIZE")`, next: forward.next };
  const reverse = parseHunk(lines, forward.next);
  if (!reverse.ok) return reverse;
  return { ok: true, forward: forward.hunk, reverse: reverse.hunk, next: reverse.next };
}

type ParsedHunk = { ok: true; hunk: BinaryHunk | null; next: number } | { ok: false; message: string; next: number };

function parseHunk(lines: Lines, at: number): ParsedHunk {
  const head = /^(literal|delta) (\d+)$/.exec(trimCr(lines.at(at) ?? ""));
  if (!head) return { ok: true, hunk: null, next: at }; // no (reverse) hunk here
  const kind = head[1] as BinaryHunk["kind"];
  const size = Number(head[2]);
  if (size > HUNK_MAX_BYTES) {
    return { ok: false, message: `patch line ${at + 1}: a binary ${kind} of ${size} bytes; a patch carries at most ${HUNK_MAX_BYTES} bytes (256 MiB) per file`, next: skipData(lines, at + 1) };
  }
  const chunks: Uint8Array[] = [];
  let i = at + 1;
  for (; i < lines.length; i++) {
    const line = trimCr(lines.at(i)!);
    if (line === "") break;
    const bytes = decodeLine(line);
    if (bytes === null) return { ok: false, message: `patch line ${i + 1}: corrupt binary patch (a line of base 85 that does not decode)`, next: skipData(lines, i) };
    chunks.push(bytes);
  }
  // (a patch whose last empty line was trimmed, as text sent through a protocol often is, ends the data too: the
  // object ids still decide whether the bytes are right)
  let data: Uint8Array;
  try {
    // never past the stated size: a few KB of patch must not inflate into gigabytes before it is refused
    data = new Uint8Array(zlib().inflateSync(concat(chunks), { maxOutputLength: Math.max(1, size) }));
  } catch (err) {
    const why = (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" ? `its data inflates past the stated ${size} bytes` : "its data does not inflate";
    return { ok: false, message: `patch line ${at + 1}: corrupt binary patch (${why})`, next: Math.min(i + 1, lines.length) };
  }
  if (data.length !== size) return { ok: false, message: `patch line ${at + 1}: corrupt binary patch (${kind} of ${size} bytes inflates to ${data.length})`, next: Math.min(i + 1, lines.length) };
  return { ok: true, hunk: { kind, data }, next: Math.min(i + 1, lines.length) };
}

function trimCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** Past the rest of a hunk's data lines (to its empty line), after one that did not decode. */
function skipData(lines: Lines, i: number): number {
  while (i < lines.length && trimCr(lines.at(i)!) !== "") i++;
  return Math.min(i + 1, lines.length);
}

/** One data line's bytes; null when it is not a valid line (its length character, its size, a character outside base 85). */
function decodeLine(line: string): Uint8Array | null {
  const c = line.charCodeAt(0);
  const n = c >= 65 && c <= 90 ? c - 64 : c >= 97 && c <= 122 ? c - 96 + 26 : 0;
  if (n === 0 || line.length !== 1 + Math.ceil(n / 4) * 5) return null;
  const out = new Uint8Array(n);
  for (let g = 0, o = 0; o < n; g++) {
    let acc = 0;
    for (let k = 0; k < 5; k++) {
      const code = line.charCodeAt(1 + g * 5 + k);
      const d = code <= 0xff ? DIGIT[code]! : -1;
      if (d < 0) return null;
      acc = acc * 85 + d;
    }
    if (acc > 0xffffffff) return null;
    for (let k = 3; k >= 0 && o < n; k--) out[o++] = (acc >>> (k * 8)) & 0xff;
  }
  return out;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A full object id: 40 hex digits (SHA-1) or 64 (SHA-256), as git requires of a binary patch. */
export function isFullOid(oid: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(oid);
}

export function isNullOid(oid: string): boolean {
  return /^0+$/.test(oid);
}

/** git's blob id of `bytes` in the object format of `like` (an id of 40 or 64 digits). */
export function blobOidLike(like: string, bytes: Uint8Array): string {
  return gitBlobHash(bytes, like.length === 64 ? 64 : 40);
}

export type BinaryOutcome = { ok: true; bytes: Uint8Array } | { ok: false; reason: "context_mismatch" | "malformed"; message: string };

/**
 * The new bytes of `path` under its binary patch, from `old` (empty for a
 * file the patch creates): git's rules, the old bytes must be the object the
 * patch names, and the result must be the one it names.
 */
export function applyBinaryPatch(path: string, patch: BinaryPatch, old: Uint8Array, creates: boolean): BinaryOutcome {
  const { oldOid, newOid } = patch;
  if (!isFullOid(oldOid) || !isFullOid(newOid) || oldOid.length !== newOid.length) {
    return { ok: false, reason: "malformed", message: `cannot apply the binary patch to ${path} without a full index line (both object ids in full, as git diff --binary writes them)` };
  }
  if (!creates) {
    const have = blobOidLike(oldOid, old);
    if (have !== oldOid) {
      const already = have === newOid ? "; it already holds the patch's result" : "";
      return { ok: false, reason: "context_mismatch", message: `the binary patch applies to ${path} as object ${oldOid.slice(0, 12)}, which does not match its current contents (${have.slice(0, 12)})${already}` };
    }
  } else if (old.length > 0) {
    return { ok: false, reason: "context_mismatch", message: `the binary patch creates ${path}, but it is not empty` };
  }
  if (isNullOid(newOid)) return { ok: true, bytes: new Uint8Array(0) };
  const bytes = patch.forward.kind === "literal" ? patch.forward.data : applyDelta(old, patch.forward.data);
  if (bytes === null) return { ok: false, reason: "malformed", message: `the binary patch does not apply to ${path} (its delta does not fit the file's bytes)` };
  const made = blobOidLike(newOid, bytes);
  if (made !== newOid) {
    return { ok: false, reason: "malformed", message: `the binary patch to ${path} creates an incorrect result (expected object ${newOid.slice(0, 12)}, got ${made.slice(0, 12)})` };
  }
  return { ok: true, bytes };
}

/** git's delta (patch-delta.c) applied to `src`; null when it does not fit it or is corrupt. */
export function applyDelta(src: Uint8Array, delta: Uint8Array): Uint8Array | null {
  let at = 0;
  const size = (): number | null => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (at >= delta.length || shift > 49) return null;
      const b = delta[at++]!;
      value += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return value;
    }
  };
  const srcSize = size();
  const outSize = size();
  if (srcSize === null || outSize === null || srcSize !== src.length) return null;
  const out = new Uint8Array(outSize);
  let o = 0;
  while (at < delta.length) {
    const cmd = delta[at++]!;
    if (cmd & 0x80) {
      let off = 0;
      let len = 0;
      for (let k = 0; k < 4; k++) if (cmd & (1 << k)) off += (delta[at++] ?? NaN) * 2 ** (8 * k);
      for (let k = 0; k < 3; k++) if (cmd & (0x10 << k)) len += (delta[at++] ?? NaN) * 2 ** (8 * k);
      if (len === 0) len = 0x10000;
      if (!Number.isFinite(off + len) || off + len > src.length || len > outSize - o) return null;
      out.set(src.subarray(off, off + len), o);
      o += len;
    } else if (cmd !== 0) {
      if (cmd > outSize - o || cmd > delta.length - at) return null;
      out.set(delta.subarray(at, at + cmd), o);
      o += cmd;
      at += cmd;
    } else return null; // opcode 0 is reserved
  }
  return o === outSize ? out : null;
}

/**
 * The `index` line and the `GIT binary patch` body git writes for `from` ->
 * `to` (null: the side does not exist), literal hunks both ways. `mode`: the
 * mode both sides share, written on the index line as git does.
 */
export function binaryPatchText(from: Uint8Array | null, to: Uint8Array | null, mode: string | null, hexLength: 40 | 64 = 40): string {
  const zero = "0".repeat(hexLength);
  const oldOid = from === null ? zero : gitBlobHash(from, hexLength);
  const newOid = to === null ? zero : gitBlobHash(to, hexLength);
  return `index ${oldOid}..${newOid}${mode !== null ? ` ${mode}` : ""}\nGIT binary patch\n${literalHunk(to ?? EMPTY)}${literalHunk(from ?? EMPTY)}`;
}

const EMPTY = new Uint8Array(0);

function literalHunk(bytes: Uint8Array): string {
  const data = new Uint8Array(zlib().deflateSync(bytes));
  let out = `literal ${bytes.length}\n`;
  for (let at = 0; at < data.length; at += 52) {
    const n = Math.min(52, data.length - at);
    out += `${String.fromCharCode(n <= 26 ? 64 + n : 96 + n - 26)}${encode85(data.subarray(at, at + n))}\n`;
  }
  return `${out}\n`;
}

function encode85(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4) {
    let acc = 0;
    for (let k = 0; k < 4; k++) acc = acc * 256 + (bytes[i + k] ?? 0);
    const group = new Array<string>(5);
    for (let k = 4; k >= 0; k--) {
      group[k] = ALPHABET[acc % 85]!;
      acc = Math.floor(acc / 85);
    }
    out += group.join("");
  }
  return out;
}
