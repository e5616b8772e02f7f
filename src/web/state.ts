/**
 * The history as the page shows it: conversations newest first, each with its
 * edits newest first, their lines added and removed, and the reviews that
 * were interrupted. Built from `historyStatus`, the query `worksnap history
 * status` prints, so the page and the CLI list the same entries.
 */
import { basename } from "node:path";
import { diffStat, type DiffStat } from "../ops/diff/stat";
import { historyStatus } from "../ops/history/query";
import type { HistoryStore } from "../ops/history/store";
import type { LogEntry } from "../ops/history/types";
import type { PageConversation, PageState } from "./wire";

const decoder = new TextDecoder();

/** Diff files never change once written: their stats are kept by name for the life of the page. */
export class DiffStats {
  private readonly known = new Map<string, DiffStat>();

  async of(store: HistoryStore, e: LogEntry): Promise<DiffStat> {
    if (e.diff_file === null) return { added: 0, removed: 0 };
    let s = this.known.get(e.diff_file);
    if (!s) {
      s = diffStat(decoder.decode(await store.getObject(e.diff_file)));
      this.known.set(e.diff_file, s);
    }
    return s;
  }
}

export async function pageState(store: HistoryStore, rootDir: string, stats: DiffStats): Promise<PageState> {
  // The stamp first: a change while the state is read makes the next poll see a new stamp and read again.
  const stamp = await store.changeStamp();
  const status = await historyStatus(store);
  const byConv = new Map<string, PageConversation>();
  for (const e of status.entries) {
    let c = byConv.get(e.conversation_id);
    if (!c) {
      c = { id: e.conversation_id, first: e.timestamp, last: e.timestamp, counts: { pending: 0, accepted: 0, rejected: 0 }, edits: [] };
      byConv.set(e.conversation_id, c);
    }
    if (e.timestamp < c.first) c.first = e.timestamp;
    if (e.timestamp > c.last) c.last = e.timestamp;
    c.counts[e.status]++;
    const { added, removed } = await stats.of(store, e);
    c.edits.push({
      edit_id: e.edit_id,
      conversation_id: e.conversation_id,
      tool_call_index: e.tool_call_index,
      timestamp: e.timestamp,
      operation: e.operation,
      file_path: e.file_path,
      source_path: e.source_path,
      tool_name: e.tool_name,
      status: e.status,
      added,
      removed,
    });
  }
  const conversations = [...byConv.values()];
  // Entries come oldest first (the timeline order): reversed, edits are newest first.
  for (const c of conversations) c.edits.reverse();
  conversations.sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : 0));
  return { root: basename(rootDir), stamp, conversations, interrupted: status.interrupted };
}
