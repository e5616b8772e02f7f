/**
 * A path of a stored snapshot as what it is: a file (its bytes) or a
 * directory (its children, as snapshot_list gives them). Unlike
 * snapshot_list's snapshot mode, a path the snapshot does not hold is
 * NOT_FOUND: whoever names a file by address (an MCP resource) wants to know.
 */
import { notFound, tooLarge } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import { isWithin, parseRepoPath, ROOT } from "../../core/repo-path";
import type { SnapshotId } from "../../repo/manifest";
import type { SnapshotMeta } from "../../repo/snapshot-store";
import type { Workspace } from "../workspace";
import { listEntries, type ListEntry } from "./list";

export type SnapshotNode =
  | { kind: "file"; snapshot_id: SnapshotId; path: string; blob: BlobId; mode: "100644" | "100755" | "120000"; bytes: Uint8Array }
  | { kind: "dir"; snapshot: SnapshotMeta; path: string; entries: ListEntry[]; total: number; truncated: boolean };

/** Largest file read whole this way (more goes through snapshot_file's line ranges). */
export const NODE_MAX_BYTES = 8 * 1024 * 1024;
const DIR_LIMIT = 2_000;

export async function readSnapshotNode(ws: Workspace, ref: string, rawPath: string): Promise<SnapshotNode> {
  const snapshotId = ws.snapshots.resolve(ref);
  const path = parseRepoPath(rawPath, "path");
  const snap = ws.snapshots.load(snapshotId);
  const entry = snap.entries.find((e) => e.path === path);
  if (entry) {
    const size = (await ws.blobs.size(entry.blob)) ?? 0;
    if (size > NODE_MAX_BYTES) {
      throw tooLarge(`${path} is ${size} bytes; read it in parts with snapshot_file (start_line/end_line)`, { path, size, limit: NODE_MAX_BYTES });
    }
    return { kind: "file", snapshot_id: snapshotId, path, blob: entry.blob, mode: entry.mode ?? "100644", bytes: await ws.blobs.read(entry.blob) };
  }
  if (path !== ROOT && !snap.entries.some((e) => isWithin(e.path, path))) throw notFound(`${path} is not in snapshot ${snapshotId}`, { path, snapshot_id: snapshotId });
  const list = await listEntries(ws, { mode: "snapshot", snapshot_id: snapshotId, path, limit: DIR_LIMIT });
  return { kind: "dir", snapshot: snap.meta, path, entries: list.entries, total: list.total, truncated: list.truncated };
}
