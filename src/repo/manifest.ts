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
export function manifestJson(entries: ManifestEntry[]): string {
  const parts: string[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as ManifestEntry;
    parts[i] = e.mode
      ? `{"blob":"${e.blob}","mode":"${e.mode}","path":${JSON.stringify(e.path)}}`
      : `{"blob":"${e.blob}","path":${JSON.stringify(e.path)}}`;
  }
  return `{"entries":[${parts.join(",")}]}`;
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
