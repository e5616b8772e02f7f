import { type Dirent, readdirSync, rmSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { hexOfBlobId } from "../../core/hash";
import { LOOSE_GRACE_MS } from "../../repo/fs-blob-store";
import type { SnapshotId } from "../../repo/manifest";
import { FsHistoryStore } from "../history/fs-history-store";
import { listTasks } from "../task/task-store";
import type { Workspace } from "../workspace";

export interface GcArgs {
  /** Report what would be removed; remove nothing. */
  dry_run?: boolean;
  /** Spare loose blobs and scratch objects younger than this (default LOOSE_GRACE_MS); tests pass 0. */
  graceMs?: number;
  /**
   * Also remove stored snapshots not captured or handed out again for this long (ms), except those a task
   * started from; never one used within the grace. Without it no snapshot is removed.
   */
  snapshotsOlderThanMs?: number;
}

/** Files and their bytes. */
export interface Tally {
  files: number;
  bytes: number;
}

export interface GcResult {
  dry_run: boolean;
  /** What was removed (with dry_run: what would be). */
  removed: {
    /** Snapshots past the retention (snapshotsOlderThanMs): their manifest and metadata files. */
    snapshots: Tally;
    /** Bundles under .mcp/exports/: derived, written again by snapshot_export. */
    exports: Tally;
    /** Loose blobs no snapshot manifest and no history entry names, older than the grace. */
    blobs: Tally;
    /** Tree objects `git write-tree` left behind for index_oid, older than the grace. */
    scratch: Tally;
  };
  /** What stays. */
  kept: {
    snapshots: number;
    blobs: Tally;
    /** Unreferenced loose blobs spared because they are younger than the grace (a capture may be using them). */
    young_blobs: Tally;
    /** The private git object store (clean tracked files' blobs; packs hard-linked from the repository's own share their disk). */
    git_store: Tally;
    history: Tally;
  };
}

/**
 * `worksnap gc`: prunes `.mcp/` of what nothing needs. Removed: every export
 * bundle (snapshot_export writes one again on demand), every loose blob that
 * no stored snapshot's manifest and no edit history entry (hash_before,
 * hash_after) names, and `git write-tree`'s scratch objects; with
 * snapshotsOlderThanMs, the snapshots not used for that long (expired). Blobs and
 * scratch objects younger than the grace are spared: a capture in progress
 * writes blobs before its manifest is saved, and refreshes the mtime of an
 * older blob it relies on (repo/fs-blob-store.ts freshen). Otherwise the
 * snapshots, the edit history and the private git object store are never touched (the
 * store's blobs are found through a map that would have to shrink with it).
 */
export async function collectGarbage(ws: Workspace, args: GcArgs = {}): Promise<GcResult> {
  const dry = args.dry_run === true;
  const grace = args.graceMs ?? LOOSE_GRACE_MS;
  const cutoff = Date.now() - grace;
  const state = ws.repo.stateDir;
  const referenced = new Set<string>();
  const removedSnapshots = tally();
  const started = args.snapshotsOlderThanMs === undefined ? new Set<string>() : new Set(listTasks(ws).flatMap((t) => (t.snapshot.id ? [t.snapshot.id] : [])));
  const snapshots = ws.snapshots.list().filter((meta) => !expired(ws, meta.snapshot_id, args, cutoff, started, removedSnapshots, dry));
  for (const meta of snapshots) for (const e of ws.snapshots.load(meta.snapshot_id).entries) referenced.add(hexOfBlobId(e.blob));
  const history = new FsHistoryStore(state);
  for (const conv of await history.listConversations()) {
    for (const entry of await history.readLog(conv)) {
      if (entry.hash_before) referenced.add(entry.hash_before);
      if (entry.hash_after) referenced.add(entry.hash_after);
    }
  }
  const result: GcResult = {
    dry_run: dry,
    removed: { snapshots: removedSnapshots, exports: tally(), blobs: tally(), scratch: tally() },
    kept: { snapshots: snapshots.length, blobs: tally(), young_blobs: tally(), git_store: sizeOf(join(state, "git", "store")), history: sizeOf(join(state, "edit_history")) },
  };
  for (const f of filesUnder(join(state, "exports"))) remove(f, result.removed.exports, dry);
  const loose = join(state, "blobs", "sha256");
  for (const f of filesUnder(loose)) {
    const hex = f.path.slice(loose.length + 1).replace("/", "");
    if (referenced.has(hex)) add(result.kept.blobs, f);
    else if (f.mtimeMs > cutoff) add(result.kept.young_blobs, f);
    else remove(f, result.removed.blobs, dry);
  }
  for (const f of filesUnder(join(state, "git", "scratch-objects"))) {
    if (f.mtimeMs <= cutoff) remove(f, result.removed.scratch, dry);
  }
  if (!dry) for (const dir of [loose, join(state, "git", "scratch-objects")]) pruneEmptyDirs(dir);
  return result;
}

/**
 * Whether a stored snapshot is past the retention and was removed (with dry_run: would be). A snapshot a task
 * started from stays (its task's diff and restore read it); one captured or handed out again since the cutoff,
 * or within the grace, stays. The last use is checked again just before the removal.
 */
function expired(ws: Workspace, id: SnapshotId, args: GcArgs, graceCutoff: number, started: Set<string>, removed: Tally, dry: boolean): boolean {
  if (args.snapshotsOlderThanMs === undefined) return false;
  const cutoff = Math.min(graceCutoff, Date.now() - args.snapshotsOlderThanMs);
  const used = ws.snapshots.lastUsed(id);
  if (used === null || used > cutoff || started.has(id)) return false;
  const files = ws.snapshots.files(id).map((f) => statSync(f, { throwIfNoEntry: false }));
  if (!dry) {
    if ((ws.snapshots.lastUsed(id) ?? 0) > cutoff) return false;
    ws.snapshots.remove(id);
  }
  for (const st of files) if (st) add(removed, { path: "", bytes: st.size, mtimeMs: st.mtimeMs });
  return true;
}

interface FileInfo {
  path: string;
  bytes: number;
  mtimeMs: number;
}

const tally = (): Tally => ({ files: 0, bytes: 0 });

function add(t: Tally, f: FileInfo): void {
  t.files++;
  t.bytes += f.bytes;
}

function remove(f: FileInfo, t: Tally, dry: boolean): void {
  if (!dry) rmSync(f.path, { force: true });
  add(t, f);
}

/** The entries of `dir`; none when it does not exist. */
function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Every regular file below `dir` (none when it does not exist). */
function* filesUnder(dir: string): Generator<FileInfo> {
  for (const d of entriesOf(dir)) {
    const p = join(dir, d.name);
    if (d.isDirectory()) yield* filesUnder(p);
    else if (d.isFile()) {
      const st = statSync(p, { throwIfNoEntry: false });
      if (st) yield { path: p, bytes: st.size, mtimeMs: st.mtimeMs };
    }
  }
}

function sizeOf(dir: string): Tally {
  const t = tally();
  for (const f of filesUnder(dir)) add(t, f);
  return t;
}

/** Removes the empty fan-out directories below `dir` (not `dir` itself). */
function pruneEmptyDirs(dir: string): void {
  for (const d of entriesOf(dir)) {
    if (!d.isDirectory()) continue;
    const p = join(dir, d.name);
    pruneEmptyDirs(p);
    try {
      rmdirSync(p);
    } catch {
      // not empty
    }
  }
}
