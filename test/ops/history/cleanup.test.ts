import { describe, expect, test } from "bun:test";
import { cleanupHistory, parseDuration } from "../../../src/ops/history/cleanup";
import { historyFixture } from "./helpers";

const C = "conv_1_aaaa";
const D = "conv_2_bbbb";

describe("cleanup --resolved", () => {
  test("--older-than keeps recent conversations and removes old ones with their reviews; the files stay as they are", async () => {
    await using h = await historyFixture();
    const a = await h.write(C, "a.txt", "a\n");
    await h.review({ action: "reject", editIds: [a] });
    await h.review({ action: "accept", editIds: [a] });
    expect(await h.store.listReviews()).toHaveLength(2);
    const recent = await cleanupHistory(h.ws, h.store, { olderThanMs: 3_600_000 });
    expect(recent.removed).toEqual([]);
    expect(recent.kept).toEqual([{ conversation_id: C, reason: "newer than the age cutoff" }]);
    const later = await cleanupHistory(h.ws, h.store, { olderThanMs: 3_600_000, now: Date.now() + 2 * 3_600_000 });
    expect(later.removed).toEqual([{ conversation_id: C, edits: 1 }]);
    expect(later.reviews_removed).toBe(2);
    expect(await h.store.listConversations()).toEqual([]);
    expect(await h.store.listReviews()).toEqual([]);
    expect(h.tree()).toEqual({ "a.txt": "a\n" });
  });

  test("a conversation joined to a pending one through a move is kept", async () => {
    await using h = await historyFixture();
    const a = await h.write(C, "a.txt", "a\n");
    await h.move(D, "a.txt", "b.txt");
    await h.review({ action: "accept", editIds: [a] });
    const r = await cleanupHistory(h.ws, h.store);
    expect(r.removed).toEqual([]);
    expect(r.kept.map((k) => k.conversation_id)).toEqual([C, D]);
    // After the history is gone, new edits start from a fresh checkpoint and can be reviewed again.
    await h.review({ action: "accept", conversationId: D });
    expect((await cleanupHistory(h.ws, h.store)).removed.map((x) => x.conversation_id)).toEqual([C, D]);
    const e = await h.write(C, "b.txt", "a\nmore\n");
    await h.review({ action: "reject", editIds: [e] });
    expect(h.tree()).toEqual({ "b.txt": "a\n" });
  });

  test("durations", () => {
    expect(parseDuration("30d")).toBe(30 * 86_400_000);
    expect(parseDuration("12h")).toBe(12 * 3_600_000);
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("2w")).toBe(2 * 604_800_000);
    expect(parseDuration("45s")).toBe(45_000);
    expect(parseDuration("soon")).toBeNull();
    expect(parseDuration("-1d")).toBeNull();
  });
});
