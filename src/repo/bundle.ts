import { fingerprintJson, type Fingerprint } from "./fingerprint";
import type { SnapshotId } from "./manifest";

/**
 * The export bundle's layout: a deterministic tar (tar.ts) whose first entry
 * is `manifest.json` and whose other entries are the snapshot's files, in
 * manifest (byte) order, under `files/`. The prefix keeps a repository's own
 * root `manifest.json` from colliding with the bundle's, and keeps metadata
 * apart from the tree when the archive is unpacked.
 */
export const BUNDLE_MANIFEST = "manifest.json";
export const BUNDLE_FILES_PREFIX = "files/";

/**
 * Canonical JSON of {entries, fingerprint, snapshot_id}, built from the
 * canonical manifest bytes `{"entries":[...]}` (keys in byte order: entries <
 * fingerprint < snapshot_id), so the id can be recomputed from the bundle alone.
 */
export function bundleManifestJson(manifest: string, fingerprint: Fingerprint, snapshotId: SnapshotId): string {
  if (!manifest.startsWith(MANIFEST_HEAD) || !manifest.endsWith(MANIFEST_END)) throw new Error("not a canonical manifest");
  return manifest.slice(0, -1) + manifestTail(fingerprint, snapshotId);
}

/**
 * bundleManifestJson from the manifest's bytes, as two pieces to write one after the other: the manifest without
 * its closing brace (a view, not a copy) and the rest. A 100k-file manifest is 15 MB; encoding it again as text
 * cost an export 170 ms.
 */
export function bundleManifestPieces(manifest: Uint8Array, fingerprint: Fingerprint, snapshotId: SnapshotId): [Uint8Array, Uint8Array] {
  const head = new TextEncoder().encode(MANIFEST_HEAD);
  const ok = manifest.length >= head.length + 2 && head.every((b, i) => manifest[i] === b) && manifest[manifest.length - 2] === 0x5d && manifest[manifest.length - 1] === 0x7d;
  if (!ok) throw new Error("not a canonical manifest");
  return [manifest.subarray(0, manifest.length - 1), new TextEncoder().encode(manifestTail(fingerprint, snapshotId))];
}

const MANIFEST_HEAD = '{"entries":[';
const MANIFEST_END = "]}";

/** What the bundle's manifest.json adds after the manifest's entries, its closing brace included. */
function manifestTail(fingerprint: Fingerprint, snapshotId: SnapshotId): string {
  return `,"fingerprint":${fingerprintJson(fingerprint)},"snapshot_id":${JSON.stringify(snapshotId)}}`;
}

export function bundleEntryName(path: string): string {
  return BUNDLE_FILES_PREFIX + path;
}
