import { WorksnapError } from "../../core/errors";
import { isReservedPath, parseRepoPath, type RepoPath } from "../../core/repo-path";
import { readGitState } from "../../repo/fingerprint";
import type { Workspace } from "../workspace";
import { type MemoryMatch, matchMemory } from "./memory-match";
import { assessRisk } from "./risk";
import { shortSnapshotId } from "./snapshot-ref";
import { type StartCapture, captureStart } from "./task-snapshot";
import { taskError, validationFailed } from "./task-errors";
import { type TaskRecord, createTask } from "./task-store";

export interface StartArgs {
  task?: string;
  files?: string[];
  keywords?: string[];
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export interface StartResult {
  task: TaskRecord;
  /** The snapshot id as answers show it (a unique prefix), null when the capture failed. */
  snap: string | null;
  learn: MemoryMatch[];
  dirty: StartCapture["dirty"];
}

export const TITLE_MAX = 500;
export const FILES_MAX = 1000;
export const KEYWORDS_MAX = 50;

/**
 * snap mode "start": validates the task, takes its snapshot (the named files
 * plus every dirty file: task-snapshot.ts), rates its risk (risk.ts), finds
 * the learnings and patterns that match it, and stores it as `task_<n>`.
 * Nothing is stored when validation or the capture throws.
 */
export async function startTask(ws: Workspace, args: StartArgs): Promise<StartResult> {
  const title = (args.task ?? "").trim();
  if (title === "") throw validationFailed('mode "start" needs task: a short title or goal of the task', { arg: "task" });
  if (title.length > TITLE_MAX) throw validationFailed(`task is ${title.length} characters; keep it under ${TITLE_MAX}`, { arg: "task" });
  const files = parseFiles(args.files);
  const keywords = parseKeywords(args.keywords);
  // One git state for the capture and the team's learnings (read at its HEAD), which are read while the
  // snapshot is taken (neither depends on the other).
  const state = ws.repo.gitDir ? await readGitState(ws.repo) : undefined;
  const matching = matchMemory(ws, { title, keywords, files }, state?.fingerprint.head_oid);
  matching.catch(() => undefined);
  const capture = await captureStart(ws, { named: files, state, signal: args.signal, onProgress: args.onProgress });
  const risk = assessRisk({ title, keywords, files, dirty: capture.dirty.count });
  const prot = capture.snapshot.status === "failed" ? 0 : files.length === 0 ? 100 : Math.floor((capture.named.held.length * 100) / files.length);
  const learn = await matching;
  const task = await createTask(ws, (id) => ({
    id,
    title,
    files,
    keywords,
    created_at: new Date().toISOString(),
    state: "active",
    snapshot: capture.snapshot,
    base: capture.base,
    named: capture.named,
    dirty_at_start: capture.dirty.count,
    risk,
    prot,
  }));
  return { task, snap: capture.snapshot.id ? shortSnapshotId(ws, capture.snapshot.id) : null, learn, dirty: capture.dirty };
}

/** The named files as repo paths (each checked; reserved paths refused), without repeats, in the order given. */
export function parseFiles(files: string[] | undefined, arg = "files"): RepoPath[] {
  if (files === undefined) return [];
  if (files.length > FILES_MAX) throw validationFailed(`${arg} names ${files.length} paths; at most ${FILES_MAX}`, { arg });
  const out: RepoPath[] = [];
  for (const raw of files) {
    let p: RepoPath;
    try {
      p = parseRepoPath(raw, arg);
    } catch (err) {
      throw err instanceof WorksnapError ? validationFailed(err.message, { arg, path: raw }) : err;
    }
    if (isReservedPath(p)) throw taskError("PERMISSION_DENIED", "PERMISSION_DENIED", `${p} is reserved for git and worksnap state`, { arg, path: p });
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

function parseKeywords(keywords: string[] | undefined): string[] {
  if (keywords === undefined) return [];
  if (keywords.length > KEYWORDS_MAX) throw validationFailed(`keywords has ${keywords.length} entries; at most ${KEYWORDS_MAX}`, { arg: "keywords" });
  const out: string[] = [];
  for (const k of keywords) {
    const t = k.trim();
    if (t.length > 100) throw validationFailed("each keyword must stay under 100 characters", { arg: "keywords" });
    if (t !== "" && !out.includes(t)) out.push(t);
  }
  return out;
}
