/**
 * `cleanup --resolved` (spec 002 section 8): removes the history of
 * conversations whose every edit is accepted or rejected.
 *
 * A replay starts from the earliest checkpoint of a file and runs through
 * every conversation that touched it (timeline.ts), so a conversation's
 * history can only go together with every other conversation it shares files
 * with (through moves too): such a group is removed when all of its
 * conversations are resolved (and old enough), and kept whole otherwise.
 * After removal the files simply have no history; the next edit to one starts
 * a new checkpoint.
 */
import { compareUtf8 } from "../../core/byte-order";
import { repoChanged } from "../../core/errors";
import type { Workspace } from "../workspace";
import { withWorktreeLock } from "../write/worktree-lock";
import { parseMicros } from "./clock";
import type { HistoryStore } from "./store";
import { loadHistory, PathGroups, pathsOf } from "./timeline";

export interface CleanupRequest {
  /** Only conversations whose last edit is older than this many milliseconds. */
  olderThanMs?: number;
  now?: number;
}

export interface CleanupResult {
  removed: { conversation_id: string; edits: number }[];
  kept: { conversation_id: string; reason: string }[];
  reviews_removed: number;
}

export function cleanupHistory(ws: Workspace, store: HistoryStore, req: CleanupRequest = {}): Promise<CleanupResult> {
  return withWorktreeLock(ws, () => cleanupLocked(store, req));
}

export async function cleanupLocked(store: HistoryStore, req: CleanupRequest): Promise<CleanupResult> {
  const model = await loadHistory(store);
  if (model.intents.length > 0) {
    throw repoChanged("a review was interrupted and has not finished writing; run `worksnap history recover` before cleaning up", {
      review_ids: model.intents.map((r) => r.review_id),
    });
  }
  const now = req.now ?? Date.now();
  const groups = new PathGroups(model.entries);
  // Conversations joined by the file groups they touch.
  const convOfRoot = new Map<string, string>();
  const parent = new Map<string, string>();
  const find = (c: string): string => {
    while (parent.get(c) !== c) c = parent.get(c)!;
    return c;
  };
  for (const conv of model.byConversation.keys()) parent.set(conv, conv);
  for (const e of model.entries) {
    for (const p of pathsOf(e)) {
      const root = groups.find(p);
      const other = convOfRoot.get(root);
      if (other === undefined) convOfRoot.set(root, e.conversation_id);
      else if (find(other) !== find(e.conversation_id)) parent.set(find(other), find(e.conversation_id));
    }
  }
  const why = new Map<string, string>();
  for (const [conv, entries] of model.byConversation) {
    const pending = entries.filter((e) => e.status === "pending").length;
    if (pending > 0) why.set(conv, `${pending} pending edit${pending === 1 ? "" : "s"}`);
    else if (req.olderThanMs !== undefined) {
      const last = Math.max(...entries.map((e) => (parseMicros(e.timestamp) ?? 0) / 1000));
      if (now - last < req.olderThanMs) why.set(conv, "newer than the age cutoff");
    }
  }
  const blockedGroups = new Map<string, string>();
  for (const [conv, reason] of why) if (!blockedGroups.has(find(conv))) blockedGroups.set(find(conv), `${conv}: ${reason}`);

  const result: CleanupResult = { removed: [], kept: [], reviews_removed: 0 };
  const removedConvs = new Set<string>();
  for (const conv of [...model.byConversation.keys()].sort(compareUtf8)) {
    const blocked = blockedGroups.get(find(conv));
    if (blocked) {
      result.kept.push({ conversation_id: conv, reason: blocked.startsWith(`${conv}:`) ? blocked.slice(conv.length + 2) : `shares files with ${blocked}` });
      continue;
    }
    const entries = model.byConversation.get(conv)!;
    await store.withLogLock([conv], () => store.removeConversation(conv));
    removedConvs.add(conv);
    result.removed.push({ conversation_id: conv, edits: entries.length });
  }
  const remaining = new Set<string>();
  for (const e of model.entries) if (!removedConvs.has(e.conversation_id)) for (const p of pathsOf(e)) remaining.add(p);
  for (const r of model.reviews) {
    if (r.finals.every((f) => !remaining.has(f.path))) {
      await store.deleteReview(r.review_id);
      result.reviews_removed++;
    }
  }
  return result;
}

/** "30d", "12h", "90m", "45s", "2w" as milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!m) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(m[1]) * unit;
}
