import type { Fingerprint } from "../../repo/fingerprint";
import type { SnapshotId } from "../../repo/manifest";
import type { ManifestStats } from "../../repo/snapshot-store";
import type { Workspace } from "../workspace";

export interface InfoResult {
  snapshot_id: SnapshotId;
  cache_hint: "immutable";
  fingerprint: Fingerprint;
  created_at: string;
  manifest_stats: ManifestStats;
  paths: string[];
}

/** snapshot_info: what a snapshot is; no lease context (spec 3.1). */
export function snapshotInfo(ws: Workspace, args: { snapshot_id: string }): InfoResult {
  const id = ws.snapshots.resolve(args.snapshot_id);
  const meta = ws.snapshots.loadMeta(id.slice(7));
  return {
    snapshot_id: id,
    cache_hint: "immutable",
    fingerprint: meta.fingerprint,
    created_at: meta.created_at,
    manifest_stats: meta.manifest_stats,
    paths: meta.paths,
  };
}

export interface SnapshotSummary {
  snapshot_id: SnapshotId;
  created_at: string;
  files: number;
  bytes: number;
  paths: string[];
}

/** Stored snapshots, newest first (ties by id, so the order is total). */
export function listSnapshots(ws: Workspace, limit = 50): { snapshots: SnapshotSummary[]; total: number } {
  const all = ws.snapshots
    .list()
    .map((m) => ({ snapshot_id: m.snapshot_id, created_at: m.created_at, files: m.manifest_stats.files, bytes: m.manifest_stats.bytes, paths: m.paths }))
    .sort((a, b) => (a.created_at === b.created_at ? (a.snapshot_id < b.snapshot_id ? -1 : 1) : a.created_at < b.created_at ? 1 : -1));
  return { snapshots: all.slice(0, limit), total: all.length };
}
