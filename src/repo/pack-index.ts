import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { perPath } from "../core/per-path";

/**
 * Which objects a pack holds, from its index file (`.idx`, version 2; gitformat-pack(5)): a table of 256
 * cumulative counts by first byte, then every object id in byte order, searched as git searches it. Read
 * whole (a cold capture's 16,831 blob ids looked up in about 10 ms), so only where the indexes are not large
 * for the lookups asked of them (packIndexesOf's budget); larger ones are left to git.
 */
export class PackIndex {
  private readonly view: DataView;

  private constructor(
    private readonly bytes: Buffer,
    private readonly idLength: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The index at `path`, or null when it is not a whole version-2 index of `idLength`-byte ids. */
  static read(path: string, idLength: number): PackIndex | null {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      return null;
    }
    if (bytes.length < TABLE + 2 * idLength || bytes.readUInt32BE(0) !== MAGIC || bytes.readUInt32BE(4) !== 2) return null;
    let before = 0;
    for (let b = 0; b < 256; b++) {
      const upTo = bytes.readUInt32BE(8 + 4 * b);
      if (upTo < before) return null;
      before = upTo;
    }
    // the ids, their CRCs and 4-byte offsets, the pack's and the index's own checksums (large offsets after)
    if (bytes.length < TABLE + before * (idLength + 8) + 2 * idLength) return null;
    return new PackIndex(bytes, idLength);
  }

  /** Whether the pack holds the object whose id is ids[off, off + id length). */
  holds(ids: Buffer, off: number): boolean {
    const len = this.idLength;
    const head = ids.readUInt32BE(off);
    const view = this.view;
    const b0 = head >>> 24;
    let lo = b0 === 0 ? 0 : view.getUint32(8 + 4 * (b0 - 1));
    let hi = view.getUint32(8 + 4 * b0);
    // ids compared by their first 4 bytes, and whole only where those are equal
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = TABLE + mid * len;
      const h = view.getUint32(at);
      const c = h < head ? -1 : h > head ? 1 : this.bytes.compare(ids, off, off + len, at, at + len);
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }
}

perPath(PackIndex.prototype.holds);

/**
 * The ids (lower-case hex) none of the packs holds, in their order; null when one is not an id of the
 * indexes' length.
 */
export function missingFrom(indexes: readonly PackIndex[], oids: readonly string[], idLength: number): string[] | null {
  const ids = Buffer.from(oids.join(""), "hex");
  if (ids.length !== oids.length * idLength || oids.some((o) => o.length !== 2 * idLength)) return null;
  const out: string[] = [];
  for (let i = 0; i < oids.length; i++) {
    const off = i * idLength;
    let held = false;
    for (let k = 0; k < indexes.length && !held; k++) held = (indexes[k] as PackIndex).holds(ids, off);
    if (!held) out.push(oids[i] as string);
  }
  return out;
}

/** "\377tOc": a version-2 (or later) index; version 1 has no magic. */
const MAGIC = 0xff744f63;
/** The header and the table of counts: the ids start here. */
const TABLE = 8 + 256 * 4;
/** At most this much of indexes is read at once (about 2.3 million objects): more is left to git, which maps them. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/**
 * The indexes of every pack in an object directory, when they alone say which objects it holds: null when
 * it may hold others (a loose object, an alternate object directory) or an index cannot be read here, and
 * then git must be asked. A pack counts once its index exists (git writes the index last), and only with its
 * pack file (git skips an index without one).
 */
export function packIndexesOf(objectsDir: string, idLength: number, maxBytes = MAX_INDEX_BYTES): PackIndex[] | null {
  let packs: string[];
  try {
    for (const name of readdirSync(objectsDir)) {
      if (LOOSE_DIR.test(name) && readdirSync(join(objectsDir, name)).length > 0) return null;
    }
    if (existsSync(join(objectsDir, "info", "alternates"))) return null;
    packs = existsSync(join(objectsDir, "pack")) ? readdirSync(join(objectsDir, "pack")) : [];
  } catch {
    return null;
  }
  // an index without its pack is no pack, for git either (it skips it): its objects are not held
  const names = packs.filter((name) => name.endsWith(".idx") && packs.includes(`${name.slice(0, -4)}.pack`));
  let bytes = 0;
  try {
    for (const name of names) bytes += statSync(join(objectsDir, "pack", name)).size;
  } catch {
    return null;
  }
  if (bytes > Math.min(maxBytes, MAX_INDEX_BYTES)) return null;
  const out: PackIndex[] = [];
  for (const name of names) {
    const index = PackIndex.read(join(objectsDir, "pack", name), idLength);
    if (!index) return null;
    out.push(index);
  }
  return out;
}

const LOOSE_DIR = /^[0-9a-f]{2}$/;
