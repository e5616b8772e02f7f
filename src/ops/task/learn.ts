import { WorksnapError } from "../../core/errors";
import { parseRepoPath } from "../../core/repo-path";
import type { Workspace } from "../workspace";
import { type Detector, detectorFor } from "./detectors";
import { AUTOMATE_AT, LEARNING_TYPES, type Learning, type LearningType, PROMOTE_AT, type ViolationRecord, addLearnings, countViolation, newLearningId } from "./memory-store";
import { validationFailed } from "./task-errors";
import { type TaskRecord, currentTask, loadTask } from "./task-store";

const TEXT_MAX = 2000;

function text(value: string | undefined, arg: string, required: boolean): string | undefined {
  const t = value?.trim() ?? "";
  if (t === "") {
    if (required) throw validationFailed(`${arg} is required and must not be empty`, { arg });
    return undefined;
  }
  if (t.length > TEXT_MAX) throw validationFailed(`${arg} is ${t.length} characters; keep it under ${TEXT_MAX}`, { arg });
  return t;
}

/** The session's (or repository's) active task, or null; learnings and violations attach to it when there is one. */
function activeOrNull(ws: Workspace, preferred: string | undefined): TaskRecord | null {
  try {
    return currentTask(ws, preferred);
  } catch (err) {
    if (err instanceof WorksnapError && err.details.wire_code === "NO_TASK") return null;
    throw err;
  }
}

export interface LearnArgs {
  trigger: string;
  action: string;
  type: LearningType;
  preferred?: string;
}

/** snap_learn: stores a learning; it is tied to the active task (and its files) when there is one. */
export async function learn(ws: Workspace, args: LearnArgs): Promise<{ learning: Learning }> {
  const trigger = text(args.trigger, "trigger", true) as string;
  const action = text(args.action, "action", true) as string;
  if (!LEARNING_TYPES.includes(args.type)) throw validationFailed(`type must be one of ${LEARNING_TYPES.join(", ")}`, { arg: "type" });
  const task = activeOrNull(ws, args.preferred);
  const learning: Learning = { id: newLearningId(), type: args.type, trigger, action, created_at: new Date().toISOString(), source: "learn" };
  if (task) {
    learning.task_id = task.id;
    if (task.files.length > 0) learning.files = task.files;
  }
  await addLearnings(ws, [learning]);
  return { learning };
}

export interface ViolationArgs {
  type: string;
  description: string;
  file?: string;
  prevention?: string;
  taskId?: string;
  preferred?: string;
}

export interface ViolationResult {
  record: ViolationRecord;
  /** NO below 3; PROMOTED when this report made it a pattern; PATTERN when it was one already. */
  promote: "NO" | "PROMOTED" | "PATTERN";
  auto: "NO" | "YES";
  /** The built-in detector that already checks this type, if one does. */
  detector: Detector | undefined;
}

/** Violation types are keys: lowercase, words joined by "_" ("Silent catch" and "silent-catch" are silent_catch). */
export function violationKey(raw: string): string {
  const key = raw.trim().toLowerCase().replace(/[\s-]+/g, "_");
  if (!/^[a-z0-9][a-z0-9_.]{0,63}$/.test(key)) {
    throw validationFailed("type is a key of 1-64 letters, digits, _ and . (for example silent_catch)", { arg: "type", type: raw });
  }
  return key;
}

/**
 * snap_violation: counts one occurrence of a violation type (spec 003
 * thresholds: the 3rd promotes it to a pattern that later task starts show
 * and `check patterns` applies, the 5th marks it for automation).
 */
export async function reportViolation(ws: Workspace, args: ViolationArgs): Promise<ViolationResult> {
  const type = violationKey(args.type);
  const description = text(args.description, "description", true) as string;
  const prevention = text(args.prevention, "prevention", false);
  let file: string | undefined;
  if (args.file !== undefined) {
    try {
      file = parseRepoPath(args.file, "file");
    } catch (err) {
      throw err instanceof WorksnapError ? validationFailed(err.message, { arg: "file" }) : err;
    }
  }
  const task = args.taskId !== undefined ? loadTask(ws, args.taskId) : activeOrNull(ws, args.preferred);
  const record = await countViolation(ws, type, { at: new Date().toISOString(), description, file, prevention, task_id: task?.id });
  const promote = record.count < PROMOTE_AT ? "NO" : record.count === PROMOTE_AT ? "PROMOTED" : "PATTERN";
  return { record, promote, auto: record.count >= AUTOMATE_AT ? "YES" : "NO", detector: detectorFor(type) };
}
