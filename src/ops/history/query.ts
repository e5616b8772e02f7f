/** Reading the history: `status` (filtered entries) and `show` (their diffs). Read-only, no locks needed. */
import { invalidArgument } from "../../core/errors";
import { parseRepoPath } from "../../core/repo-path";
import { resolveConversationId, resolveEditId } from "./review";
import type { HistoryStore } from "./store";
import { loadHistory } from "./timeline";
import { EDIT_STATUSES, type EditStatus, type LogEntry } from "./types";

export interface StatusQuery {
  conversation?: string;
  /** Entries whose file_path or source_path is this path. */
  file?: string;
  status?: string;
}

export interface InterruptedReview {
  review_id: string;
  action: string;
  timestamp: string;
  paths: string[];
}

export interface StatusResult {
  entries: LogEntry[];
  /** How many entries the whole history holds. */
  total: number;
  /** Reviews that crashed before finishing; `recover` completes them. */
  interrupted: InterruptedReview[];
}

export async function historyStatus(store: HistoryStore, q: StatusQuery = {}): Promise<StatusResult> {
  const model = await loadHistory(store);
  if (q.status !== undefined && !EDIT_STATUSES.includes(q.status as EditStatus)) {
    throw invalidArgument(`status must be one of ${EDIT_STATUSES.join(", ")}, not ${JSON.stringify(q.status)}`, { status: q.status });
  }
  let entries = model.entries;
  if (q.conversation !== undefined) {
    const conv = resolveConversationId(model, q.conversation);
    entries = entries.filter((e) => e.conversation_id === conv);
  }
  if (q.file !== undefined) {
    const path = parseRepoPath(q.file, "file");
    entries = entries.filter((e) => e.file_path === path || e.source_path === path);
  }
  if (q.status !== undefined) entries = entries.filter((e) => e.status === q.status);
  const interrupted = model.intents.map((r) => ({ review_id: r.review_id, action: r.action, timestamp: r.timestamp, paths: r.finals.map((f) => f.path) }));
  return { entries, total: model.entries.length, interrupted };
}

export interface ShownEdit {
  entry: LogEntry;
  /** The recorded unified diff, or a short header when the change has none (a plain delete or move). */
  diff: string;
}

export interface ShowResult {
  kind: "edit" | "conversation";
  id: string;
  edits: ShownEdit[];
}

const decoder = new TextDecoder();

/** `id` is an edit id or a conversation id (or a unique prefix of either). */
export async function historyShow(store: HistoryStore, id: string): Promise<ShowResult> {
  const model = await loadHistory(store);
  let kind: ShowResult["kind"];
  let entries: LogEntry[];
  let resolved: string;
  const convHits = model.byConversation.has(id) ? [id] : id.length >= 4 ? [...model.byConversation.keys()].filter((c) => c.startsWith(id)) : [];
  const editHit = model.byId.has(id) || (id.length >= 4 && model.entries.some((e) => e.edit_id.startsWith(id)));
  if (model.byConversation.has(id) || (convHits.length > 0 && !editHit && !model.byId.has(id))) {
    kind = "conversation";
    resolved = resolveConversationId(model, id);
    entries = model.entries.filter((e) => e.conversation_id === resolved);
  } else {
    if (convHits.length > 0 && editHit && !model.byId.has(id)) {
      throw invalidArgument(`${id} is the start of both a conversation id and an edit id; give more of it`, { id });
    }
    kind = "edit";
    const e = resolveEditId(model, id);
    resolved = e.edit_id;
    entries = [e];
  }
  const edits: ShownEdit[] = [];
  for (const e of entries) edits.push({ entry: e, diff: e.diff_file ? decoder.decode(await store.getObject(e.diff_file)) : headerOnly(e) });
  return { kind, id: resolved, edits };
}

function headerOnly(e: LogEntry): string {
  if (e.operation === "move") return `diff --git a/${e.source_path} b/${e.file_path}\nrename from ${e.source_path}\nrename to ${e.file_path}\n`;
  if (e.operation === "delete") return `diff --git a/${e.file_path} b/${e.file_path}\ndeleted file\n`;
  return `diff --git a/${e.file_path} b/${e.file_path}\n(no content change)\n`;
}
