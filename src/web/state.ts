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
    // The page needs neither the stored objects' names nor the hashes.
    const { diff_file: _d, checkpoint_file: _c, hash_before: _b, hash_after: _a, ...shown } = e;
    c.edits.push({ ...shown, ...(await stats.of(store, e)) });
  }
  const conversations = [...byConv.values()];
  // Entries come oldest first (the timeline order): reversed, edits are newest first.
  for (const c of conversations) c.edits.reverse();
  conversations.sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : 0));
  return { root: basename(rootDir), stamp, conversations, interrupted: status.interrupted };
}
