/**
 * Hashes of files grep read before, by path, with the stat stamp they were
 * read under (device, inode, size, mtime, ctime from the fstat of the
 * descriptor that was read): a later read whose stamp is the same is not
 * hashed again. As in git, a stamp is remembered only when its mtime and
 * ctime were at least RACY_MARGIN_MS older than the read, so a change made
 * within the same clock tick as the read cannot hide behind it. One memory
 * per process, shared by every kind of reader.
 */

/** A stamp whose mtime or ctime is not this much older than the read is not remembered (racy-git rule). */
export const RACY_MARGIN_MS = 2000;
/** Remembered hashes, at most (72 bytes a record, plus a map entry keyed by a number). */
const MAX_KNOWN = 200_000;
/** A record: the 5 stamp fields (float64) and the 32-byte SHA-256. */
const RECORD = 72;

export interface Remembered {
  /** the 5 stamp fields joined by ";" */
  stamp: string;
  fields: Float64Array;
  sha256: string;
}

export class HashMemory {
  /**
   * A 52-bit hash of the absolute path -> record index in `records`. Two
   * paths with the same key share a record; the stamp (device and inode
   * among it) tells them apart, so a collision costs a hash, never a wrong one.
   */
  private known = new Map<number, number>();
  private records = Buffer.alloc(0);

  remembered(path: string): Remembered | undefined {
    const r = this.known.get(pathKey(path));
    if (r === undefined) return undefined;
    const at = r * RECORD;
    const fields = new Float64Array(5);
    for (let k = 0; k < 5; k++) fields[k] = this.records.readDoubleLE(at + 8 * k);
    return { stamp: Array.from(fields).join(";"), fields, sha256: this.records.toString("hex", at + 40, at + 72) };
  }

  remember(path: string, fields: ArrayLike<number>, sha256: Uint8Array): void {
    const key = pathKey(path);
    let r = this.known.get(key);
    if (r === undefined) {
      if (this.known.size >= MAX_KNOWN) this.known = new Map();
      r = this.known.size;
      if ((r + 1) * RECORD > this.records.length) {
        const grown = Buffer.alloc(Math.min(MAX_KNOWN, Math.max(1024, 2 * (r + 1))) * RECORD);
        this.records.copy(grown);
        this.records = grown;
      }
      this.known.set(key, r);
    }
    const at = r * RECORD;
    for (let k = 0; k < 5; k++) this.records.writeDoubleLE(fields[k]!, at + 8 * k);
    this.records.set(sha256, at + 40);
  }
}

/** 52 bits of a 64-bit hash of the path: a Map key as a number, cheaper than the string. */
function pathKey(path: string): number {
  return Number(BigInt.asUintN(52, BigInt(Bun.hash.wyhash(path))));
}

let shared: HashMemory | null = null;

export function sharedHashMemory(): HashMemory {
  shared ??= new HashMemory();
  return shared;
}
