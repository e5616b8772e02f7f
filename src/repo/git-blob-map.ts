import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { hexOfBlobId, type BlobId } from "../core/hash";
import { perPath } from "../core/per-path";
import { nativeModule } from "./native";

export interface GitBlobInfo {
  sha256: string;
  size: number;
}

/** oid (32 bytes: sha1 zero-padded, or sha256) + sha256 (32) + size (float64 LE). */
const RECORD = 72;

/**
 * The persistent map from git blob id to sha256 and size, for blobs present in
 * worksnap's private object store. It is what makes a warm snapshot of a clean
 * tree cost almost nothing: `git ls-files -s` gives the blob ids and this map
 * gives the manifest entries. The file is append-only fixed-size binary
 * records, so loading 100k entries is one read and one pass; concurrent
 * writers append whole records with O_APPEND, and a torn tail from a crash is
 * ignored.
 */
export class GitBlobMap {
  /**
   * Keyed by the oid's first 48 bits (a number key is much cheaper than a hex string), built on the first lookup
   * by oid; the full oid checked on get. An export asks by sha256 alone: indexing 100,000 records it never asks
   * for by oid took 80 ms of its start.
   */
  private byPrefix: Map<number, number> | null = null;
  /** Records whose 48-bit prefix collides with an earlier one. */
  private collisions = new Map<string, number>();
  /** By the sha256's first 48 bits, built on the first lookup by sha256 (as byPrefix; the full sha256 checked on a hit). */
  private bySha: Map<number, number> | null = null;
  private shaCollisions = new Map<string, number>();
  private buf = Buffer.alloc(0);
  private readonly file: string;
  private loaded = false;
  /** Records added and not written yet (addLater). */
  private pending: { oid: string; sha256: string; size: number }[][] = [];

  constructor(stateDir: string) {
    this.file = join(stateDir, "cache", "gitblobs.bin");
  }

  /** Loads the map once; callers overlap this with git processes they have already started. */
  ensureLoaded(): void {
    this.flush();
    if (this.loaded) return;
    this.loaded = true;
    this.reload();
  }

