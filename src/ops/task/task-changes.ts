import { compareUtf8 } from "../../core/byte-order";
import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import { type CaptureResult, captureEntries } from "../../repo/capture";
import { indexIdentity } from "../../repo/index-identity";
import { join } from "node:path";
import { type Fingerprint, type GitState, readGitState } from "../../repo/fingerprint";
import { absentSkipWorktree } from "../../repo/sparse-entries";
import type { TreeEntry } from "../../repo/tree-scan";
import { INDEX_READS, indexChanging, indexSettle, liveTreeOf, readLiveInputs, readLiveTree } from "../live/live-tree";
import { type ChangePair, diffEntries } from "../snapshot/changes";
import { type SideEntry, sideEntries } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { statusPaths } from "./git-status";
import { commitEntries, pathsChangedBetween } from "./head-tree";
import type { TaskRecord } from "./task-store";

/** Above this many candidate paths the live listing covers the whole tree and is filtered. */
const MAX_SCOPE_PATHS = 2000;

export interface TaskState {
  /** Every file that differs from the task's start, sorted by path (no rename detection). */
  changes: ChangePair[];
  /** The live fingerprint the comparison was made at. */
  fingerprint: Fingerprint;
  /** Files changed now: git status (uncommitted), or against the task snapshot outside git. */
  dirtyNow: number;
}

export interface TaskStateOptions {
  /** The git state, when the caller read it already (one `git status` for a whole check). */
  state?: GitState;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /**
   * The whole work tree as a snapshot of the same git state captured it, when
   * the caller makes one anyway (a check that runs project commands): the
   * changes are read from it instead of capturing the candidates again.
   */
  live?: Promise<SideEntry[]>;
}

/**
 * What changed since a task started. The starting state is the task's
 * snapshot laid over HEAD as it was at the start, minus the paths git
 * reported deleted then (task-snapshot.ts); outside git, the snapshot alone.
 *
 * In a git work tree only candidates are compared: paths git status names
 * now, paths the snapshot holds, paths absent at the start, named paths that
 * did not exist, and paths that differ between the starting HEAD and HEAD now
 * (commits made during the task), but none a sparse checkout leaves out of
 * the work tree now. Every other path is clean now and was clean then at the
 * same commit, so it cannot differ. Equality is blob equality (sha256 of the
 * bytes) plus the mode.
 */
export async function taskState(ws: Workspace, task: TaskRecord, opts: TaskStateOptions = {}): Promise<TaskState> {
  const snapshotEntries = snapshotEntriesOf(ws, task);
  if (!task.base.git || !ws.repo.gitDir) {
    const live = await readLiveTree(ws, [ROOT]);
    const after = await capture(ws, live.entries, live.gitComparedAt, opts);
    const changes = diffEntries(snapshotEntries, after);
    return { changes, fingerprint: live.fingerprint, dirtyNow: changes.length };
  }
  for (let read = 1; ; read++) {
    // a read after the index changed reads the state again, and captures the candidates itself
    const first = read === 1;
    const state = (first ? opts.state : undefined) ?? (await readGitState(ws.repo));
    const answer = await gitTaskState(ws, task, snapshotEntries, state, first ? opts : { ...opts, live: undefined });
    if (answer !== null) return answer;
    if (read >= INDEX_READS) throw indexChanging(read);
    await indexSettle(read);
  }
}

/**
 * taskState in a git work tree, from `state`; null when the index was replaced after the state's status began (the
 * status and the listing the candidates were read from may be of two indexes: readLiveTree), with nothing learnt.
 */
