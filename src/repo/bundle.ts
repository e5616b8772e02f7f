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
  if (!manifest.startsWith('{"entries":[') || !manifest.endsWith("]}")) throw new Error("not a canonical manifest");
  return `${manifest.slice(0, -1)},"fingerprint":${fingerprintJson(fingerprint)},"snapshot_id":${JSON.stringify(snapshotId)}}`;
}

export function bundleEntryName(path: string): string {
  return BUNDLE_FILES_PREFIX + path;
}
