import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SnapshotId } from "../../repo/manifest";
import { writeFileUnflushed } from "../../repo/atomic-write";
import type { Workspace } from "../workspace";
import type { RiskAssessment } from "./risk";
import { areaDir, readJson, withAreaLock, writeJson } from "./state-files";
import { noTask, taskError } from "./task-errors";

/**
 * Tasks, one JSON file each in `.mcp/tasks/` (`task_<n>.json`), numbered from
 * `.mcp/tasks/counter` under the tasks lock, so ids are unique in the
 * repository across restarts and across processes.
 */
export interface TaskRecord {
  id: string;
  title: string;
  /** The files (or directories) the task named, as repo paths. */
  files: string[];
  keywords: string[];
  created_at: string;
  state: "active" | "ended";
  snapshot: TaskSnapshot;
  /** What the work tree held at the start, beyond the snapshot (see task-base.ts). */
  base: TaskBaseRecord;
  /** Named paths the snapshot holds, and those that did not exist (or were ignored) at the start. */
  named: { held: string[]; missing: string[] };
  dirty_at_start: number;
  risk: RiskAssessment;
  prot: number;
  /** The latest check run against this task. */
  last_check?: { mode: string; status: "pass" | "fail" | "skipped"; errors: number; warnings: number; at: string };
  ended?: TaskEnd;
}

export interface TaskSnapshot {
  /** null when the capture failed (status "failed"). */
  id: SnapshotId | null;
  status: "created" | "reused" | "failed";
  files: number;
  /** Why the capture failed. */
  failure?: string;
}

export interface TaskBaseRecord {
  /** true: a git work tree; the base is HEAD at the start with the snapshot laid over it. */
  git: boolean;
  /** HEAD at the start ("" before the first commit, or outside git). */
  head_oid: string;
  /** Paths git reported at the start that were not on disk (deleted, or the source of a rename). */
  absent: string[];
}

export interface TaskEnd {
  at: string;
  outcome: "completed" | "abandoned" | "blocked";
  learning_ids: string[];
  files: number;
  added: number;
  removed: number;
  survey?: Record<string, number>;
}

export const TASK_ID = /^task_([1-9][0-9]{0,9})$/;

function taskFile(ws: Workspace, id: string): string {
  return join(areaDir(ws, "tasks"), `${id}.json`);
}

export function taskNumber(id: string): number {
  return Number(TASK_ID.exec(id)?.[1] ?? Number.NaN);
}

/** Allocates the next id and stores the record `make` builds for it, under the tasks lock. */
export async function createTask(ws: Workspace, make: (id: string) => TaskRecord): Promise<TaskRecord> {
  return withAreaLock(ws, "tasks", async () => {
    const counterFile = join(areaDir(ws, "tasks"), "counter");
    const last = existsSync(counterFile) ? Number(readFileSync(counterFile, "utf8").trim()) : 0;
    // The counter never goes back, even if its file was lost: the highest stored task counts too.
    const highest = Math.max(Number.isSafeInteger(last) ? last : 0, ...listTaskIds(ws).map(taskNumber));
    const id = `task_${highest + 1}`;
    const record = make(id);
    writeJson(ws, taskFile(ws, id), record);
    // Not flushed: after a crash a stale counter is corrected by the (flushed) task file it lags behind.
    writeFileUnflushed(ws.repo.stateDir, counterFile, `${highest + 1}\n`);
    return record;
  });
}

/** A stored task; NO_TASK when the id is malformed or unknown. */
export function loadTask(ws: Workspace, id: string): TaskRecord {
  if (!TASK_ID.test(id)) throw noTask(`${JSON.stringify(id)} is not a task id (task_<n>, from snap mode start)`, { task_id: id });
  const record = readJson<TaskRecord>(taskFile(ws, id));
  if (!record) throw noTask(`task ${id} does not exist in this repository; start one with snap mode "start"`, { task_id: id });
  return record;
}

/** An active task; TASK_ENDED for one that ended. */
export function loadActiveTask(ws: Workspace, id: string): TaskRecord {
  const task = loadTask(ws, id);
  if (task.state === "ended") {
    throw taskError("TASK_ENDED", "INVALID_ARGUMENT", `task ${id} ended at ${task.ended?.at ?? "an earlier call"}; start a new task with snap mode "start"`, { task_id: id });
  }
  return task;
}

/** Stores a task record; the caller holds the tasks lock (withAreaLock(ws, "tasks", ...)). */
export function writeTask(ws: Workspace, record: TaskRecord): void {
  writeJson(ws, taskFile(ws, record.id), record);
}

function listTaskIds(ws: Workspace): string[] {
  const dir = areaDir(ws, "tasks");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith(".json") && TASK_ID.test(n.slice(0, -5)))
    .map((n) => n.slice(0, -5));
}

/** Every stored task, newest first. */
export function listTasks(ws: Workspace): TaskRecord[] {
  return listTaskIds(ws)
    .sort((a, b) => taskNumber(b) - taskNumber(a))
    .map((id) => loadTask(ws, id));
}

/**
 * The task a call without taskId means: `preferred` (the task this MCP
 * session started last) while it is active, else the newest active task of
 * the repository; NO_TASK when there is none.
 */
export function currentTask(ws: Workspace, preferred?: string): TaskRecord {
  if (preferred !== undefined) {
    const t = readJson<TaskRecord>(taskFile(ws, preferred));
    if (t && t.state === "active") return t;
  }
  const active = listTasks(ws).find((t) => t.state === "active");
  if (!active) throw noTask('no active task: start one with snap mode "start" (or pass taskId)', {});
  return active;
}

/** The task given by id (active or not, for reads), or the current one. */
export function taskFor(ws: Workspace, taskId: string | undefined, preferred?: string): TaskRecord {
  return taskId === undefined ? currentTask(ws, preferred) : loadTask(ws, taskId);
}
