import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../core/errors";
import type { SnapshotId } from "../../repo/manifest";
import type { Workspace } from "../workspace";
import { taskError } from "./task-errors";
import { loadTask, TASK_ID } from "./task-store";

/** Hex digits an answer shows of a snapshot id: short, and still unique among millions of snapshots. */
export const SHORT_ID_HEX = 12;

/**
 * The prefix answers show for a snapshot: SHORT_ID_HEX hex digits, more when
 * another stored snapshot shares them. Every snapshot tool accepts it (a
 * prefix of 8 or more hex digits that names one snapshot).
 */
export function shortSnapshotId(ws: Workspace, id: SnapshotId): string {
  const hex = id.slice(7);
  const dir = join(ws.repo.stateDir, "snapshots");
  const others = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json") && n !== `${hex}.json`) : [];
  let n = SHORT_ID_HEX;
  while (n < hex.length && others.some((o) => o.startsWith(hex.slice(0, n)))) n += 4;
  return hex.slice(0, n);
}

/**
 * Resolves a snapshot id or prefix, or a task id (task_<n>) as the snapshot its start took; an unknown one is
 * SNAPSHOT_NOT_FOUND (NO_TASK for a task), a malformed one VALIDATION_FAILED.
 */
export function resolveSnapshot(ws: Workspace, ref: string, arg: string): SnapshotId {
  if (TASK_ID.test(ref.trim())) {
    const task = loadTask(ws, ref.trim());
    if (task.snapshot.id === null) {
      throw taskError("SNAPSHOT_NOT_FOUND", "NOT_FOUND", `task ${task.id} has no snapshot: its capture failed at the start (${task.snapshot.failure ?? "no reason recorded"})`, { task_id: task.id, arg });
    }
    return task.snapshot.id;
  }
  try {
    return ws.snapshots.resolve(ref.trim(), arg);
  } catch (err) {
    if (!(err instanceof WorksnapError)) throw err;
    if (err.code === "NOT_FOUND") throw taskError("SNAPSHOT_NOT_FOUND", "NOT_FOUND", `${err.message}; snap_fix action "list" shows the task snapshots`, { ...err.details, arg });
    throw taskError("VALIDATION_FAILED", "INVALID_ARGUMENT", err.message, { ...err.details, arg });
  }
}
