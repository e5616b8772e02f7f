import type { CreateSnapshotResult } from "../../ops/snapshot/create";
import type { ExportResult } from "../../ops/snapshot/export";
import type { InfoResult } from "../../ops/snapshot/info";
import type { ManifestStats } from "../../repo/snapshot-store";
import { count, fingerprintText, leaseTag, line, lines, pathText, short, size, unreadableLine } from "./text";

/**
 * `snapshot 1a2b3c4d5e6f · 120 files, 1.2 MB`: the id prefix every tool takes
 * back, and what it holds; a capture that skipped unreadable files says so.
 */
function snapshotLine(id: string, stats: ManifestStats): string {
  return line(`snapshot ${short(id)}`, `${count(stats.files, "file")}, ${size(stats.bytes)}`, (stats.unreadable ?? 0) > 0 && `not a full capture: ${stats.unreadable} unreadable skipped`);
}

/** snapshot_create: the new id and the fingerprint it was taken at; skipped names only when there were any. */
export function renderCreate(out: CreateSnapshotResult): string {
  const s = out.skipped;
  const skipped = [
    s.non_utf8 > 0 && `${s.non_utf8} non-UTF-8 names`,
    s.submodules > 0 && count(s.submodules, "submodule"),
    s.vanished > 0 && `${s.vanished} vanished while read`,
  ].filter(Boolean);
  return lines(snapshotLine(out.snapshot_id, out.manifest_stats), fingerprintText(out.fingerprint), skipped.length > 0 && `skipped ${skipped.join(", ")}`, unreadableLine(out));
}

/** snapshot_info: id, size, creation time, fingerprint and the paths it was asked to capture. */
export function renderInfo(out: InfoResult): string {
  return lines(
    line(snapshotLine(out.snapshot_id, out.manifest_stats), `created ${out.created_at}`),
    fingerprintText(out.fingerprint),
    out.paths.length > 0 && `paths ${out.paths.map(pathText).join(" ")}`,
  );
}

/** snapshot_export: where the bundle is, its size and sha256 prefix, and the snapshot it holds. */
export function renderExport(out: ExportResult): string {
  return lines(
    line(`bundle ${pathText(out.path)}`, `${count(out.files, "file")}, ${size(out.bytes)}`, `sha256 ${short(`sha256:${out.sha256}`)}`),
    line(`snapshot ${short(out.snapshot_id)}`, out.source_snapshot_id !== undefined && `narrowed from ${short(out.source_snapshot_id)}`, leaseTag(out)),
    unreadableLine(out),
  );
}
