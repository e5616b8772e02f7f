import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { randomId128 } from "../../core/hash";
import type { Workspace } from "../workspace";
import { areaDir, readJson, withAreaLock, writeJson } from "./state-files";

/**
 * What agents learn across tasks, in `.mcp/memory/`:
 * - `learnings.jsonl`: one learning a line (snap_learn, and snap_end's
 *   learnings), appended under the memory lock;
 * - `violations.json`: every violation type with its count and its latest
 *   occurrences (snap_violation).
 * Both are private to this clone (`.mcp/` is never tracked). A team shares
 * learnings by committing a `.worksnap/learnings.jsonl` with lines of the
 * same shape (team-memory.ts reads it from HEAD); worksnap never writes it.
 */
export const LEARNING_TYPES = ["pattern", "pitfall", "efficiency", "discovery", "workflow"] as const;
export type LearningType = (typeof LEARNING_TYPES)[number];

export interface Learning {
  id: string;
  type: LearningType;
  trigger: string;
  action: string;
  created_at: string;
  task_id?: string;
  /** Files the learning was made about (the task's files, for snap_end's learnings). */
  files?: string[];
  /** Where it came from: snap_learn, snap_end, or the team's committed file. */
  source: "learn" | "end" | "team";
}

export interface ViolationOccurrence {
  at: string;
  file?: string;
  description: string;
  prevention?: string;
  task_id?: string;
}

export interface ViolationRecord {
  type: string;
  count: number;
  first_at: string;
  last_at: string;
  /** When the count reached PROMOTE_AT. */
  promoted_at?: string;
  /** When the count reached AUTOMATE_AT. */
  automation_at?: string;
  /** Distinct files it was reported on, first seen first (at most FILES_KEPT). */
  files: string[];
  /** The latest prevention given. */
  prevention?: string;
  /** The latest occurrences, oldest first (at most OCCURRENCES_KEPT). */
  occurrences: ViolationOccurrence[];
}

/** Spec 003's thresholds: 3 occurrences promote a violation to a pattern, 5 mark it for automation. */
export const PROMOTE_AT = 3;
export const AUTOMATE_AT = 5;
const FILES_KEPT = 20;
const OCCURRENCES_KEPT = 20;

function learningsFile(ws: Workspace): string {
  return join(areaDir(ws, "memory"), "learnings.jsonl");
}

function violationsFile(ws: Workspace): string {
  return join(areaDir(ws, "memory"), "violations.json");
}

export function newLearningId(): string {
  return `learn_${randomId128().slice(0, 10)}`;
}

/** Appends learnings (one write, one line each) under the memory lock. */
export async function addLearnings(ws: Workspace, learnings: Learning[]): Promise<void> {
  if (learnings.length === 0) return;
  await withAreaLock(ws, "memory", async () => {
    mkdirSync(areaDir(ws, "memory"), { recursive: true });
    appendFileSync(learningsFile(ws), learnings.map((l) => `${JSON.stringify(l)}\n`).join(""));
  });
}

/** Every stored learning, oldest first. A line that does not parse (a torn append) is skipped. */
export function loadLearnings(ws: Workspace): Learning[] {
  const file = learningsFile(ws);
  if (!existsSync(file)) return [];
  return parseLearningLines(readFileSync(file, "utf8"), "learn");
}

/** Learning lines: private (`.mcp/memory/learnings.jsonl`) or the team's; malformed lines are skipped. */
export function parseLearningLines(text: string, source: Learning["source"]): Learning[] {
  const out: Learning[] = [];
  let n = 0;
  for (const line of text.split("\n")) {
    n++;
    if (line.trim() === "") continue;
    try {
      const l = JSON.parse(line) as Partial<Learning>;
      if (typeof l.trigger !== "string" || typeof l.action !== "string") continue;
      const type = LEARNING_TYPES.includes(l.type as LearningType) ? (l.type as LearningType) : "discovery";
      out.push({
        id: typeof l.id === "string" ? l.id : `team_${n}`,
        type,
        trigger: l.trigger,
        action: l.action,
        created_at: typeof l.created_at === "string" ? l.created_at : "",
        ...(typeof l.task_id === "string" ? { task_id: l.task_id } : {}),
        files: Array.isArray(l.files) ? l.files.filter((f): f is string => typeof f === "string") : undefined,
        source: source === "team" ? "team" : (l.source ?? source),
      });
    } catch {
      // a line torn by a crash mid-append, or edited by hand: the others still count
    }
  }
  return out;
}

export function loadViolations(ws: Workspace): Record<string, ViolationRecord> {
  return readJson<Record<string, ViolationRecord>>(violationsFile(ws)) ?? {};
}

/** Counts one occurrence of a violation type under the memory lock; returns the updated record. */
export async function countViolation(ws: Workspace, type: string, occurrence: ViolationOccurrence): Promise<ViolationRecord> {
  return withAreaLock(ws, "memory", async () => {
    const all = loadViolations(ws);
    const prev = all[type];
    const count = (prev?.count ?? 0) + 1;
    const files = [...(prev?.files ?? [])];
    if (occurrence.file && !files.includes(occurrence.file) && files.length < FILES_KEPT) files.push(occurrence.file);
    const next: ViolationRecord = {
      type,
      count,
      first_at: prev?.first_at ?? occurrence.at,
      last_at: occurrence.at,
      files,
      occurrences: [...(prev?.occurrences ?? []), occurrence].slice(-OCCURRENCES_KEPT),
    };
    const promoted = prev?.promoted_at ?? (count >= PROMOTE_AT ? occurrence.at : undefined);
    const automated = prev?.automation_at ?? (count >= AUTOMATE_AT ? occurrence.at : undefined);
    if (promoted) next.promoted_at = promoted;
    if (automated) next.automation_at = automated;
    const prevention = occurrence.prevention ?? prev?.prevention;
    if (prevention) next.prevention = prevention;
    all[type] = next;
    writeJson(ws, violationsFile(ws), all);
    return next;
  });
}

/** Violation types promoted to patterns (3 or more occurrences), most frequent first. */
export function promotedPatterns(ws: Workspace): ViolationRecord[] {
  return Object.values(loadViolations(ws))
    .filter((v) => v.count >= PROMOTE_AT)
    .sort((a, b) => b.count - a.count || compareUtf8(a.type, b.type));
}
