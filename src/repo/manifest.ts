import { compareUtf8 } from "../core/byte-order";
import { sha256Hex, type BlobId } from "../core/hash";
import type { Fingerprint } from "./fingerprint";
import { fingerprintJson } from "./fingerprint";
import { perPath } from "../core/per-path";

/** Spec 2.4 manifest entry; `mode` only for executables and symlinks (DESIGN decision 8). */
export interface ManifestEntry {
  path: string;
  blob: BlobId;
  mode?: "100755" | "120000";
}

export type SnapshotId = `sha256:${string}`;

export function toManifestEntry(e: { path: string; blob: BlobId; mode: string }): ManifestEntry {
  return e.mode === "100755" || e.mode === "120000" ? { path: e.path, blob: e.blob, mode: e.mode } : { path: e.path, blob: e.blob };
}

/**
 * The canonical manifest's text: keys in byte order are blob < mode < path,
 * which is what canonicalJson produces (a golden test holds the two equal).
 * Entries must already be sorted by path. The text of manifestBytes, its one
 * writer.
 */
export function manifestJson(entries: readonly ManifestSource[]): string {
  return new TextDecoder().decode(manifestBytes(entries));
}

/**
 * The canonical manifest's UTF-8 bytes (what a capture hashes for its id and
 * writes to its file), written into one buffer, without a join or an
 * encoding pass of the whole (a capture of 90,000 entries spent about 80 ms on
 * those). Printable ASCII paths are copied byte for byte, a run of entries
 * at a time (a write per piece of an entry cost more in a process that runs
 * this once, before the JIT has compiled it: 72 to 67 ms for 90,000 entries,
 * medians of five fresh processes); any other path is JSON-quoted and
 * encoded.
 */
export function manifestBytes(entries: readonly ManifestSource[]): Uint8Array {
  let out: Uint8Array = new Uint8Array(0);
  encodeManifest(entries, (bytes) => (out = bytes), Infinity);
  return out;
}

/**
 * manifestBytes in pieces: `emit` is handed each buffer once it holds `chunkBytes` or more (and the last one at
 * the end), and the encoding goes on in a new one, so the bytes can be written while the rest is encoded. The
 * buffers are never written to again.
 */
export function encodeManifest(entries: readonly ManifestSource[], emit: (bytes: Uint8Array) => void, chunkBytes: number): void {
  let size = 16;
  for (const e of entries) size += e.path.length + e.blob.length + ENTRY_FIXED;
  const encoder = new ManifestEncoder(emit, chunkBytes, size);
  for (const e of entries) encoder.add(e);
  encoder.end();
}

/**
 * The manifest's bytes as its entries come, in path order (a capture encodes each as soon as it and every entry
 * before it are known: SnapshotStore.manifestWriter), handed to `emit` as encodeManifest hands them.
 */
export class ManifestEncoder {
  private buf: Writer;
  private at: number;
  private readonly cap: number;
  /** entries written as one Latin-1 string, every RUN entries */
  private run = "";
  private inRun = 0;
  private count = 0;

  constructor(
    private readonly emit: (bytes: Uint8Array) => void,
    private readonly chunkBytes: number,
    /** the bytes expected, when known: a manifest no larger is written into one buffer */
    sizeHint = chunkBytes + CHUNK_SLACK,
  ) {
    this.cap = Math.max(16, Math.min(sizeHint, chunkBytes + CHUNK_SLACK));
    this.buf = Buffer.allocUnsafe(this.cap) as Writer;
    this.at = this.buf.latin1Write('{"entries":[', 0);
  }

  add(e: ManifestSource): void {
    const head = (this.count++ > 0 ? ',{"blob":"' : '{"blob":"') + e.blob + (e.mode === "100755" ? '","mode":"100755","path":' : e.mode === "120000" ? '","mode":"120000","path":' : '","path":');
    if (PLAIN_PATH.test(e.path)) {
      this.run += head + '"' + e.path + '"}';
      if (++this.inRun < RUN) return;
      this.write(null);
    } else {
      this.run += head;
      this.write(JSON.stringify(e.path));
    }
    if (this.at >= this.chunkBytes) {
      this.emit(this.buf.subarray(0, this.at));
      this.buf = Buffer.allocUnsafe(this.cap) as Writer;
      this.at = 0;
    }
  }

  end(): void {
    this.run += "]}";
    this.write(null);
    this.emit(this.buf.subarray(0, this.at));
  }

  /** The run, and after it the quoted path of an entry whose path JSON must escape. */
  private write(quoted: string | null): void {
    // a UTF-16 unit of the quoted path takes at most 3 bytes
    const need = this.run.length + (quoted === null ? 0 : 3 * quoted.length + 1);
    if (this.at + need > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + need)) as Writer;
      this.buf.copy(bigger, 0, 0, this.at);
      this.buf = bigger;
    }
    this.at += this.buf.latin1Write(this.run, this.at);
    this.run = "";
    this.inRun = 0;
    if (quoted !== null) {
      this.at += this.buf.utf8Write(quoted, this.at);
      this.buf[this.at++] = 0x7d; // }
    }
  }
}

perPath(ManifestEncoder.prototype.add);

/** Room a chunk's buffer has past `chunkBytes`: the run that crosses it fits without a copy. */
const CHUNK_SLACK = 64 * 1024;

/** Entries a Latin-1 write takes at once. */
const RUN = 256;

/** The runtime's Buffer writers that take no encoding argument (Bun's and Node's; not in @types/node): faster per call. */
type Writer = Buffer & { latin1Write(s: string, at: number): number; utf8Write(s: string, at: number): number };

/** An entry's bytes besides its path and blob id: `,{"blob":"`, `","mode":"100755","path":`, two quotes, `}`. */
const ENTRY_FIXED = 40;

/** A manifest entry, or anything carrying one's fields (a captured entry): the mode is written only when not 100644. */
type ManifestSource = { path: string; blob: BlobId; mode?: string };

/** A path JSON writes as it is, between quotes: printable ASCII without `"` and `\`. */
const PLAIN_PATH = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** What a snapshot's id hashes before its manifest (snapshotIdOf; a manifest written as it is encoded hashes it first). */
export function snapshotIdPrefix(fp: Fingerprint): string {
  return `${fingerprintJson(fp)}\n`;
}

/** `manifest` as its text, or as its UTF-8 bytes (a capture encodes it once, for the id and the file). */
export function snapshotIdOf(fp: Fingerprint, manifest: string | Uint8Array): SnapshotId {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(snapshotIdPrefix(fp));
  hasher.update(manifest);
  return `sha256:${hasher.digest("hex")}`;
}

export function sortEntries<T extends { path: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => compareUtf8(a.path, b.path));
}

export function manifestDigest(manifest: string): string {
  return sha256Hex(manifest);
}