  /** Picks up records appended by other processes since the last load. */
  reload(): void {
    this.flush();
    if (!existsSync(this.file)) return;
    const fd = openSync(this.file, "r");
    try {
      const size = fstatSync(fd).size;
      const whole = size - (size % RECORD);
      if (whole <= this.buf.length) return;
      const next = Buffer.allocUnsafe(whole);
      this.buf.copy(next, 0);
      let off = this.buf.length;
      while (off < whole) {
        const n = readSync(fd, next, off, whole - off, off);
        if (n <= 0) break;
        off += n;
      }
      const from = this.buf.length;
      this.buf = next.subarray(0, off - ((off - from) % RECORD));
      for (let r = from; r < this.buf.length; r += RECORD) {
        if (this.byPrefix) indexRecord(this.buf, r, 0, this.byPrefix, this.collisions);
        if (this.bySha) indexRecord(this.buf, r, 32, this.bySha, this.shaCollisions);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** True when no blob has been recorded yet (a cold store); a stat, the map is not loaded for it. */
  isEmpty(): boolean {
    this.flush();
    if (this.loaded) return this.buf.length === 0;
    try {
      return statSync(this.file).size < RECORD;
    } catch {
      return true;
    }
  }

  get(oid: string): GitBlobInfo | undefined {
    const r = this.recordOf(oid);
    if (r === undefined) return undefined;
    return { sha256: this.buf.toString("hex", r + 32, r + 64), size: this.buf.readDoubleLE(r + 64) };
  }

  /** Whether the blob is recorded, without building its answer. */
  has(oid: string): boolean {
    return this.recordOf(oid) !== undefined;
  }

  /** The record's offset; the prefix key and the full oid are read straight from the hex (no slices on this hot path). */
  private recordOf(oid: string): number | undefined {
    this.ensureLoaded();
    if (!this.byPrefix) [this.byPrefix, this.collisions] = this.indexAll(0);
    const key = oidPrefixKey(oid);
    let r = this.byPrefix.get(key);
    if (r === undefined || !hexAt(this.buf, r, oid)) r = this.collisions.get(oid);
    return r;
  }

  oidOf(sha256: string): string | undefined {
    const hit = this.oidKnown(sha256);
    if (hit) return hit;
    this.reload();
    return this.oidKnown(sha256);
  }

  /** oidOf without looking for other processes' records on a miss: for many lookups after one reload(). */
  oidKnown(sha256: string): string | undefined {
    const r = this.shaRecord(sha256);
    return r === undefined ? undefined : oidHex(this.buf, r);
  }

  /** The size of the blob whose SHA-256 is `sha256` (hex), when recorded; like oidKnown, no reload on a miss. */
  sizeKnown(sha256: string): number | undefined {
    const r = this.shaRecord(sha256);
    return r === undefined ? undefined : this.buf.readDoubleLE(r + 64);
  }

  /**
   * sizeKnown() of each of `ids` (blob ids, "sha256:" and the hex), -1 for one not recorded. With the native
   * module, every id is looked up in one call that indexes the records itself (src/native/manifest_columns.h):
   * indexing 100,000 records here and looking up as many ids cost an export about 0.2 s before its first read.
   */
  sizesKnown(ids: readonly BlobId[]): Float64Array {
    this.ensureLoaded();
    const m = nativeModule();
    const sizes = m && this.buf.length > 0 ? m.recordSizes(this.buf, RECORD, 32, 64, ids) : new Float64Array(ids.length).fill(-2);
    for (let i = 0; i < ids.length; i++) {
      if (sizes[i] === -2) sizes[i] = this.sizeKnown(hexOfBlobId(ids[i] as BlobId)) ?? -1;
    }
    return sizes;
  }

  private shaRecord(sha256: string): number | undefined {
    this.ensureLoaded();
    if (this.buf.length === 0 || sha256.length !== 64) return undefined; // an empty map (a new repository's import)
    if (!this.bySha) [this.bySha, this.shaCollisions] = this.indexAll(32);
    let r = this.bySha.get(oidPrefixKey(sha256));
    if (r === undefined || !hexAt(this.buf, r + 32, sha256)) r = this.shaCollisions.get(sha256);
    return r;
  }

  /** Every record loaded so far indexed by its id at `field` (indexRecord): the index and its collisions. */
  private indexAll(field: 0 | 32): [Map<number, number>, Map<string, number>] {
    const byKey = new Map<number, number>();
    const collisions = new Map<string, number>();
    for (let r = 0; r < this.buf.length; r += RECORD) indexRecord(this.buf, r, field, byKey, collisions);
    return [byKey, collisions];
  }

  /** Records blobs that are now in the private store. */
  add(items: { oid: string; sha256: string; size: number }[]): void {
    if (items.length === 0) return;
    this.append(items);
  }

  /**
   * add(), the records written at flush() (or before anything reads the map, or at close): a cold capture adds
   * 17,000 at its very end, on one core, and its caller flushes them while the manifest's flush runs on the I/O
   * threads (13-19 ms off the end of the capture).
   */
  addLater(items: { oid: string; sha256: string; size: number }[]): void {
    if (items.length > 0) this.pending.push(items);
  }

  /**
   * Writes what addLater() left. The map is a cache of pairs the store holds: records a failed write drops (a full
   * disk) only make a later capture read those files again.
   */
  flush(): void {
    if (this.pending.length === 0) return;
    const batches = this.pending;
    this.pending = [];
    try {
      for (const items of batches) this.append(items);
    } catch {
      // dropped: see above
    }
  }

  private append(items: { oid: string; sha256: string; size: number }[]): void {
    this.ensureLoaded();
    mkdirSync(join(this.file, ".."), { recursive: true });
    const out = Buffer.alloc(items.length * RECORD);
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as { oid: string; sha256: string; size: number };
      const r = i * RECORD;
      out.write(item.oid, r, "hex");
      out.write(item.sha256, r + 32, "hex");
      out.writeDoubleLE(item.size, r + 64);
    }
    // A crash can leave a torn record at the end; cut it so new records stay aligned.
    if (existsSync(this.file)) {
      const size = statSync(this.file).size;
      if (size % RECORD !== 0) truncateSync(this.file, size - (size % RECORD));
    }
    appendFileSync(this.file, out);
    this.loaded = false; // read back on the next lookup, with what other processes added meanwhile (a CLI makes none)
  }
}

/** A hex blob id's first 48 bits as a number: a map key much cheaper than the id's string (check the whole id on a hit). */
export function oidPrefixKey(oid: string): number {
  let key = 0;
  for (let i = 0; i < 12; i++) key = key * 16 + hexValue(oid.charCodeAt(i));
  return key;
}
perPath(oidPrefixKey);


function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

/** The 32 bytes at `at` are `hex`: an oid (a sha1 zero-padded to 32 bytes) or a sha256. */
function hexAt(buf: Buffer, at: number, hex: string): boolean {
  const n = hex.length >> 1;
  for (let i = 0; i < n; i++) {
    if (buf[at + i] !== ((hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1)))) return false;
  }
  for (let i = n; i < 32; i++) if (buf[at + i] !== 0) return false;
  return true;
}

/**
 * Indexes the record at `r` by the 32-byte id at r + `field` (0: the oid, 32: the sha256): its first 48 bits as
 * the key; a record whose key an earlier, different id holds goes to `collisions` under its hex (the oid's hex
 * for the oid, as lookups ask for it).
 */
function indexRecord(buf: Buffer, r: number, field: number, byKey: Map<number, number>, collisions: Map<string, number>): void {
  const at = r + field;
  const key = buf.readUIntBE(at, 6);
  const prev = byKey.get(key);
  if (prev === undefined || buf.compare(buf, at, at + 32, prev + field, prev + field + 32) === 0) byKey.set(key, r);
  else collisions.set(field === 0 ? oidHex(buf, r) : buf.toString("hex", at, at + 32), r);
}

/** A sha1 oid is stored zero-padded to 32 bytes; a sha256 oid fills the slot. */
function oidHex(buf: Buffer, r: number): string {
  let sha1 = true;
  for (let i = r + 20; i < r + 32; i++) {
    if (buf[i] !== 0) {
      sha1 = false;
      break;
    }
  }
  return buf.toString("hex", r, r + (sha1 ? 20 : 32));
}
