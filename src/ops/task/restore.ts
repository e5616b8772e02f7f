import { compareUtf8 } from "../../core/byte-order";
import type { RepoPath } from "../../core/repo-path";
import { CONVERSATION_ID, newConversationId } from "../history/conversation-id";
import { type ChangePair, diffEntries } from "../snapshot/changes";
import { sideEntries } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { withWorktreeLock } from "../write/worktree-lock";
import { type WriteChange, applyChangesLocked } from "../write/write-path";
import { liveEntries, scopeOf, taskOfSnapshot } from "./fix";
import { resolveSnapshot, shortSnapshotId } from "./snapshot-ref";
import { taskState } from "./task-changes";
import { validationFailed } from "./task-errors";

export interface RestoreArgs {
  id?: string;
  dryRun?: boolean;
  /** The edit conversation to record the restore under; a new one is made when omitted. */
  conversationId?: string;
  signal?: AbortSignal;
}

export interface RestoredFile {
  path: string;
  /** write: the file gets the snapshot's bytes and mode back; delete: it did not exist in the snapshot. */
  action: "write" | "delete";
}

export interface RestoreResult {
  snap: string;
  dryRun: boolean;
  files: RestoredFile[];
  /** How far the restore reaches: the task's whole starting tree, or the paths the snapshot captured. */
  basis: "task" | "scoped";
  /** The edit conversation it was recorded under (not for a dry run or when nothing changed). */
  conversation?: string;
  /** Whether the server made the conversation (the caller named none). */
  minted?: boolean;
  editIds: string[];
}

/**
 * snap_fix "restore": puts the work tree back to a snapshot. A task snapshot
 * restores the task's whole starting tree: every file the task changed gets
 * its starting bytes and mode back (from the snapshot, or from HEAD as it was
 * at the start), every file it created is deleted. Any other snapshot
 * restores what it covers: its files, and files under its paths it did not
 * hold are deleted. Files outside that reach are not touched.
 *
 * The changes are computed and written under the work-tree lock through the
 * one write path, and recorded in the edit history (tool name `snap_fix`)
 * under one conversation, so `worksnap history reject --conv ID` takes the
 * restore back. A dry run computes the same list and writes nothing.
 */
export async function restoreSnapshot(ws: Workspace, args: RestoreArgs): Promise<RestoreResult> {
  if (args.id === undefined || args.id.trim() === "") throw validationFailed('action "restore" needs id: the snapshot to restore (snap_fix action "list" shows them)', { arg: "id" });
  const id = resolveSnapshot(ws, args.id, "id");
  if (args.conversationId !== undefined && !CONVERSATION_ID.test(args.conversationId)) throw validationFailed("the conversation id is not valid", { arg: "conversation" });
  const snap = shortSnapshotId(ws, id);
  const task = taskOfSnapshot(ws, id);
  const plan = async (): Promise<ChangePair[]> => {
    if (task) return (await taskState(ws, task, { signal: args.signal })).changes;
    const scope = scopeOf(ws, id);
    return diffEntries(sideEntries(ws.snapshots.load(id).entries, scope), await liveEntries(ws, scope, args.signal));
  };
  const basis = task ? "task" : "scoped";
  const listed = (pairs: ChangePair[]): RestoredFile[] =>
    pairs.map((p) => ({ path: p.change.path, action: (p.from ? "write" : "delete") as RestoredFile["action"] })).sort((a, b) => compareUtf8(a.path, b.path));
  if (args.dryRun) return { snap, dryRun: true, files: listed(await plan()), basis, editIds: [] };
  return withWorktreeLock(ws, async () => {
    const pairs = await plan();
    if (pairs.length === 0) return { snap, dryRun: false, files: [], basis, editIds: [] };
    const changes: WriteChange[] = [];
    for (const p of pairs) {
      const path = p.change.path as RepoPath;
      if (!p.from) changes.push({ kind: "delete", path });
      else changes.push({ kind: "write", path, bytes: await ws.blobs.read(p.from.blob), mode: p.from.mode, operation: "replace" });
    }
    const conversation = args.conversationId ?? newConversationId();
    const outcome = await applyChangesLocked(ws, changes, { recorder: ws.recorder, conversationId: conversation, toolName: "snap_fix", signal: args.signal });
    return { snap, dryRun: false, files: listed(pairs), basis, conversation, minted: args.conversationId === undefined, editIds: outcome.editIds };
  });
}
