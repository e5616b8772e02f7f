/**
 * The edit history's data model (spec 002 section 4). A log entry has exactly
 * the spec's fields; paths are repo-relative (the substrate's path rule)
 * rather than the spec's absolute paths, and hashes are lowercase SHA-256 hex
 * of the raw bytes.
 */

import type { FileMode } from "../../core/file-mode";

export type EditStatus = "pending" | "accepted" | "rejected";
export type Operation = "create" | "replace" | "edit" | "delete" | "move";

export const EDIT_STATUSES: readonly EditStatus[] = ["pending", "accepted", "rejected"];
export const OPERATIONS: readonly Operation[] = ["create", "replace", "edit", "delete", "move"];

export interface LogEntry {
  edit_id: string;
  conversation_id: string;
  /** Order of the tool call within its conversation; the changes of one call share it. */
  tool_call_index: number;
  /** ISO 8601 UTC with microseconds, strictly increasing across the whole history: the global order. */
  timestamp: string;
  operation: Operation;
  /** Repo-relative; the destination for a move. */
  file_path: string;
  /** Repo-relative source of a move, else null. */
  source_path: string | null;
  tool_name: string;
  status: EditStatus;
  /** Relative to the history root: diffs/{conv}/{edit_id}.diff, or null. */
  diff_file: string | null;
  /** Relative to the history root: the checkpoint this entry created, or null. */
  checkpoint_file: string | null;
  hash_before: string | null;
  hash_after: string | null;
}

export const LOG_ENTRY_FIELDS: readonly (keyof LogEntry)[] = [
  "edit_id",
  "conversation_id",
  "tool_call_index",
  "timestamp",
  "operation",
  "file_path",
  "source_path",
  "tool_name",
  "status",
  "diff_file",
  "checkpoint_file",
  "hash_before",
  "hash_after",
];

/** Sidecar of a checkpoint: what the raw bytes in the .chkpt file were. */
export interface CheckpointMeta {
  path: string;
  mode: FileMode;
  hash: string;
}

/** One path's state after a review wrote the work tree (rule 9.4: the final hash is recorded). */
export interface ReviewFinal {
  path: string;
  /** null: the review left no file at this path. */
  hash: string | null;
  mode: FileMode | null;
  /** Relative to the history root: the bytes written, or null for an absent path. */
  content_file: string | null;
  /** The file identity (see reapply.ts) now at this path, or null. */
  lineage: string | null;
  /** The hash the path had when the review started (for recovery after a crash). */
  hash_before: string | null;
}

/**
 * A review that changed the work tree (a reject, or a re-accept of a rejected
 * edit). Written as an intent before any file is touched, and moved to
 * reviews/ once every file is written, so an interrupted review is completed
 * by the next history command.
 */
export interface ReviewRecord {
  review_id: string;
  /** Same clock as the log entries: reviews and edits form one ordered timeline. */
  timestamp: string;
  action: "accept" | "reject";
  /** The new status of every edit whose status the review changed. */
  statuses: Record<string, EditStatus>;
  finals: ReviewFinal[];
}

export function isTerminal(status: EditStatus): boolean {
  return status !== "pending";
}

export function kept(status: EditStatus): boolean {
  return status !== "rejected";
}

/**
 * A recorded tool call between `seal` and `commit` (recorder.ts): the entries
 * it will log, made durable (after its diffs and checkpoints) before the first
 * file is published, so a process that dies while publishing leaves enough for
 * the next one to complete the record or drop it (interrupted.ts).
 */
export interface WriteIntent {
  intent_id: string;
  /** The first entry's timestamp: interrupted writes are completed oldest first. */
  timestamp: string;
  conversation_id: string;
  /** The entries exactly as they will be logged (status pending), in log order. */
  entries: LogEntry[];
  /** Per edit id, the mode before and after (null: no file), which the hashes alone do not tell. */
  modes: Record<string, [FileMode | null, FileMode | null]>;
}
