import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import { captureEntries } from "../../repo/capture";
import { liveTreeOf, readLiveInputs } from "../live/live-tree";
import { diffEntries } from "../snapshot/changes";
import { sideEntries } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { statusPaths } from "./git-status";
import { type LineStats, lineStats } from "./line-stats";
import { type MemoryMatch, matchMemory } from "./memory-match";
import { type RiskAssessment, assessRisk } from "./risk";
import { parseFiles } from "./start";
import { shortSnapshotId } from "./snapshot-ref";
import { type TaskState, taskState } from "./task-changes";
import { type TaskRecord, currentTask, listTasks } from "./task-store";
import { WorksnapError } from "../../core/errors";

export interface ContextArgs {
  /** The task this session started last (preferred as the current task). */
  preferred?: string;
  files?: string[];
  keywords?: string[];
  signal?: AbortSignal;
}

export interface ContextResult {
  /** null: no active task; the answer describes the repository alone. */
  task: TaskRecord | null;
  snap: string | null;
  risk: RiskAssessment;
  prot: number;
  dirty: number;
  learn: MemoryMatch[];
  state: TaskState | null;
  lines: LineStats | null;
}

/**
 * snap mode "context": the current task against its start (files changed,
 * lines, risk re-rated over the named and the changed files, dirty files
 * now), with its matching learnings. Without an active task it describes the
 * repository: dirty files, the risk of the files and keywords passed, no
 * protection.
 */
export async function taskContext(ws: Workspace, args: ContextArgs): Promise<ContextResult> {
  const files = parseFiles(args.files);
  const keywords = (args.keywords ?? []).map((k) => k.trim()).filter((k) => k !== "");
  let task: TaskRecord | null = null;
  try {
    task = currentTask(ws, args.preferred);
  } catch (err) {
    if (!(err instanceof WorksnapError) || err.details.wire_code !== "NO_TASK") throw err;
  }
  if (!task) {
    const dirty = await dirtyWithoutTask(ws);
    return {
      task: null,
      snap: null,
      risk: assessRisk({ title: "", keywords, files, dirty }),
      prot: 0,
      dirty,
      learn: await matchMemory(ws, { title: "", keywords, files }),
      state: null,
      lines: null,
    };
  }
  const state = await taskState(ws, task, { signal: args.signal });
  const touched = [...new Set([...task.files, ...files, ...state.changes.map((c) => c.change.path)])];
  const allKeywords = [...new Set([...task.keywords, ...keywords])];
  return {
    task,
    snap: task.snapshot.id && ws.snapshots.has(task.snapshot.id) ? shortSnapshotId(ws, task.snapshot.id) : null,
    risk: assessRisk({ title: task.title, keywords: allKeywords, files: touched, dirty: state.dirtyNow }),
    prot: task.prot,
    dirty: state.dirtyNow,
    learn: await matchMemory(ws, { title: task.title, keywords: allKeywords, files: touched }, state.fingerprint.head_oid),
    state,
    lines: await lineStats(ws, state.changes),
  };
}

/** Dirty files with no task: git status (untracked directories counted by their files), or outside git the changes since the newest task snapshot. */
async function dirtyWithoutTask(ws: Workspace): Promise<number> {
  const inputs = await readLiveInputs(ws, [ROOT], { lazyListing: true });
  if (inputs.git) {
    const status = statusPaths(inputs.git.status, ws.repo.gitPrefix);
    const dirs = status.untrackedDirs as RepoPath[];
    const tracked = status.present.filter((p) => !dirs.includes(p as RepoPath)).length;
    const inDirs = inputs.git.untracked.filter((u) => dirs.some((d) => isWithin(u.path, d))).length;
    return tracked + inDirs + status.absent.length;
  }
  const previous = listTasks(ws).find((t) => !t.base.git && t.snapshot.id !== null && ws.snapshots.has(t.snapshot.id));
  if (!previous?.snapshot.id) return 0;
  const live = await liveTreeOf(inputs);
  const captured = await captureEntries(ws.repo, ws.blobs, live.entries);
  const before = sideEntries(ws.snapshots.load(previous.snapshot.id).entries, [ROOT]);
  return diffEntries(before, captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode }))).length;
}
