/**
 * The edit history as an agent sees it: the edits of its own conversations,
 * and taking them back. Which conversations are its own is the adapter's to
 * say (an MCP session knows what it wrote, see docs/decisions.md); everything
 * outside them is refused here, so no adapter can show or change another
 * conversation's edits by mistake.
 *
 * Taking an edit back is a reject through the one review (review.ts), with
 * its line-shift compensation and its refusals: a dependent later edit, or a
 * file changed outside the history, stops it and nothing is written. An agent
 * never cascades and never discards outside changes; a person decides those.
 * An agent cannot accept, and cannot take back an edit a person accepted.
 */
import { invalidArgument, notFound, permissionDenied, WorksnapError } from "../../core/errors";
import { diffStat } from "../diff/stat";
import type { Workspace } from "../workspace";
import type { ExternalChange } from "./external";
import type { Conflict } from "./reapply";
import { reviewEdits, type FileWrite } from "./review";
import type { HistoryStore } from "./store";
import type { HistoryModel } from "./timeline";
import type { EditStatus, LogEntry, Operation } from "./types";

export interface OwnEdit {
  edit_id: string;
  mcp_conversation_id: string;
  tool_call_index: number;
  timestamp: string;
  operation: Operation;
  path: string;
  /** A move's source. */
  from?: string;
  status: EditStatus;
  added: number;
  removed: number;
  diff?: string;
  diff_truncated?: boolean;
}

export interface OwnListArgs {
  /** One of the caller's conversations; all of them when omitted. */
  mcp_conversation_id?: string;
  include_diff?: boolean;
  limit?: number;
}

export interface OwnListResult {
  /** The caller's conversations, the most recently written first. */
  conversations: { mcp_conversation_id: string; edits: number; pending: number }[];
  /** Newest first. */
  edits: OwnEdit[];
  total: number;
  truncated: boolean;
}

export const OWN_LIST_DEFAULT = 50;
export const OWN_LIST_MAX = 200;
/** Diff text per edit, and for a whole answer, so it stays small for a model. */
const DIFF_CAP = 4_000;
const DIFF_BUDGET = 40_000;

const decoder = new TextDecoder();

/**
 * The caller's conversations are given oldest write first (`owned`). An id
 * outside them is PERMISSION_DENIED whether or not it exists.
 */
export async function listOwnEdits(store: HistoryStore, owned: readonly string[], args: OwnListArgs): Promise<OwnListResult> {
  const limit = args.limit ?? OWN_LIST_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > OWN_LIST_MAX) throw invalidArgument(`limit must be an integer from 1 to ${OWN_LIST_MAX}`, { arg: "limit" });
  const convs = args.mcp_conversation_id === undefined ? [...owned].reverse() : [ownConversation(owned, args.mcp_conversation_id)];
  const conversations: OwnListResult["conversations"] = [];
  const all: LogEntry[] = [];
  for (const conv of convs) {
    const log = await store.readLog(conv);
    conversations.push({ mcp_conversation_id: conv, edits: log.length, pending: log.filter((e) => e.status === "pending").length });
    all.push(...log);
  }
  all.sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : b.tool_call_index - a.tool_call_index));
  const shown = all.slice(0, limit);
  let budget = DIFF_BUDGET;
  const edits: OwnEdit[] = [];
  for (const e of shown) {
    const diff = e.diff_file ? decoder.decode(await store.getObject(e.diff_file)) : "";
    const out: OwnEdit = {
      edit_id: e.edit_id,
      mcp_conversation_id: e.conversation_id,
      tool_call_index: e.tool_call_index,
      timestamp: e.timestamp,
      operation: e.operation,
      path: e.file_path,
      status: e.status,
      ...diffStat(diff),
    };
    if (e.source_path !== null) out.from = e.source_path;
    if (args.include_diff) {
      const room = Math.max(0, Math.min(DIFF_CAP, budget));
      out.diff = diff.length > room ? diff.slice(0, room) : diff;
      out.diff_truncated = diff.length > room;
      budget -= out.diff.length;
    }
    edits.push(out);
  }
  return { conversations, edits, total: all.length, truncated: shown.length < all.length };
}

export interface OwnUndoArgs {
  /** Edit ids (or unique prefixes of at least 8 characters) of the caller's own edits. */
  edit_ids?: string[];
  /** The last N pending edits of a conversation (mcp_conversation_id, or the one the caller wrote last). */
  last?: number;
  mcp_conversation_id?: string;
}

export interface OwnUndoResult {
  undone: { edit_id: string; mcp_conversation_id: string; operation: Operation; path: string; from?: string }[];
  /** Edits that were already rejected. */
  already_undone: string[];
  files: FileWrite[];
}

export const UNDO_MAX = 100;
const MIN_PREFIX = 8;

