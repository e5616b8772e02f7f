/**
 * One segment of the trigram index: a set of blobs, keyed by the SHA-256 of
 * their bytes, and for every byte trigram that occurs in any of them the list
 * of those that hold it (posting lists, as in Russ Cox's codesearch and
 * Zoekt). A blob is immutable, so a segment never goes stale; it says
 * nothing about blobs it does not hold.
 *
 * Layout (little-endian), version 1:
 *
 *   0    "WSTRIGR1"
 *   8    u32 version (1), u32 blob count B, u32 trigram count T, u32 0, u64 posting bytes P
 *   32   B blob records of 72 bytes, in SHA-256 order (a blob's ordinal is its place here):
 *          sha256[32], git blob id zero padded [32], u32 size (clamped), u8 kind (0 text, 1 binary),
 *          u8 git id length (20, 32, or 0 when unknown), u16 0
 *        T trigram records of 12 bytes, in trigram order:
 *          u32 trigram (low 24 bits, first byte highest) | encoding << 24, u32 offset into the postings,
 *          u32 blobs in the list
 *        P bytes of posting lists: encoding 0, LEB128 gaps between ordinals (the first as is); encoding 1,
 *          a bitmap of the B ordinals (bit k of byte k/8), used when smaller
 *   end  SHA-256 of everything before it
 *
 * Binary blobs (a NUL among their first 8000 bytes, git's rule, grep's too) have no trigrams. Both builders,
 * native (src/native/trigram_job.c) and encodeSegment here, write the same bytes for the same blobs.
 */
import { BINARY_SNIFF_BYTES } from "../../core/binary";

export const SEGMENT_MAGIC = "WSTRIGR1";
export const SEGMENT_VERSION = 1;
const HEADER = 32;
const BLOB_RECORD = 72;
const TRIGRAM_ENTRY = 12;
export const TRAILER = 32;

export interface SegmentBlob {
  /** SHA-256 of the bytes, 32 bytes */
  sha256: Uint8Array;
  /** git's blob id, when known (20 or 32 bytes); empty otherwise */
  gitOid: Uint8Array;
  size: number;
  binary: boolean;
  /** distinct trigrams of a text blob (any order); empty for a binary one */
  trigrams: Uint32Array;
}

/** The distinct byte trigrams of `bytes` (a trigram is b0 << 16 | b1 << 8 | b2), sorted; null when binary. */
export function trigramsOf(bytes: Uint8Array, seen: Uint8Array = new Uint8Array(1 << 21)): Uint32Array | null {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) >= 0) return null;
  const found: number[] = [];
  let t = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0);
  for (let i = 2; i < bytes.length; i++) {
    t = ((t << 8) | (bytes[i] as number)) & 0xffffff;
    const word = t >>> 3;
    const bit = 1 << (t & 7);
    if ((seen[word] as number) & bit) continue;
    seen[word] = (seen[word] as number) | bit;
    found.push(t);
  }
  for (const x of found) seen[x >>> 3] = 0;
  return Uint32Array.from(found).sort();
}

/** A (trigram, ordinal) pair as one number: the trigram above 29 bits of ordinal, exact in a double (24 + 29 bits). */
const PAIR = 2 ** 29;

/**
 * Encodes blobs as a segment; they are ordered by SHA-256 here (the first of equal ones kept). The posting lists
 * come from one sorted Float64Array of every (trigram, ordinal) pair: 8 bytes a pair, where a map of JavaScript
 * arrays held several times that (a server without the native module building in the background peaked at
 * 420-440 MB on the release trees).
 */
