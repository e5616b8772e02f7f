import { ensureStateDir, cleanStaleTemps } from "../repo/state-dir";
import { openRoot, type RepoRoot } from "../repo/root";
import { RepoBlobStore } from "../repo/repo-blob-store";
import { SnapshotStore } from "../repo/snapshot-store";
import { RESERVE_START, TmpReserve } from "../repo/tmp-reserve";
import { keepIndexListings } from "../repo/tree-scan";
import { watchStatuses } from "../repo/status-index";
import type { EditRecorder } from "./write/edit-recorder";
import { FsHistoryStore } from "./history/fs-history-store";
import { type CompletedWrite, completeInterruptedWrites } from "./history/interrupted";
import { HistoryRecorder } from "./history/recorder";
import { blobIdFromHex } from "../core/hash";
import { LEASE_LIMITS, LeaseStore } from "./live/leases";
import { TrigramIndex } from "../repo/trigram-index/store";
import { DEFAULT_DISK_BUDGET, DEFAULT_MEMORY_BUDGET, TrigramIndexer } from "../repo/trigram-index/indexer";

/** Everything an operation needs about one repository root. */
export interface Workspace {
  repo: RepoRoot;
  blobs: RepoBlobStore;
  snapshots: SnapshotStore;
  leases: LeaseStore;
  /** Records every work-tree write for review (edit history); null records nothing. */
  recorder: EditRecorder | null;
  /**
   * Spare files to stage writes in, and removals of what writes replaced
   * (tmp-reserve.ts): a server's are made and done between calls; a one-shot
   * command's spares come from a pool an earlier process left, and its
   * removals are done before each call returns (or handed off: WorkspaceOptions.handOff).
   * Null writes without spares and removes at once.
   */
  reserve: TmpReserve | null;
  /** The trigram index of blobs (`.mcp/index/`), which grep asks before reading; read by every workspace. */
  trigrams: TrigramIndex;
  /** What keeps the index up with the repository in the background: a server's only (null otherwise, or when off). */
  indexer: TrigramIndexer | null;
  /**
   * Runs each time this process takes the work-tree lock, before the locked
   * work: completes recorded writes a crashed process left (history/interrupted.ts).
   */
  onLocked: (() => Promise<void>) | null;
  /** What onLocked completed since the workspace was opened (`history recover` reports it). */
  completedWrites: CompletedWrite[];
  /** Stops the watch that tells a server's statuses what changed (repo/status-watch.ts); nothing otherwise. */
  stopWatch: () => void;
}

export interface WorkspaceOptions {
  /**
   * A server that answers many calls: what is worth keeping between calls is
   * kept (index listings), and a write's file-system work is done between
   * calls where it can be (spare files, removals: tmp-reserve.ts).
   */
  longLived?: boolean;
  /**
   * The trigram index a server builds in the background: bytes on disk at most (0 turns building off) and
   * bytes held while building. Defaults: DEFAULT_DISK_BUDGET, DEFAULT_MEMORY_BUDGET.
   */
  index?: { diskBudget?: number; memoryBudget?: number };
  /**
   * A one-shot command that hands the removal of what its writes replaced to
   * a step after its answer (TmpReserve.handOff; the CLI's apply): until then
   * those files wait in `.mcp/tmp`, and closeWorkspace removes them if no
   * hand-off took them.
   */
  handOff?: boolean;
}

export function openWorkspace(dir: string, opts: WorkspaceOptions = {}): Workspace {
  const repo = openRoot(dir);
  if (opts.longLived) keepIndexListings(true);
  ensureStateDir(repo.stateDir);
  if (repo.lockStateDir !== repo.stateDir) shareTopLock(repo);
  cleanStaleTemps(repo.stateDir);
  const blobs = new RepoBlobStore(repo.stateDir);
  const trigrams = new TrigramIndex(repo.stateDir);
  const diskBudget = opts.index?.diskBudget ?? DEFAULT_DISK_BUDGET;
  const build = { diskBudget, memoryBudget: opts.index?.memoryBudget ?? DEFAULT_MEMORY_BUDGET, background: true };
  const history = new FsHistoryStore(repo.stateDir);
  const ws: Workspace = {
    repo,
    blobs,
    snapshots: new SnapshotStore(repo.stateDir),
    leases: new LeaseStore(LEASE_LIMITS, indexBlobResolver(blobs)),
    recorder: new HistoryRecorder(history),
    reserve: new TmpReserve(repo.root, { background: opts.longLived === true, defer: opts.handOff === true }),
    trigrams,
    indexer: opts.longLived && diskBudget > 0 && repo.gitDir ? new TrigramIndexer(repo, trigrams, { ...build, known: (oid) => blobs.knownSha256(oid) }) : null,
    onLocked: null,
    completedWrites: [],
    stopWatch: opts.longLived ? watchStatuses(repo) : () => undefined,
  };
  ws.onLocked = async () => {
    const completed = await completeInterruptedWrites(ws, history);
    // a process died writing: what it left in .mcp/tmp and the work tree goes now, not at the next start
    if (completed.length > 0) cleanStaleTemps(repo.stateDir);
    ws.completedWrites.push(...completed);
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
 * A server starting: spare files for its first write are made now, in the
 * background, or taken from a pool an earlier process left (tmp-reserve.ts),
 * so the first write costs what later ones do.
 */
export function prepareForWrites(ws: Workspace): void {
  ws.reserve?.want(RESERVE_START);
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
  ws.stopWatch();
  ws.indexer?.close();
  ws.reserve?.close();
  ws.blobs.close();
}
