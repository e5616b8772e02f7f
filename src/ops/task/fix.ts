import { compareUtf8 } from "../../core/byte-order";
import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import type { SnapshotId } from "../../repo/manifest";
import { captureEntries } from "../../repo/capture";
import { readLiveTree } from "../live/live-tree";
import { type ChangePair, diffEntries } from "../snapshot/changes";
import { type SideEntry, sideEntries } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { pathsChangedBetween } from "./head-tree";
import { resolveSnapshot, shortSnapshotId } from "./snapshot-ref";
import { baseEntries, snapshotEntriesOf, taskState } from "./task-changes";
import { type TaskRecord, listTasks } from "./task-store";
import { validationFailed } from "./task-errors";

export interface SnapshotListEntry {
  /** The prefix answers show. */
  snap: string;
  id: SnapshotId;
  created_at: string;
  files: number;
  /** The newest task that started from it. */
  task: string;
  title: string;
}

/** Entries an answer lists at most; `count` says how many there are. */
export const LIST_CAP = 10;

/** The task snapshots, newest first, each once (several tasks can start from the same tree). */
export function listTaskSnapshots(ws: Workspace): { count: number; entries: SnapshotListEntry[] } {
  const seen = new Set<string>();
  const entries: SnapshotListEntry[] = [];
  for (const t of listTasks(ws)) {
    const id = t.snapshot.id;
    if (!id || seen.has(id) || !ws.snapshots.has(id)) continue;
    seen.add(id);
    const meta = ws.snapshots.loadMeta(id.slice(7));
    entries.push({ snap: "", id, created_at: meta.created_at, files: meta.manifest_stats.files, task: t.id, title: t.title });
  }
  entries.sort((a, b) => compareUtf8(b.created_at, a.created_at));
  const shown = entries.slice(0, LIST_CAP).map((e) => ({ ...e, snap: shortSnapshotId(ws, e.id) }));
  return { count: entries.length, entries: shown };
}

/** The newest task that started from a snapshot, if any: its snapshot stands for the task's whole starting tree. */
export function taskOfSnapshot(ws: Workspace, id: SnapshotId): TaskRecord | null {
  return listTasks(ws).find((t) => t.snapshot.id === id) ?? null;
}

export interface DiffResult {
  from: string;
  /** A snapshot prefix, or "worktree". */
  to: string;
  added: string[];
  removed: string[];
  changed: string[];
  /** How the two sides were compared. */
  basis: "task" | "tasks" | "scoped";
}

/**
 * snap_fix "diff". A task snapshot stands for its task's whole starting tree
 * (the snapshot over HEAD at the start, task-changes.ts), so against the work
 * tree it gives what changed since the task started, and two task snapshots
 * compare their whole starting trees. Any other snapshot covers only what it
 * captured (its paths): it is compared within those (two such snapshots
 * within the paths both cover).
 */
export async function diffSnapshots(ws: Workspace, args: { id?: string; diffWith?: string; signal?: AbortSignal }): Promise<DiffResult> {
  if (args.id === undefined || args.id.trim() === "") throw validationFailed('action "diff" needs id: the snapshot to compare (diffWith: another one; omit it for the work tree)', { arg: "id" });
  const fromId = resolveSnapshot(ws, args.id, "id");
  const toId = args.diffWith === undefined || args.diffWith.trim() === "worktree" ? null : resolveSnapshot(ws, args.diffWith, "diffWith");
  const fromTask = taskOfSnapshot(ws, fromId);
  const from = shortSnapshotId(ws, fromId);
  let pairs: ChangePair[];
  let basis: DiffResult["basis"];
  if (toId === null) {
    if (fromTask) {
      pairs = (await taskState(ws, fromTask, { signal: args.signal })).changes;
      basis = "task";
    } else {
      pairs = diffEntries(scopedEntries(ws, fromId, null), await liveEntries(ws, scopeOf(ws, fromId), args.signal));
      basis = "scoped";
    }
  } else {
    const toTask = taskOfSnapshot(ws, toId);
    if (fromTask && toTask) {
      pairs = await diffTaskBases(ws, fromTask, toTask);
      basis = "tasks";
    } else {
      const both = intersectScopes(scopeOf(ws, fromId), scopeOf(ws, toId));
      pairs = diffEntries(scopedEntries(ws, fromId, both), scopedEntries(ws, toId, both));
      basis = "scoped";
    }
  }
  const of = (s: string) => pairs.filter((p) => p.change.status === s).map((p) => p.change.path);
  return {
    from,
    to: toId === null ? "worktree" : shortSnapshotId(ws, toId),
    added: of("added"),
    removed: of("deleted"),
    changed: pairs.filter((p) => p.change.status === "modified" || p.change.status === "mode_changed").map((p) => p.change.path),
    basis,
  };
}

async function diffTaskBases(ws: Workspace, a: TaskRecord, b: TaskRecord): Promise<ChangePair[]> {
  const candidates = new Set<string>();
  for (const t of [a, b]) {
    for (const e of snapshotEntriesOf(ws, t)) candidates.add(e.path);
    for (const p of t.base.absent) candidates.add(p);
  }
  for (const p of await pathsChangedBetween(ws, a.base.head_oid, b.base.head_oid)) candidates.add(p);
  const paths = [...candidates].sort(compareUtf8);
  const side = async (t: TaskRecord) => [...(await baseEntries(ws, t, paths)).values()].sort((x, y) => compareUtf8(x.path, y.path));
  return diffEntries(await side(a), await side(b));
}

/** What a snapshot covers: the paths it was asked to capture (its own files when it records none, as an imported one). */
export function scopeOf(ws: Workspace, id: SnapshotId): RepoPath[] {
  const snap = ws.snapshots.load(id);
  const paths = snap.meta.paths.length > 0 ? snap.meta.paths : snap.entries.map((e) => e.path);
  return (paths.includes(ROOT) ? [ROOT] : paths) as RepoPath[];
}

function intersectScopes(a: RepoPath[], b: RepoPath[]): RepoPath[] {
  const out = new Set<RepoPath>();
  for (const x of a) for (const y of b) {
    if (isWithin(x, y)) out.add(x);
    else if (isWithin(y, x)) out.add(y);
  }
  return out.has(ROOT) ? [ROOT] : [...out];
}

function scopedEntries(ws: Workspace, id: SnapshotId, scope: RepoPath[] | null): SideEntry[] {
  return sideEntries(ws.snapshots.load(id).entries, scope ?? scopeOf(ws, id));
}

/** The live files under a scope, hashed (and stored, so a restore can read them back). */
export async function liveEntries(ws: Workspace, scope: RepoPath[], signal?: AbortSignal): Promise<SideEntry[]> {
  if (scope.length === 0) return [];
  const tree = await readLiveTree(ws, scope);
  const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, { signal, gitComparedAt: tree.gitComparedAt });
  return captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode }));
}
