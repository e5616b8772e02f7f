import type { Workspace } from "../workspace";
import { type LineStats, lineStats } from "./line-stats";
import { type Learning, addLearnings, newLearningId } from "./memory-store";
import { withAreaLock } from "./state-files";
import { taskState } from "./task-changes";
import { taskError, validationFailed } from "./task-errors";
import { type TaskEnd, type TaskRecord, loadActiveTask, loadTask, writeTask } from "./task-store";

export const OUTCOMES = ["completed", "abandoned", "blocked"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The survey's keys in the spec's order; the answer repeats the survey in this order. */
export const SURVEY_KEYS = ["patterns_used", "pitfalls_avoided", "helpfulness", "unhelpful_count"] as const;
export type Survey = Partial<Record<(typeof SURVEY_KEYS)[number], number>>;

export interface EndArgs {
  taskId: string;
  outcome?: Outcome;
  learnings?: string[];
  survey?: Survey;
  signal?: AbortSignal;
}

export interface EndResult {
  task: TaskRecord;
  outcome: Outcome;
  files: number;
  lines: LineStats;
  learnings: Learning[];
  survey: Survey;
}

const LEARNING_MAX = 2000;
const LEARNINGS_MAX = 20;

/**
 * snap_end: what the task changed against its start (files, and lines as
 * `git diff --numstat` counts them), its learnings stored (each a
 * "discovery" about the task's files), the survey kept as given, and the task
 * marked ended. Everything is checked and computed before anything is
 * written; the task is ended and its learnings stored under the tasks lock,
 * so a second snap_end of the same task is TASK_ENDED and stores nothing.
 */
export async function endTask(ws: Workspace, args: EndArgs): Promise<EndResult> {
  const outcome = args.outcome ?? "completed";
  const texts = (args.learnings ?? []).map((l) => l.trim()).filter((l) => l !== "");
  if (texts.length > LEARNINGS_MAX) throw validationFailed(`learnings has ${texts.length} entries; at most ${LEARNINGS_MAX}`, { arg: "learnings" });
  if (texts.some((t) => t.length > LEARNING_MAX)) throw validationFailed(`each learning must stay under ${LEARNING_MAX} characters`, { arg: "learnings" });
  const survey = checkSurvey(args.survey);
  const task = loadActiveTask(ws, args.taskId);
  const state = await taskState(ws, task, { signal: args.signal });
  const lines = await lineStats(ws, state.changes);
  const at = new Date().toISOString();
  const learnings: Learning[] = texts.map((action) => ({
    id: newLearningId(),
    type: "discovery",
    trigger: task.title,
    action,
    created_at: at,
    task_id: task.id,
    files: task.files.length > 0 ? task.files : state.changes.slice(0, 20).map((c) => c.change.path),
    source: "end",
  }));
  const end: TaskEnd = {
    at,
    outcome,
    learning_ids: learnings.map((l) => l.id),
    files: state.changes.length,
    added: lines.added,
    removed: lines.removed,
  };
  if (Object.keys(survey).length > 0) end.survey = survey;
  const ended = await withAreaLock(ws, "tasks", async () => {
    const current = loadTask(ws, task.id);
    if (current.state === "ended") {
      throw taskError("TASK_ENDED", "INVALID_ARGUMENT", `task ${task.id} ended at ${current.ended?.at ?? "an earlier call"}; nothing was stored`, { task_id: task.id });
    }
    await addLearnings(ws, learnings);
    const next: TaskRecord = { ...current, state: "ended", ended: end };
    writeTask(ws, next);
    return next;
  });
  return { task: ended, outcome, files: state.changes.length, lines, learnings, survey };
}

function checkSurvey(survey: Survey | undefined): Survey {
  const out: Survey = {};
  if (!survey) return out;
  for (const key of SURVEY_KEYS) {
    const v = survey[key];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0) throw validationFailed(`survey.${key} must be a number of 0 or more`, { arg: `survey.${key}` });
    if (key === "helpfulness" && (v < 1 || v > 5)) throw validationFailed("survey.helpfulness is a rating from 1 to 5", { arg: "survey.helpfulness" });
    out[key] = v;
  }
  return out;
}