async function gitTaskState(ws: Workspace, task: TaskRecord, snapshotEntries: SideEntry[], state: GitState, opts: TaskStateOptions): Promise<TaskState | null> {
  const status = statusPaths(state.status, ws.repo.gitPrefix);
  const moved = await pathsChangedBetween(ws, task.base.head_oid, state.fingerprint.head_oid);
  const candidateFiles = new Set<string>([...status.present, ...status.absent, ...snapshotEntries.map((e) => e.path), ...task.base.absent, ...moved]);
  // Files a sparse checkout leaves out of the work tree now are no change of the task's, whatever HEAD did to them
  // meanwhile (a pull brings thousands): compared, they would read as deleted, and a restore would write them out
  for (const e of await absentSkipWorktree(ws.repo, [ROOT])) candidateFiles.delete(e.path);
  const candidateDirs = [...status.untrackedDirs, ...task.named.held, ...task.named.missing];
  for (const p of task.named.missing) candidateFiles.add(p);
  const scope = candidateFiles.size + candidateDirs.length > MAX_SCOPE_PATHS ? [ROOT] : ([...candidateFiles, ...candidateDirs] as RepoPath[]);
  const covered = (p: string) => candidateFiles.has(p) || candidateDirs.some((d) => isWithin(p, d as RepoPath));
  if (scope.length === 0) return { changes: [], fingerprint: state.fingerprint, dirtyNow: 0 };
  const captured = opts.live ? { entries: (await opts.live).filter((e) => covered(e.path)), learnt: [] } : await captureCandidates(ws, scope, state, covered, opts);
  if (indexIdentity(join(ws.repo.gitDir as string, "index")) !== state.index) return null;
  ws.blobs.gitMap.add(captured.learnt);
  const after = captured.entries;

  // The starting state of every path that may differ.
  const wanted = [...new Set<string>([...after.map((e) => e.path), ...candidateFiles])];
  const before = [...(await baseEntries(ws, task, wanted)).values()].sort((a, b) => compareUtf8(a.path, b.path));
  const presentNow = new Set(status.present);
  const dirtyNow = after.filter((e) => presentNow.has(e.path) || status.untrackedDirs.some((d) => isWithin(e.path, d as RepoPath))).length + status.absent.length;
  return { changes: diffEntries(before, after), fingerprint: state.fingerprint, dirtyNow };
}

/** The candidates' entries, and the blobs learnt, which the caller enters in the blob map once it knows the index held still. */
async function captureCandidates(ws: Workspace, scope: RepoPath[], state: GitState, covered: (path: string) => boolean, opts: TaskStateOptions): Promise<{ entries: SideEntry[]; learnt: CaptureResult["learnt"] }> {
  const inputs = await readLiveInputs(ws, scope, { state });
  const live = await liveTreeOf(inputs);
  const captured = await captureEntries(ws.repo, ws.blobs, live.entries.filter((e) => covered(e.path)), { signal: opts.signal, onProgress: opts.onProgress, gitComparedAt: live.gitComparedAt, learntByCaller: true });
  return { entries: captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode })), learnt: captured.learnt };
}

async function capture(ws: Workspace, entries: TreeEntry[], gitComparedAt: number | undefined, opts: TaskStateOptions): Promise<SideEntry[]> {
  const captured = await captureEntries(ws.repo, ws.blobs, entries, { signal: opts.signal, onProgress: opts.onProgress, gitComparedAt });
  return captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode }));
}

/** The task's starting state of the given file paths (absent paths are left out). */
export async function baseEntries(ws: Workspace, task: TaskRecord, paths: readonly string[]): Promise<Map<string, SideEntry>> {
  const held = new Map(snapshotEntriesOf(ws, task).map((e) => [e.path, e]));
  const out = new Map<string, SideEntry>();
  if (!task.base.git) {
    for (const p of paths) if (held.has(p)) out.set(p, held.get(p) as SideEntry);
    return out;
  }
  const absentAtStart = new Set(task.base.absent);
  const fromHead: string[] = [];
  for (const p of paths) {
    const s = held.get(p);
    if (s) out.set(p, s);
    else if (!absentAtStart.has(p) && !task.named.missing.some((m) => isWithin(p, m as RepoPath))) fromHead.push(p);
  }
  for (const [p, e] of await commitEntries(ws, task.base.head_oid, fromHead.sort(compareUtf8))) out.set(p, e);
  return out;
}

/** The files the task's snapshot holds (none when the capture failed). */
export function snapshotEntriesOf(ws: Workspace, task: TaskRecord): SideEntry[] {
  return task.snapshot.id && ws.snapshots.has(task.snapshot.id) ? sideEntries(ws.snapshots.load(task.snapshot.id).entries, [ROOT]) : [];
}
