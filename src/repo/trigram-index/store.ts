/**
 * The trigram index on disk: `.mcp/index/trigrams-v1/`, one file per segment
 * (segment.ts), named by its trailer (the SHA-256 of its other bytes). A cache, never the record
 * of anything: a missing file means blobs not indexed yet, an unreadable or
 * corrupt one is removed and its blobs indexed again, never an error. Files
 * are written whole (temp file, rename) and never changed, so any number of
 * processes may read and add segments at once; two that index the same blob
 * both keep it, and the first loaded counts.
 *
 * In memory: each segment's bytes mapped (only the posting lists a query
 * reads are paged in), and two maps, git blob id -> blob and SHA-256 -> blob,
 * where a blob is named by a handle: segment number * 2^24 + ordinal.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileUnflushed } from "../atomic-write";
import { CorruptSegment, Segment, TRAILER } from "./segment";

/** Where the segments live, under the state directory; the version is the segment format's. */
export const TRIGRAM_DIR = join("index", "trigrams-v1");
const SUFFIX = ".seg";
const SLOT = 2 ** 24;
/** The last TrigramIndex.version given out. */
let versions = 0;

/** AND over clauses; a clause is an OR over alternatives; an alternative an AND over positions; a position an OR over trigrams. */
export type TrigramQuery = number[][][][];

/** What a query's selection says of a blob. */
export const READ = 0;
export const NO_MATCH = 1;
export const BINARY = 2;
export type Verdict = typeof READ | typeof NO_MATCH | typeof BINARY;

interface Loaded {
  name: string;
  segment: Segment;
}

