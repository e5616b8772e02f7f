/**
 * The whole history as one timeline: every conversation's entries and every
 * finished review, ordered by their timestamps (one clock for all, see
 * clock.ts). Within a conversation that is tool_call_index order, since the
 * clock only moves forward.
 *
 * A review replays a *component*: the paths connected to the edits it changes
 * through moves (a file moved from a to b ties a and b together). Every event
 * of every conversation on those paths is replayed in timeline order, so a
 * later conversation's edits to the same file are kept, not lost.
 */
import { compareUtf8 } from "../../core/byte-order";
import type { HistoryStore } from "./store";
import type { LogEntry, ReviewRecord } from "./types";

export interface HistoryModel {
  /** All entries, in timeline order. */
  entries: LogEntry[];
  byId: Map<string, LogEntry>;
  byConversation: Map<string, LogEntry[]>;
  /** Finished reviews, in timeline order. */
  reviews: ReviewRecord[];
  /** Reviews interrupted before they finished writing. */
  intents: ReviewRecord[];
}

export function compareEntries(a: LogEntry, b: LogEntry): number {
  return a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.tool_call_index - b.tool_call_index || compareUtf8(a.edit_id, b.edit_id);
}

export async function loadHistory(store: HistoryStore): Promise<HistoryModel> {
  const byConversation = new Map<string, LogEntry[]>();
  const entries: LogEntry[] = [];
  for (const conv of await store.listConversations()) {
    const log = await store.readLog(conv);
    byConversation.set(conv, log);
    for (const e of log) entries.push(e);
  }
  entries.sort(compareEntries);
  const byId = new Map<string, LogEntry>();
  for (const e of entries) byId.set(e.edit_id, e);
  return { entries, byId, byConversation, reviews: await store.listReviews(), intents: await store.listIntents() };
}

export function pathsOf(e: LogEntry): string[] {
  return e.source_path ? [e.source_path, e.file_path] : [e.file_path];
}

/** Union-find over paths, joined by moves. */
export class PathGroups {
  private readonly parent = new Map<string, string>();

  constructor(entries: LogEntry[]) {
    for (const e of entries) {
      this.find(e.file_path);
      if (e.source_path) this.union(e.source_path, e.file_path);
    }
  }

  find(p: string): string {
    let root = this.parent.get(p);
    if (root === undefined) {
      this.parent.set(p, p);
      return p;
    }
    while (root !== this.parent.get(root)) root = this.parent.get(root)!;
    let cur = p;
    while (cur !== root) {
      const next = this.parent.get(cur)!;
      this.parent.set(cur, root);
      cur = next;
    }
    return root;
  }

  private union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }

  /** Every path connected to one of `seeds`. */
  component(seeds: Iterable<string>): Set<string> {
    const roots = new Set<string>();
    for (const s of seeds) roots.add(this.find(s));
    const out = new Set<string>();
    for (const p of this.parent.keys()) if (roots.has(this.find(p))) out.add(p);
    return out;
  }
}

export type TimelineEvent = { kind: "edit"; entry: LogEntry } | { kind: "review"; review: ReviewRecord };

/** The entries and reviews touching `paths`, in timeline order. */
export function eventsFor(model: HistoryModel, paths: Set<string>): TimelineEvent[] {
  const events: (TimelineEvent & { at: string; tie: number })[] = [];
  for (const e of model.entries) if (paths.has(e.file_path)) events.push({ kind: "edit", entry: e, at: e.timestamp, tie: events.length });
  for (const r of model.reviews) {
    if (r.finals.some((f) => paths.has(f.path))) events.push({ kind: "review", review: r, at: r.timestamp, tie: events.length });
  }
  events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.tie - b.tie));
  return events.map(({ at: _at, tie: _tie, ...ev }) => ev as TimelineEvent);
}
