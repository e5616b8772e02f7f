/**
 * Storage of the edit history behind one interface (FsHistoryStore on disk in
 * spec 002's layout, MemHistoryStore in memory), with one conformance suite
 * run against both. The store knows files and their atomicity, nothing of
 * what the history means.
 *
 * Layout (relative to the history root, `.mcp/edit_history/`):
 *   logs/{conv}.log                       JSON Lines, one entry per recorded change
 *   diffs/{conv}/{edit_id}.diff           unified diff of the change
 *   diffs/{conv}/{edit_id}.after          the bytes after, for changes a diff cannot replay (binary)
 *   checkpoints/{conv}/{name}.chkpt       raw bytes of a file before the conversation's first touch
 *   checkpoints/{conv}/{name}.chkpt.json  its path, mode and hash
 *   reviews/{review_id}.json              a finished review that wrote the work tree
 *   reviews/{review_id}/{n}.bin           the bytes it wrote
 *   intents/{review_id}.json              a review that started writing and has not finished
 *   pending_writes/{intent_id}.json       a recorded tool call that may have published files but not logged them
 *   clock                                 the last timestamp handed out
 */
import { invalidArgument, internal } from "../../core/errors";
import { sha256Hex } from "../../core/hash";
import { CONVERSATION_ID } from "./conversation-id";
import { EDIT_STATUSES, LOG_ENTRY_FIELDS, OPERATIONS, type LogEntry, type ReviewRecord, type WriteIntent } from "./types";

export interface HistoryStore {
  /** Every conversation that has a log, sorted by UTF-8 bytes. */
  listConversations(): Promise<string[]>;
  /** The conversation's entries in log order; [] when it has no log. */
  readLog(conversationId: string): Promise<LogEntry[]>;
  /** Something that changes whenever the log changes (for caches); null when there is no log. */
  logVersion(conversationId: string): Promise<string | null>;
  /** Replaces the whole log atomically (temp file, fsync, rename). Call with the log lock held. */
  writeLog(conversationId: string, entries: LogEntry[]): Promise<void>;
  /**
   * Appends entries, durable when it resolves: after a failure the log holds none of them, and a reader never
   * counts a line being written (it may see the first of the entries before the last). Call with the log lock held.
   */
  appendLog(conversationId: string, entries: LogEntry[]): Promise<void>;
  /**
   * A cheap value that changes whenever a log, a finished review or an
   * interrupted review changes, whichever process changed it (a page that
   * shows the history polls it).
   */
  changeStamp(): Promise<string>;
  /** Runs fn holding the log locks of these conversations (taken in byte order, so never deadlocking). */
  withLogLock<T>(conversationIds: string[], fn: () => Promise<T>): Promise<T>;

  /** Writes an object (diffs/, checkpoints/, reviews/ content) atomically. */
  putObject(rel: string, bytes: Uint8Array): Promise<void>;
  /** NOT_FOUND when missing. */
  getObject(rel: string): Promise<Uint8Array>;
  hasObject(rel: string): Promise<boolean>;
  deleteObject(rel: string): Promise<void>;
  /** Removes a conversation's log, diffs and checkpoints. */
  removeConversation(conversationId: string): Promise<void>;

  /** Finished reviews, by timestamp. */
  listReviews(): Promise<ReviewRecord[]>;
  putReview(record: ReviewRecord): Promise<void>;
  /** Removes the review and its content objects. */
  deleteReview(reviewId: string): Promise<void>;
  /** Reviews that started writing and did not finish, by timestamp. */
  listIntents(): Promise<ReviewRecord[]>;
  putIntent(record: ReviewRecord): Promise<void>;
  deleteIntent(reviewId: string): Promise<void>;

  /** Recorded tool calls sealed and not yet committed (a crash in between leaves them), by timestamp. */
  listWriteIntents(): Promise<WriteIntent[]>;
  /** Durable when it returns. */
  putWriteIntent(intent: WriteIntent): Promise<void>;
  deleteWriteIntent(intentId: string): Promise<void>;

  /** The last timestamp handed out, or null. */
  readClock(): Promise<string | null>;
  writeClock(timestamp: string): Promise<void>;

  /** Where this history lives, for messages (a directory, or "memory"). */
  readonly location: string;
}

// ---------------------------------------------------------------------------
// Names

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function checkConversationId(id: string): string {
  if (!CONVERSATION_ID.test(id)) {
    throw invalidArgument(`conversation id ${JSON.stringify(id)} must be 1-128 characters of A-Z a-z 0-9 . _ - and start with a letter or digit`, {
      conversation_id: id,
    });
  }
  return id;
}

export function logRel(conv: string): string {
  return `logs/${checkConversationId(conv)}.log`;
}

export function diffRel(conv: string, editId: string): string {
  return `diffs/${conv}/${editId}.diff`;
}

export function afterRel(conv: string, editId: string): string {
  return `diffs/${conv}/${editId}.after`;
}

/**
 * A path as a file name (spec section 3's sanitized_path): unsafe characters
 * become "_", and a hash of the real path keeps two paths that sanitize alike
 * (a/b and a_b) apart.
 */
export function sanitizePath(path: string): string {
  const readable = path.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "").slice(0, 100);
  return `${readable || "file"}-${sha256Hex(path).slice(0, 12)}`;
}

/** First touch: checkpoints/{conv}/{name}.chkpt; a later one (the file changed outside): ...{name}.{edit_id}.chkpt. */
export function checkpointRel(conv: string, path: string, editId?: string): string {
  return `checkpoints/${conv}/${sanitizePath(path)}${editId ? `.${editId}` : ""}.chkpt`;
}

export function checkpointMetaRel(checkpoint: string): string {
  return `${checkpoint}.json`;
}