export class TrigramIndex {
  readonly dir: string;
  /** by slot, for good: a removed segment leaves its slot empty, so the handles of the others never change */
  private slots: (Loaded | null)[] = [];
  private byOid = new Map<string, number>();
  /** by blob id (`sha256:` and the hex), as snapshot entries carry it: the same strings call after call, hashed once */
  private byBlob = new Map<string, number>();
  private stamp = "";
  /** Moves whenever the set of segments changes. */
  generation = 0;
  private versionOf = -1;
  private versionId = 0;
  /** Segments this process has just written from bytes it holds (add): loaded without reading them back. */
  private readonly written = new Set<string>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, TRIGRAM_DIR);
  }

  /**
   * A number no other index in this process, nor this one at another generation, has: the key of what a caller
   * keeps per blob handle (a handle names another blob once segments change).
   */
  get version(): number {
    if (this.versionOf !== this.generation) {
      this.versionOf = this.generation;
      this.versionId = ++versions;
    }
    return this.versionId;
  }

  /** Loads segments added since the last look (by any process) and forgets removed ones; a stat when nothing changed. */
  refresh(): void {
    let stamp: string;
    try {
      const st = statSync(this.dir);
      stamp = `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch {
      stamp = "none";
    }
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    const names = new Set(stamp === "none" ? [] : readdirSync(this.dir).filter((n) => n.endsWith(SUFFIX)));
    const before = this.generation;
    for (let k = 0; k < this.slots.length; k++) {
      const s = this.slots[k];
      if (s && !names.has(s.name)) {
        this.slots[k] = null;
        this.generation++;
      }
    }
    // a segment went away: its blobs leave the maps (rebuilt from what is left)
    if (this.generation !== before) {
      this.byOid = new Map();
      this.byBlob = new Map();
      this.slots.forEach((s, k) => s && this.enter(s, k));
    }
    const loaded = new Set(this.slots.filter((s) => s !== null).map((s) => s!.name));
    for (const name of [...names].sort()) {
      if (loaded.has(name)) continue;
      const s = this.load(name);
      if (!s) continue;
      this.slots.push(s);
      this.enter(s, this.slots.length - 1);
      this.generation++;
    }
  }

  private enter(s: Loaded, k: number): void {
    for (let o = 0; o < s.segment.blobs; o++) {
      const handle = k * SLOT + o;
      const oid = s.segment.gitOidHex(o);
      if (oid !== "" && !this.byOid.has(oid)) this.byOid.set(oid, handle);
      const blob = `sha256:${s.segment.sha256Hex(o)}`;
      if (!this.byBlob.has(blob)) this.byBlob.set(blob, handle);
    }
  }

  private load(name: string): Loaded | null {
    const path = join(this.dir, name);
    try {
      if (!this.written.has(name)) verifyFile(path);
      return { name, segment: new Segment(Bun.mmap(path, { shared: false })) };
    } catch (err) {
      if (err instanceof CorruptSegment) rmSync(path, { force: true });
      return null;
    }
  }

  private get segments(): Loaded[] {
    return this.slots.filter((s): s is Loaded => s !== null);
  }

  /** Blobs indexed (text or binary). */
  get blobs(): number {
    return this.byBlob.size;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  get diskBytes(): number {
    return this.segments.reduce((n, s) => n + s.segment.bytes.length, 0);
  }

  /** The handle of the blob with this git blob id, or -1. */
  handleOfOid(oid: string): number {
    return this.byOid.get(oid) ?? -1;
  }

  /** The handle of the blob with this id (`sha256:` and the hex), or -1. */
  handleOfBlob(blob: string): number {
    return this.byBlob.get(blob) ?? -1;
  }

  hasOid(oid: string): boolean {
    return this.byOid.has(oid);
  }

  sha256Of(handle: number): string {
    return this.slots[Math.floor(handle / SLOT)]!.segment.sha256Hex(handle % SLOT);
  }

  /** Every indexed blob's git id (hex), segment by segment. */
  *gitOids(): Generator<{ oid: string; segment: string }> {
    for (const s of this.segments) for (let o = 0; o < s.segment.blobs; o++) yield { oid: s.segment.gitOidHex(o), segment: s.name };
  }

  /** The blobs that may hold a match of `query`: a bitset per segment, ANDed, ORed as the query says. */
  select(query: TrigramQuery): TrigramSelection {
    const bits = this.slots.map((s) => (s ? evaluate(s.segment, query) : undefined));
    return new TrigramSelection(this, bits);
  }

  /** Blobs of the segment in slot `k` (0 for an empty slot). */
  blobsInSlot(k: number): number {
    return this.slots[k]?.segment.blobs ?? 0;
  }

  binaryAt(handle: number): boolean {
    return this.slots[Math.floor(handle / SLOT)]!.segment.binary(handle % SLOT);
  }

  /**
   * Adds a segment (written to a temp file, then renamed into place) and loads it. Its name is its trailer: the
   * SHA-256 the builder took of the bytes before it, so naming it hashes nothing again.
   */
  add(stateDir: string, bytes: Uint8Array): string {
    mkdirSync(this.dir, { recursive: true });
    const name = Buffer.from(bytes.buffer, bytes.byteOffset + bytes.length - TRAILER, TRAILER).toString("hex") + SUFFIX;
    const path = join(this.dir, name);
    // not flushed: a segment is verified when loaded by another process, and a lost one is indexed again
    if (!existsSync(path)) {
      writeFileUnflushed(stateDir, path, bytes);
      // these bytes are the file: loading it need not read it back to check it (3 MB hashed a segment)
      this.written.add(name);
    }
    this.refresh();
    this.written.delete(name);
    return name;
  }

  /** Removes segments by name (they are indexed again when wanted). */
  remove(names: Iterable<string>): void {
    for (const name of names) rmSync(join(this.dir, name), { force: true });
    this.refresh();
  }

  /** Names and sizes of the segments loaded. */
  list(): { name: string; blobs: number; bytes: number }[] {
    return this.segments.map((s) => ({ name: s.name, blobs: s.segment.blobs, bytes: s.segment.bytes.length }));
  }
}

/**
 * One query's answer per blob: read it, or it cannot match, or it is binary. Made once per query (and kept by
 * index-select.ts), asked once per file: the answers are laid out per segment, one byte per blob.
 */
export class TrigramSelection {
  private readonly verdicts: (Uint8Array | undefined)[];

  constructor(
    index: TrigramIndex,
    private readonly bits: (Uint32Array | undefined)[],
  ) {
    this.verdicts = bits.map((b, k) => {
      if (b === undefined) return undefined;
      const blobs = index.blobsInSlot(k);
      const out = new Uint8Array(blobs);
      for (let o = 0; o < blobs; o++) out[o] = index.binaryAt(k * SLOT + o) ? BINARY : (b[o >>> 5]! >>> (o & 31)) & 1 ? READ : NO_MATCH;
      return out;
    });
  }

  verdict(handle: number): Verdict {
    if (handle < 0) return READ;
    const v = this.verdicts[Math.floor(handle / SLOT)];
    return v === undefined ? READ : (v[handle % SLOT] as Verdict);
  }

  /** Blobs whose answer is "read it" among the indexed text blobs, for statistics. */
  get candidates(): number {
    let n = 0;
    for (const bits of this.bits) for (const w of bits ?? []) n += popcount(w);
    return n;
  }
}

function popcount(w: number): number {
  w -= (w >>> 1) & 0x55555555;
  w = (w & 0x33333333) + ((w >>> 2) & 0x33333333);
  return (((w + (w >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function evaluate(segment: Segment, query: TrigramQuery): Uint32Array {
  const words = (segment.blobs + 31) >>> 5;
  const result = new Uint32Array(words).fill(0xffffffff);
  const scratch = new Uint32Array(words);
  const alt = new Uint32Array(words);
  const clause = new Uint32Array(words);
  for (const alternatives of query) {
    clause.fill(0);
    for (const positions of alternatives) {
      alt.fill(0xffffffff);
      for (const variants of positions) {
        scratch.fill(0);
        for (const t of variants) segment.orPostings(t, scratch);
        for (let i = 0; i < words; i++) alt[i]! &= scratch[i]!;
      }
      for (let i = 0; i < words; i++) clause[i]! |= alt[i]!;
    }
    for (let i = 0; i < words; i++) result[i]! &= clause[i]!;
  }
  return result;
}

/** Checks a segment file's trailer by reading it (not through a mapping, so its pages do not count as ours). */
function verifyFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    const size = statSync(path).size;
    if (size < 64) throw new CorruptSegment("segment too short");
    const hasher = new Bun.CryptoHasher("sha256");
    const buf = Buffer.allocUnsafe(1 << 20);
    const trailer = Buffer.alloc(32);
    let at = 0;
    const body = size - 32;
    while (at < body) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, body - at), at);
      if (n <= 0) throw new CorruptSegment("segment cut short");
      hasher.update(buf.subarray(0, n));
      at += n;
    }
    if (readSync(fd, trailer, 0, 32, body) !== 32 || !hasher.digest().equals(trailer)) throw new CorruptSegment("segment hash does not match");
  } finally {
    closeSync(fd);
  }
}