export function encodeSegment(input: readonly SegmentBlob[]): Uint8Array {
  const blobs = [...input].sort((a, b) => Buffer.compare(a.sha256, b.sha256));
  const unique = blobs.filter((b, i) => i === 0 || Buffer.compare(b.sha256, blobs[i - 1]!.sha256) !== 0);
  const n = unique.length;
  if (n > PAIR) throw new RangeError(`a segment holds at most ${PAIR} blobs, not ${n}`);
  const bitmapBytes = (n + 7) >> 3;
  let total = 0;
  for (const blob of unique) total += blob.trigrams.length;
  const pairs = new Float64Array(total);
  let k = 0;
  for (let ordinal = 0; ordinal < n; ordinal++) for (const t of unique[ordinal]!.trigrams) pairs[k++] = t * PAIR + ordinal;
  pairs.sort();
  // first pass: where each list ends among the pairs, and its bytes as gaps (a bitmap when that is smaller)
  const ends: number[] = [];
  const gapBytes: number[] = [];
  let postings = 0;
  for (let i = 0; i < total; ) {
    const t = Math.floor(pairs[i]! / PAIR);
    let varint = 0;
    let prev = 0;
    let j = i;
    for (; j < total && pairs[j]! < (t + 1) * PAIR; j++) {
      const ordinal = pairs[j]! - t * PAIR;
      varint += varintLength(j === i ? ordinal : ordinal - prev);
      prev = ordinal;
    }
    ends.push(j);
    gapBytes.push(varint);
    postings += varint > bitmapBytes ? bitmapBytes : varint;
    i = j;
  }
  const lists = ends.length;
  const tableAt = HEADER + n * BLOB_RECORD;
  const postingsAt = tableAt + lists * TRIGRAM_ENTRY;
  const out = Buffer.alloc(postingsAt + postings + TRAILER);
  out.write(SEGMENT_MAGIC, 0, "latin1");
  out.writeUInt32LE(SEGMENT_VERSION, 8);
  out.writeUInt32LE(n, 12);
  out.writeUInt32LE(lists, 16);
  out.writeUInt32LE(postings % 2 ** 32, 24);
  out.writeUInt32LE(Math.floor(postings / 2 ** 32), 28);
  unique.forEach((blob, ordinal) => {
    const at = HEADER + ordinal * BLOB_RECORD;
    out.set(blob.sha256, at);
    out.set(blob.gitOid, at + 32);
    out.writeUInt32LE(Math.min(blob.size, 0xffffffff), at + 64);
    out[at + 68] = blob.binary ? 1 : 0;
    out[at + 69] = blob.gitOid.length;
  });
  // second pass: the trigram records and the lists
  let entry = tableAt;
  let offset = 0;
  for (let list = 0, i = 0; list < lists; list++) {
    const t = Math.floor(pairs[i]! / PAIR);
    const j = ends[list]!;
    const varint = gapBytes[list]!;
    let prev = 0;
    const bitmap = varint > bitmapBytes;
    out.writeUInt32LE((t | ((bitmap ? 1 : 0) << 24)) >>> 0, entry);
    out.writeUInt32LE(offset, entry + 4);
    out.writeUInt32LE(j - i, entry + 8);
    entry += TRIGRAM_ENTRY;
    let at = postingsAt + offset;
    for (let m = i; m < j; m++) {
      const ordinal = pairs[m]! - t * PAIR;
      if (bitmap) out[at + (ordinal >> 3)]! |= 1 << (ordinal & 7);
      else {
        let v = m === i ? ordinal : ordinal - prev;
        while (v >= 0x80) {
          out[at++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        out[at++] = v;
      }
      prev = ordinal;
    }
    offset += bitmap ? bitmapBytes : varint;
    i = j;
  }
  const digest = new Bun.CryptoHasher("sha256").update(out.subarray(0, out.length - TRAILER)).digest();
  out.set(digest, out.length - TRAILER);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** Bytes of `v` as LEB128. */
function varintLength(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Why a segment's bytes cannot be used (it is then removed and its blobs indexed again). */
export class CorruptSegment extends Error {}

/**
 * A segment's bytes, checked (magic, version, sizes, trailer hash) and read
 * in place: lookups binary-search the trigram records, posting lists are
 * decoded into bitsets of the segment's ordinals only when asked for.
 */
export class Segment {
  readonly blobs: number;
  readonly trigrams: number;
  private readonly view: DataView;
  /** the bytes as a Buffer, for the hex of the blobs' ids */
  private readonly buffer: Buffer;
  private readonly tableAt: number;
  private readonly postingsAt: number;

  constructor(readonly bytes: Uint8Array) {
    if (bytes.length < HEADER + TRAILER || Buffer.from(bytes.buffer, bytes.byteOffset, 8).toString("latin1") !== SEGMENT_MAGIC) {
      throw new CorruptSegment("not a trigram segment");
    }
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.view.getUint32(8, true) !== SEGMENT_VERSION) throw new CorruptSegment("unknown segment version");
    this.blobs = this.view.getUint32(12, true);
    this.trigrams = this.view.getUint32(16, true);
    const postings = this.view.getUint32(24, true) + this.view.getUint32(28, true) * 2 ** 32;
    this.tableAt = HEADER + this.blobs * BLOB_RECORD;
    this.postingsAt = this.tableAt + this.trigrams * TRIGRAM_ENTRY;
    if (this.postingsAt + postings + TRAILER !== bytes.length) throw new CorruptSegment("segment size does not match its header");
  }

  /** Checks the trailer: the SHA-256 of everything before it. */
  verify(): void {
    const body = this.bytes.subarray(0, this.bytes.length - TRAILER);
    const digest = new Bun.CryptoHasher("sha256").update(body).digest();
    if (!digest.equals(this.bytes.subarray(this.bytes.length - TRAILER))) throw new CorruptSegment("segment hash does not match");
  }

  sha256Hex(ordinal: number): string {
    const at = HEADER + ordinal * BLOB_RECORD;
    return this.buffer.toString("hex", at, at + 32);
  }

  /** git's blob id of the blob, hex; "" when unknown. */
  gitOidHex(ordinal: number): string {
    const at = HEADER + ordinal * BLOB_RECORD;
    const len = this.bytes[at + 69] as number;
    return len === 0 ? "" : this.buffer.toString("hex", at + 32, at + 32 + len);
  }

  binary(ordinal: number): boolean {
    return this.bytes[HEADER + ordinal * BLOB_RECORD + 68] === 1;
  }

  size(ordinal: number): number {
    return this.view.getUint32(HEADER + ordinal * BLOB_RECORD + 64, true);
  }

  /** The record index of `trigram`, or -1 when no blob of the segment holds it. */
  find(trigram: number): number {
    let lo = 0;
    let hi = this.trigrams - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.view.getUint32(this.tableAt + mid * TRIGRAM_ENTRY, true) & 0xffffff;
      if (t === trigram) return mid;
      if (t < trigram) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Sets in `bits` (a bitset of this segment's ordinals) the blobs holding `trigram`. */
  orPostings(trigram: number, bits: Uint32Array): void {
    const k = this.find(trigram);
    if (k < 0) return;
    const entry = this.tableAt + k * TRIGRAM_ENTRY;
    const bitmap = this.view.getUint32(entry, true) >>> 24 === 1;
    const at = this.postingsAt + this.view.getUint32(entry + 4, true);
    const count = this.view.getUint32(entry + 8, true);
    const bytes = this.bytes;
    if (bitmap) {
      const n = (this.blobs + 7) >> 3;
      for (let i = 0; i < n; i++) {
        const b = bytes[at + i] as number;
        if (b !== 0) bits[i >> 2]! |= b << ((i & 3) * 8);
      }
      return;
    }
    let p = at;
    let ordinal = 0;
    for (let i = 0; i < count; i++) {
      let v = 0;
      let shift = 0;
      let b: number;
      do {
        b = bytes[p++] as number;
        v += (b & 0x7f) * 2 ** shift;
        shift += 7;
      } while (b & 0x80);
      ordinal = i === 0 ? v : ordinal + v;
      bits[ordinal >>> 5]! |= 1 << (ordinal & 31);
    }
  }
}