/** Rejects the caller's own pending edits (review.ts), choosing and checking them under the work-tree lock. */
export async function undoOwnEdits(ws: Workspace, store: HistoryStore, owned: readonly string[], args: OwnUndoArgs): Promise<OwnUndoResult> {
  const mine = new Set(owned);
  if ((args.edit_ids === undefined) === (args.last === undefined)) throw invalidArgument("give edit_ids or last (one of them)", { arg: "edit_ids" });
  if (args.edit_ids !== undefined && (args.edit_ids.length === 0 || args.edit_ids.length > UNDO_MAX)) {
    throw invalidArgument(`edit_ids takes 1 to ${UNDO_MAX} ids`, { arg: "edit_ids" });
  }
  if (args.last !== undefined && (!Number.isInteger(args.last) || args.last < 1 || args.last > UNDO_MAX)) {
    throw invalidArgument(`last must be an integer from 1 to ${UNDO_MAX}`, { arg: "last" });
  }
  if (args.mcp_conversation_id !== undefined) ownConversation(owned, args.mcp_conversation_id);
  if (owned.length === 0) throw permissionDenied(noConversationMessage, { reason: "not_own_conversation" });
  const pick = (model: HistoryModel): LogEntry[] => {
    const own = model.entries.filter((e) => mine.has(e.conversation_id));
    const picked = args.edit_ids !== undefined ? args.edit_ids.map((id) => ownEdit(model, own, id, args.mcp_conversation_id)) : lastPending(own, args.last!, args.mcp_conversation_id ?? owned[owned.length - 1]!);
    for (const e of picked) {
      if (e.status === "accepted") {
        throw permissionDenied(`edit ${e.edit_id} (${e.file_path}) was accepted by a person; only a person can reject it now (worksnap history review)`, {
          reason: "accepted_by_person",
          edit_id: e.edit_id,
        });
      }
    }
    return picked;
  };
  try {
    const r = await reviewEdits(ws, store, { action: "reject", pick });
    return {
      undone: r.changed.map((c) => ({ edit_id: c.edit_id, mcp_conversation_id: c.conversation_id, operation: c.operation, path: c.file_path, ...(c.source_path ? { from: c.source_path } : {}) })),
      already_undone: r.unchanged,
      files: r.files,
    };
  } catch (err) {
    throw err instanceof WorksnapError ? forAgent(err, mine) : err;
  }
}

const noConversationMessage = "this session has no edit conversation of its own yet: an agent can list and undo only the edits its own writes recorded";

function ownConversation(owned: readonly string[], id: string): string {
  if (!owned.includes(id)) {
    throw permissionDenied(
      `conversation ${id} is not one of this session's own conversations; an agent can see and undo only its own edits (a person reviews the others with worksnap history review)`,
      { reason: "not_own_conversation", mcp_conversation_id: id },
    );
  }
  return id;
}

function ownEdit(model: HistoryModel, own: LogEntry[], id: string, conv: string | undefined): LogEntry {
  let hits = own.filter((e) => e.edit_id === id);
  if (hits.length === 0 && id.length >= MIN_PREFIX) hits = own.filter((e) => e.edit_id.startsWith(id));
  if (hits.length > 1) throw invalidArgument(`edit id prefix ${id} is ambiguous among this session's edits; give more of it`, { edit_id: id });
  const e = hits[0];
  if (e === undefined) {
    if (model.byId.has(id) || (id.length >= MIN_PREFIX && model.entries.some((x) => x.edit_id.startsWith(id)))) {
      throw permissionDenied(`edit ${id} belongs to another conversation; an agent can undo only its own edits`, { reason: "not_own_conversation", edit_id: id });
    }
    throw notFound(`no edit ${id} in this session's conversations`, { edit_id: id });
  }
  if (conv !== undefined && e.conversation_id !== conv) throw invalidArgument(`edit ${e.edit_id} is not in conversation ${conv}`, { edit_id: e.edit_id, mcp_conversation_id: conv });
  return e;
}

function lastPending(own: LogEntry[], n: number, conv: string): LogEntry[] {
  const pending = own.filter((e) => e.conversation_id === conv && e.status === "pending");
  if (pending.length < n) {
    throw invalidArgument(`conversation ${conv} has ${pending.length} pending edit${pending.length === 1 ? "" : "s"}, fewer than last: ${n}; nothing was undone`, {
      arg: "last",
      pending: pending.length,
    });
  }
  return pending.slice(pending.length - n);
}

/**
 * A refusal as an agent may see it: what concerns its own conversations in
 * full, what concerns others only as a path and a reason, and a resolution it
 * can act on ("undo_together": name the dependent edits too) or one it cannot
 * ("ask_person": cascades into other conversations and discarding outside
 * changes are a person's decisions).
 */
function forAgent(err: WorksnapError, mine: Set<string>): WorksnapError {
  const d = err.details;
  if (d.reason === "dependent_edits" || d.reason === "conflict") {
    const conflicts = (d.conflicts as Conflict[] | undefined) ?? [];
    const shown = conflicts.map((c) =>
      mine.has(c.conversation_id) ? { edit_id: c.edit_id, path: c.path, reason: c.reason, message: c.message } : { path: c.path, reason: c.reason, other_conversation: true },
    );
    const ids = conflicts.filter((c) => mine.has(c.conversation_id)).map((c) => c.edit_id);
    const allOwn = conflicts.length > 0 && conflicts.every((c) => mine.has(c.conversation_id) && c.cascadable);
    const details: Record<string, unknown> = { reason: d.reason, conflicts: shown.slice(0, 20), resolution: allOwn ? "undo_together" : "ask_person" };
    if (allOwn) details.dependent_edit_ids = [...new Set(ids)];
    const message = allOwn
      ? `later edits of this session depend on the one to undo and would no longer apply (${[...new Set(ids)].join(", ")}); nothing was written`
      : `the undo would break edits that are not this session's, or the history cannot be replayed around it (${[...new Set(conflicts.map((c) => c.path))].join(", ")}); nothing was written`;
    return new WorksnapError(err.code, message, details);
  }
  if (d.reason === "external_modification") {
    const changes = ((d.changes as ExternalChange[] | undefined) ?? []).slice(0, 5);
    return new WorksnapError(err.code, err.message, { reason: d.reason, changes, resolution: "ask_person" });
  }
  return err;
}

