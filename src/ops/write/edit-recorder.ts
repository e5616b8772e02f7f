import type { FileMode } from "../../core/file-mode";
import type { RepoPath } from "../../core/repo-path";
import type { LineChange } from "../../core/line-change";

/**
 * The hook between the one work-tree write path (src/ops/write/write-path.ts) and
 * the edit history (src/ops/history/). The write path calls it with its lock
 * held: `prepare` before any byte changes (checkpoints, hashes before; the new
 * states are known already, so the diffs can start there), `seal` while the
 * new contents are staged (it has finished before the first one is
 * published; from then on the record can be completed after a crash: diffs
 * and the entries to log are durable), then `commit` after every write
 * succeeded (log entries).
 */

/** The state of one path: null when it does not exist. */
export type PathState = { bytes: Uint8Array; mode: FileMode } | null;

export type EditOperation = "create" | "replace" | "edit" | "delete" | "move";

/** One recorded change to one path (a move records its source too). */
export interface EditChange {
  operation: EditOperation;
  path: RepoPath;
  /** For "move": where the file came from. */
  sourcePath?: RepoPath;
  before: PathState;
  /** The new state (null for a delete): the write path fills it in before `prepare` and writes exactly these bytes. */
  after?: PathState;
  /**
   * For an edit made by a patch: the line changes that turned `before` into
   * `after`, as the patch placed them. The recorded diff is rendered from
   * them (and still verified) instead of diffing the whole file again.
   */
  lines?: LineChange[];
}

export interface EditContext {
  conversationId: string;
  /** The spec 002 tool name: write_file | edit_file_diff | delete_file | move_file | restore. */
  toolName: string;
}

export interface PreparedEdit {
  /** Opaque to the write path. */
  readonly token: unknown;
}

/**
 * Checkpoints started before the change set is known (EditRecorder.checkpointAhead), handed to `prepare`, which
 * uses them when they are exactly the ones it needs and drops them otherwise. Whoever holds them and does not
 * reach `prepare` drops them (`discard`, which does nothing once `prepare` has them).
 */
export interface AheadCheckpoints {
  readonly token: unknown;
  /** Removes them (once their write is over) unless `prepare` took them; the promise resolves when nothing of them is left. */
  discard(): Promise<void>;
}

export interface EditRecorder {
  /**
   * Optional: starts writing the checkpoints a change set of these read states would need (their bytes made
   * durable while the change set is made from them); null when not worth it or not possible.
   */
  checkpointAhead?(conversationId: string, reads: { path: RepoPath; state: PathState }[]): Promise<AheadCheckpoints | null>;
  prepare(ctx: EditContext, changes: EditChange[], ahead?: AheadCheckpoints | null): Promise<PreparedEdit>;
  /** Makes durable what completing the record after a crash needs; called before the first file is published. */
  seal(prepared: PreparedEdit): Promise<void>;
  /** Records the change set: its edits' ids, and the tool call's index in its conversation (0: the conversation's first). */
  commit(prepared: PreparedEdit, changes: EditChange[]): Promise<{ editIds: string[]; toolCallIndex: number }>;
  /** Called when the writes failed after prepare (or seal); must leave the history as it was. */
  abort(prepared: PreparedEdit): Promise<void>;
}
