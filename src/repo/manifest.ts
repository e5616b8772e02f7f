import { compareUtf8 } from "../core/byte-order";
import { sha256Hex, type BlobId } from "../core/hash";
import type { Fingerprint } from "./fingerprint";
import { fingerprintJson } from "./fingerprint";

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
 * Canonical manifest bytes, written directly: keys in byte order are
 * blob < mode < path, which is what canonicalJson produces (a golden test
 * holds the two equal). Entries must already be sorted by path.
 */
export function manifestJson(entries: readonly ManifestSource[]): string {
  return manifestText(entries).text;
}

/**
 * The canonical manifest's UTF-8 bytes (what a capture hashes for its id and
 * writes to its file). A manifest whose paths are all printable ASCII is
 * ASCII throughout and is copied byte for byte instead of encoded.
 */
export function manifestBytes(entries: readonly ManifestSource[]): Uint8Array {
  const { text, ascii } = manifestText(entries);
  return ascii ? Buffer.from(text, "latin1") : new TextEncoder().encode(text);
}

/** A manifest entry, or anything carrying one's fields (a captured entry): the mode is written only when not 100644. */
type ManifestSource = { path: string; blob: BlobId; mode?: string };

/** A path JSON writes as it is, between quotes: printable ASCII without `"` and `\`. */
const PLAIN_PATH = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function manifestText(entries: readonly ManifestSource[]): { text: string; ascii: boolean } {
  const parts: string[] = new Array(entries.length);
  let ascii = true;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as ManifestSource;
    let path: string;
    if (PLAIN_PATH.test(e.path)) path = `"${e.path}"`;
    else {
      path = JSON.stringify(e.path);
      ascii = false;
    }
    parts[i] = e.mode === "100755" || e.mode === "120000" ? `{"blob":"${e.blob}","mode":"${e.mode}","path":${path}}` : `{"blob":"${e.blob}","path":${path}}`;
  }
  return { text: `{"entries":[${parts.join(",")}]}`, ascii };
}

/** `manifest` as its text, or as its UTF-8 bytes (a capture encodes it once, for the id and the file). */
export function snapshotIdOf(fp: Fingerprint, manifest: string | Uint8Array): SnapshotId {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(fingerprintJson(fp));
  hasher.update("\n");
  hasher.update(manifest);
  return `sha256:${hasher.digest("hex")}`;
}

export function sortEntries<T extends { path: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => compareUtf8(a.path, b.path));
}

export function manifestDigest(manifest: string): string {
  return sha256Hex(manifest);
}
