import { asWorksnapError, permissionDenied } from "../../core/errors";
import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import { type Fingerprint, type GitState, readGitState } from "../../repo/fingerprint";
import { type ManifestEntry, type SnapshotId, manifestJson, snapshotIdOf } from "../../repo/manifest";
import { diffEntries } from "../snapshot/changes";
import { createSnapshot } from "../snapshot/create";
import { sideEntries } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { statusPaths } from "./git-status";
import { type TaskBaseRecord, type TaskSnapshot, listTasks } from "./task-store";

/** Above this many paths, a capture names the whole tree instead (one pathspec per path would not fit a command line). */
const MAX_SCOPE_PATHS = 2000;

export interface StartCapture {
  snapshot: TaskSnapshot;
  base: TaskBaseRecord;
  fingerprint: Fingerprint | null;
  named: { held: string[]; missing: string[] };
  /** Files changed before the task: from git status, or against the previous task snapshot outside git. */
  dirty: { count: number; paths: string[]; against: "git" | "previous-snapshot" | "none" };
}

interface CaptureArgs {
  named: RepoPath[];
  /** The git state, when the caller read it already. */
  state?: GitState;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The snapshot a task starts with. In a git work tree it holds the named
 * files plus every file git status names (changed, staged, untracked); the
 * rest of the tree at the start is HEAD, which the task remembers, so the
 * snapshot and HEAD together are the whole starting state. Outside git there
 * is no committed state to fall back on: the snapshot holds the whole tree,
 * and "dirty" counts the files changed since the previous task's snapshot.
 *
 * The status is read once and handed to the capture (no second `git status`).
 * A capture that fails for a reason of the tree (an unreadable file, one too
 * large) does not stop the task: the snapshot is "failed" and the answer says
 * why. status "reused" means the same tree was captured before (content
 * addressing gives the same id), "created" a new snapshot.
 */
export async function captureStart(ws: Workspace, args: CaptureArgs): Promise<StartCapture> {
  const startedAt = Date.now();
  if (!ws.repo.gitDir) return capturePlain(ws, args, startedAt);
  const state = args.state ?? (await readGitState(ws.repo));
  const status = statusPaths(state.status, ws.repo.gitPrefix);
  const dirtyScope = status.present as RepoPath[];
  const scope = unique([...args.named, ...dirtyScope]);
  const base: TaskBaseRecord = { git: true, head_oid: state.fingerprint.head_oid, absent: status.absent };
  let entries: ManifestEntry[];
  let snapshot: TaskSnapshot;
  try {
    if (scope.length === 0) {
      const id = await saveEmptySnapshot(ws, state.fingerprint);
      entries = [];
      snapshot = { id, status: reusedOrCreated(ws.snapshots.loadMeta(id.slice(7)).created_at, startedAt), files: 0 };
    } else {
      const wide = scope.length > MAX_SCOPE_PATHS;
      const res = await createSnapshot(ws, {
        paths: wide ? [ROOT] : scope,
        allowMissing: true,
        gitState: state,
        signal: args.signal,
        onProgress: args.onProgress,
      });
      refuseIncomplete(res);
      entries = ws.snapshots.load(res.snapshot_id).entries;
      snapshot = { id: res.snapshot_id, status: reusedOrCreated(res.created_at, startedAt), files: res.manifest_stats.files };
    }
  } catch (err) {
    return failed(err, base, state.fingerprint, args.named, status.absent.length + status.present.length);
  }
  const paths = entries.map((e) => e.path);
  const dirtySet = new Set(status.present);
  const dirtyFiles = paths.filter((p) => dirtySet.has(p) || status.untrackedDirs.some((d) => isWithin(p, d as RepoPath)));
  const dirtyPaths = [...dirtyFiles, ...status.absent];
  return {
    snapshot,
    base,
    fingerprint: state.fingerprint,
    named: heldAndMissing(args.named, paths),
    dirty: { count: dirtyPaths.length, paths: dirtyPaths, against: "git" },
  };
}

async function capturePlain(ws: Workspace, args: CaptureArgs, startedAt: number): Promise<StartCapture> {
  const base: TaskBaseRecord = { git: false, head_oid: "", absent: [] };
  const previous = listTasks(ws).find((t) => !t.base.git && t.snapshot.id !== null && ws.snapshots.has(t.snapshot.id));
  let res: Awaited<ReturnType<typeof createSnapshot>>;
  try {
    res = await createSnapshot(ws, { paths: [ROOT], signal: args.signal, onProgress: args.onProgress });
    refuseIncomplete(res);
  } catch (err) {
    return failed(err, base, null, args.named, 0);
  }
  const entries = ws.snapshots.load(res.snapshot_id).entries;
  let dirty: StartCapture["dirty"] = { count: 0, paths: [], against: "none" };
  if (previous?.snapshot.id) {
    const before = sideEntries(ws.snapshots.load(previous.snapshot.id).entries, [ROOT]);
    const changed = diffEntries(before, sideEntries(entries, [ROOT])).map((p) => p.change.path);
    dirty = { count: changed.length, paths: changed, against: "previous-snapshot" };
  }
  return {
    snapshot: { id: res.snapshot_id, status: reusedOrCreated(res.created_at, startedAt), files: res.manifest_stats.files },
    base,
    fingerprint: res.fingerprint,
    named: heldAndMissing(args.named, entries.map((e) => e.path)),
    dirty,
  };
}

/**
 * A capture that had to skip files it cannot read (permission denied, FIFOs)
 * is not a starting state a restore may rely on: a restore would take a
 * skipped file for one the task created. The task starts unprotected and
 * says which files, as when the capture fails outright.
 */
function refuseIncomplete(res: { unreadable?: string[]; unreadable_total?: number }): void {
  const names = res.unreadable ?? [];
  if (names.length === 0) return;
  const more = (res.unreadable_total ?? names.length) - names.length;
  throw permissionDenied(`cannot read ${names.slice(0, 5).join(", ")}${more + names.length > 5 ? ` and ${more + names.length - 5} more` : ""}: permission denied or not a regular file`, {
    path: names[0],
    unreadable: names,
  });
}

function reusedOrCreated(createdAt: string, startedAt: number): "created" | "reused" {
  // A new snapshot is stamped during this call; an older stamp means the store had this exact tree already.
  return Date.parse(createdAt) < startedAt ? "reused" : "created";
}

function failed(err: unknown, base: TaskBaseRecord, fingerprint: Fingerprint | null, named: RepoPath[], dirty: number): StartCapture {
  const e = asWorksnapError(err);
  // A bug or a cancelled request is an error; only a tree the capture cannot read starts the task unprotected.
  if (e.code === "INTERNAL" || e.code === "INVALID_ARGUMENT") throw e;
  return {
    snapshot: { id: null, status: "failed", files: 0, failure: `${e.code}: ${e.message}` },
    base,
    fingerprint,
    named: { held: [], missing: [...named] },
    dirty: { count: dirty, paths: [], against: base.git ? "git" : "none" },
  };
}

/** Which named paths (files or directories) the snapshot holds. */
function heldAndMissing(named: RepoPath[], sortedPaths: string[]): { held: string[]; missing: string[] } {
  const held: string[] = [];
  const missing: string[] = [];
  for (const n of named) (sortedPaths.some((p) => isWithin(p, n)) ? held : missing).push(n);
  return { held, missing };
}

/** A snapshot of no files at this state: what a task that names nothing in a clean tree starts from. */
export async function saveEmptySnapshot(ws: Workspace, fingerprint: Fingerprint): Promise<SnapshotId> {
  const manifest = manifestJson([]);
  const id = snapshotIdOf(fingerprint, manifest);
  await ws.snapshots.save({ snapshot_id: id, fingerprint, created_at: new Date().toISOString(), manifest_stats: { files: 0, bytes: 0 }, paths: [] }, manifest);
  return id;
}

function unique(paths: RepoPath[]): RepoPath[] {
  return [...new Set(paths)];
}