export function reviewContentRel(reviewId: string, n: number): string {
  return `reviews/${reviewId}/${n}.bin`;
}

/** Object names are two or three safe segments under a known top directory: nothing can escape the root. */
export function checkObjectRel(rel: string): string {
  const parts = rel.split("/");
  const top = parts[0];
  if ((top !== "diffs" && top !== "checkpoints" && top !== "reviews") || parts.length !== 3 || !parts.slice(1).every((p) => NAME.test(p) && !p.includes(".."))) {
    throw invalidArgument(`${JSON.stringify(rel)} is not a history object name`, { name: rel });
  }
  return rel;
}

export function checkReviewId(id: string): string {
  if (!NAME.test(id) || id.length > 128) throw invalidArgument(`${JSON.stringify(id)} is not a review id`, { review_id: id });
  return id;
}

// ---------------------------------------------------------------------------
// Log lines

/** One entry as a JSON line, fields in the spec's order. */
export function serializeEntry(e: LogEntry): string {
  const ordered: Record<string, unknown> = {};
  for (const k of LOG_ENTRY_FIELDS) ordered[k] = e[k];
  return JSON.stringify(ordered);
}

export function serializeLog(entries: LogEntry[]): string {
  return entries.map((e) => `${serializeEntry(e)}\n`).join("");
}

/**
 * A log's entries, one JSON line each. The log is taken up to its last "\n":
 * a last line without one is an append still being written, or one a crash
 * cut short (whose entries its write intent still names), and is not an entry.
 */
export function parseLog(text: string, where: string): LogEntry[] {
  const out: LogEntry[] = [];
  const lines = text.split("\n");
  lines.pop(); // "" after the last "\n", or the unfinished line
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw internal(`${where} line ${i + 1} is not JSON: ${(err as Error).message}`, { log: where, line: i + 1 });
    }
    out.push(checkEntry(value, `${where} line ${i + 1}`));
  }
  return out;
}

const isStrOrNull = (v: unknown) => v === null || typeof v === "string";
const OPERATION_SET = new Set<unknown>(OPERATIONS);
const STATUS_SET = new Set<unknown>(EDIT_STATUSES);

/** Validates one parsed line and returns it with exactly the spec's fields (in their order). */
export function checkEntry(value: unknown, where: string): LogEntry {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw internal(`${where}: an entry must be a JSON object`, { where });
  const e = value as Record<string, unknown>;
  const entry = {
    edit_id: e.edit_id,
    conversation_id: e.conversation_id,
    tool_call_index: e.tool_call_index,
    timestamp: e.timestamp,
    operation: e.operation,
    file_path: e.file_path,
    source_path: e.source_path,
    tool_name: e.tool_name,
    status: e.status,
    diff_file: e.diff_file,
    checkpoint_file: e.checkpoint_file,
    hash_before: e.hash_before,
    hash_after: e.hash_after,
  };
  const problem = entryProblem(entry);
  if (problem) throw internal(`${where}: ${problem}`, { where });
  return entry as LogEntry;
}

function entryProblem(e: Record<keyof LogEntry, unknown>): string | null {
  for (const k of LOG_ENTRY_FIELDS) if (e[k] === undefined) return `field ${k} is missing`;
  if (typeof e.edit_id !== "string" || !NAME.test(e.edit_id)) return "edit_id is not a valid id";
  if (typeof e.conversation_id !== "string" || !CONVERSATION_ID.test(e.conversation_id)) return "conversation_id is not a valid id";
  if (typeof e.tool_call_index !== "number" || !Number.isInteger(e.tool_call_index) || e.tool_call_index < 0) return "tool_call_index is not a non-negative integer";
  if (typeof e.timestamp !== "string") return "timestamp is not a string";
  if (!OPERATION_SET.has(e.operation)) return `operation ${JSON.stringify(e.operation)} is unknown`;
  if (typeof e.file_path !== "string" || e.file_path === "") return "file_path is not a path";
  if (!isStrOrNull(e.source_path)) return "source_path is not a path or null";
  if ((e.operation === "move") !== (typeof e.source_path === "string")) return "source_path must be set exactly for moves";
  if (typeof e.tool_name !== "string") return "tool_name is not a string";
  if (!STATUS_SET.has(e.status)) return `status ${JSON.stringify(e.status)} is unknown`;
  if (!isStrOrNull(e.diff_file) || !isStrOrNull(e.checkpoint_file) || !isStrOrNull(e.hash_before) || !isStrOrNull(e.hash_after)) {
    return "diff_file, checkpoint_file, hash_before and hash_after must be strings or null";
  }
  return null;
}

function parseJson<T>(text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw internal(`${where} is not JSON: ${(err as Error).message}`, { where });
  }
}

export function parseReview(text: string, where: string): ReviewRecord {
  const value = parseJson<ReviewRecord>(text, where);
  if (!value || typeof value.review_id !== "string" || typeof value.timestamp !== "string" || !Array.isArray(value.finals) || typeof value.statuses !== "object") {
    throw internal(`${where} is not a review record`, { where });
  }
  return value;
}

export function parseWriteIntent(text: string, where: string): WriteIntent {
  const value = parseJson<WriteIntent>(text, where);
  if (!value || typeof value.intent_id !== "string" || typeof value.timestamp !== "string" || !Array.isArray(value.entries) || typeof value.modes !== "object" || value.modes === null) {
    throw internal(`${where} is not a write intent`, { where });
  }
  checkConversationId(value.conversation_id);
  value.entries = value.entries.map((e, i) => checkEntry(e, `${where} entry ${i + 1}`));
  return value;
}

export function byTimestamp<T extends { timestamp: string }>(a: T, b: T): number {
  return a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0;
}
