import { ensureStateDir, cleanStaleTemps } from "../repo/state-dir";
import { openRoot, type RepoRoot } from "../repo/root";
import { RepoBlobStore } from "../repo/repo-blob-store";
import { SnapshotStore } from "../repo/snapshot-store";
import { TmpReserve } from "../repo/tmp-reserve";
import { keepIndexListings } from "../repo/tree-scan";
import type { EditRecorder } from "./write/edit-recorder";
import { FsHistoryStore } from "./history/fs-history-store";
import { type CompletedWrite, completeInterruptedWrites } from "./history/interrupted";
import { HistoryRecorder } from "./history/recorder";
import { join } from "node:path";
import { blobIdFromHex } from "../core/hash";
import { LEASE_LIMITS, LeaseStore } from "./live/leases";

/** Everything an operation needs about one repository root. */
export interface Workspace {
  repo: RepoRoot;
  blobs: RepoBlobStore;
  snapshots: SnapshotStore;
  leases: LeaseStore;
  /** Records every work-tree write for review (edit history); null records nothing. */
  recorder: EditRecorder | null;
  /** A server's spare files and removals done between calls (tmp-reserve.ts); null for one-shot commands. */
  reserve: TmpReserve | null;
  /**
   * Runs each time this process takes the work-tree lock, before the locked
   * work: completes recorded writes a crashed process left (history/interrupted.ts).
   */
  onLocked: (() => Promise<void>) | null;
  /** What onLocked completed since the workspace was opened (`history recover` reports it). */
  completedWrites: CompletedWrite[];
}

export interface WorkspaceOptions {
  /**
   * A server that answers many calls: what is worth keeping between calls is
   * kept (index listings), and a write's file-system work is done between
   * calls where it can be (spare files, removals: tmp-reserve.ts).
   */
  longLived?: boolean;
}

export function openWorkspace(dir: string, opts: WorkspaceOptions = {}): Workspace {
  const repo = openRoot(dir);
  if (opts.longLived) keepIndexListings(true);
  ensureStateDir(repo.stateDir);
  if (repo.lockStateDir !== repo.stateDir) shareTopLock(repo);
  cleanStaleTemps(repo.stateDir);
  const blobs = new RepoBlobStore(repo.stateDir);
  const history = new FsHistoryStore(repo.stateDir);
  const ws: Workspace = {
    repo,
    blobs,
    snapshots: new SnapshotStore(repo.stateDir),
    leases: new LeaseStore(LEASE_LIMITS, indexBlobResolver(blobs)),
    recorder: new HistoryRecorder(history),
    reserve: opts.longLived ? new TmpReserve(repo.root) : null,
    onLocked: null,
    completedWrites: [],
  };
  ws.onLocked = async () => {
    ws.completedWrites.push(...(await completeInterruptedWrites(ws, history)));
  };
  return ws;
}

/** The sha256 blob id of a git blob the store knows, for leases that record clean files by their index blob. */
function indexBlobResolver(blobs: RepoBlobStore): (gitOid: string) => string | undefined {
  return (gitOid) => {
    const known = blobs.gitMap.get(gitOid);
    return known ? blobIdFromHex(known.sha256) : undefined;
  };
}

/**
 * The same workspace with leases of its own: each MCP session of a server
 * issues and validates its own leases (another session's lease id is unknown
 * to it), while the stores, the lock, the history and the completion of
 * interrupted writes are shared.
 */
export function withOwnLeases(ws: Workspace): Workspace {
  return { ...ws, leases: new LeaseStore(LEASE_LIMITS, indexBlobResolver(ws.blobs)) };
}

/**
 * A root below the top of a git work tree takes the top's work-tree lock
 * (RepoRoot.lockStateDir). A top whose `.mcp/` cannot be made (a read-only
 * top) keeps no other worksnap state either, so no other root can write
 * under that lock: the root's own lock is used then.
 */
function shareTopLock(repo: RepoRoot): void {
  try {
    ensureStateDir(repo.lockStateDir);
  } catch (err) {
    if (!["EACCES", "EPERM", "EROFS"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
    repo.lockStateDir = repo.stateDir;
  }
}

export function closeWorkspace(ws: Workspace): void {
  ws.reserve?.close();
  ws.blobs.close();
}
