/** One conformance suite for every HistoryStore (STYLE: storage behind an interface, one suite for all). */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { FsHistoryStore, PACK_MIN_OBJECTS } from "../../../src/ops/history/fs-history-store";
import { MemHistoryStore } from "../../../src/ops/history/mem-history-store";
import { checkpointRel, sanitizePath, type HistoryStore } from "../../../src/ops/history/store";
import type { LogEntry, ReviewRecord, WriteIntent } from "../../../src/ops/history/types";
import { tmpDir } from "../../helpers/tmp-repo";

const enc = (s: string) => new TextEncoder().encode(s);

export function entry(over: Partial<LogEntry> = {}): LogEntry {
  return {
    edit_id: crypto.randomUUID(),
    conversation_id: "conv_1_a",
    tool_call_index: 0,
    timestamp: "2026-01-01T00:00:00.000001Z",
    operation: "edit",
    file_path: "a.txt",
    source_path: null,
    tool_name: "edit_file_diff",
    status: "pending",
    diff_file: null,
    checkpoint_file: null,
    hash_before: "0".repeat(64),
    hash_after: "1".repeat(64),
    ...over,
  };
}

function review(over: Partial<ReviewRecord> = {}): ReviewRecord {
  return { review_id: crypto.randomUUID(), timestamp: "2026-01-01T00:00:01.000000Z", action: "reject", statuses: {}, finals: [], ...over };
}

interface Impl {
  name: string;
  open(): Promise<{ store: HistoryStore; dispose(): Promise<void> }>;
}

const IMPLS: Impl[] = [
  { name: "MemHistoryStore", open: async () => ({ store: new MemHistoryStore(), dispose: async () => undefined }) },
  {
    name: "FsHistoryStore",
    open: async () => {
      const dir = tmpDir("ws-hist-");
      return { store: new FsHistoryStore(join(dir.path, ".mcp")), dispose: async () => void (await dir[Symbol.asyncDispose]()) };
    },
  },
];

for (const impl of IMPLS) {
  describe(`HistoryStore conformance: ${impl.name}`, () => {
    const withStore = (fn: (s: HistoryStore) => Promise<void>) => async () => {
      const { store, dispose } = await impl.open();
      try {
        await fn(store);
      } finally {
        await dispose();
      }
    };

    test(
      "a missing log reads as empty and has no version",
      withStore(async (s) => {
        expect(await s.readLog("conv_x")).toEqual([]);
        expect(await s.logVersion("conv_x")).toBeNull();
        expect(await s.listConversations()).toEqual([]);
      }),
    );

    test(
      "append keeps every entry, in order, with exactly the spec fields",
      withStore(async (s) => {
        const a = entry({ tool_call_index: 0 });
        const b = entry({ tool_call_index: 1, operation: "move", source_path: "b.txt" });
        await s.appendLog("conv_1_a", [a]);
        const v1 = await s.logVersion("conv_1_a");
        await s.appendLog("conv_1_a", [b]);
        expect(await s.logVersion("conv_1_a")).not.toBe(v1);
        const log = await s.readLog("conv_1_a");
        expect(log).toEqual([a, b]);
        expect(Object.keys(log[1]!)).toEqual([
          "edit_id",
          "conversation_id",
          "tool_call_index",
          "timestamp",
          "operation",
          "file_path",
          "source_path",
          "tool_name",
          "status",
          "diff_file",
          "checkpoint_file",
          "hash_before",
          "hash_after",
        ]);
      }),
    );

    test(
      "writeLog replaces the log; conversations are listed in byte order",
      withStore(async (s) => {
        await s.appendLog("conv_b", [entry({ conversation_id: "conv_b" })]);
        await s.appendLog("conv_B", [entry({ conversation_id: "conv_B" })]);
        const e = entry({ conversation_id: "conv_b", status: "accepted" });
        await s.writeLog("conv_b", [e]);
        expect(await s.readLog("conv_b")).toEqual([e]);
        expect(await s.listConversations()).toEqual(["conv_B", "conv_b"]);
      }),
    );

    test(
      "the change stamp moves with every log, review and intent change (accepted and rejected have the same length), and only then",
      withStore(async (s) => {
        const stamps = [await s.changeStamp()];
        const next = async () => {
          const now = await s.changeStamp();
          expect(now).not.toBe(stamps.at(-1)!);
          stamps.push(now);
        };
        expect(await s.changeStamp()).toBe(stamps[0]!);
        const e = entry({ status: "accepted" });
        await s.appendLog("conv_1_a", [e]);
        await next();
        expect(await s.changeStamp()).toBe(stamps.at(-1)!);
        await s.writeLog("conv_1_a", [{ ...e, status: "rejected" }]);
        await next();
        await s.writeLog("conv_1_a", [{ ...e, status: "accepted" }]);
        await next();
        const r = review();
        await s.putIntent(r);
        await next();
        await s.putReview(r);
        await next();
        await s.deleteIntent(r.review_id);
        await next();
        await s.removeConversation("conv_1_a");
        await next();
        await s.putObject("diffs/conv_1_b/e1.diff", enc("x"));
        expect(await s.changeStamp()).toBe(stamps.at(-1)!);
      }),
    );

    test(
      "conversation ids that could escape the history directory are refused",
      withStore(async (s) => {
        for (const bad of ["../x", "a/b", "", ".hidden", "x".repeat(200)]) {
          await expect(s.readLog(bad)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
          await expect(s.appendLog(bad, [entry()])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        }
      }),
    );

    test(
      "objects round-trip bytes exactly; missing ones are NOT_FOUND; names are confined",
      withStore(async (s) => {
        const bytes = new Uint8Array([0, 255, 13, 10, 1]);
        await s.putObject("diffs/conv_1_a/e1.diff", bytes);
        expect(await s.getObject("diffs/conv_1_a/e1.diff")).toEqual(bytes);
        expect(await s.hasObject("diffs/conv_1_a/e1.diff")).toBe(true);
        await s.deleteObject("diffs/conv_1_a/e1.diff");
        expect(await s.hasObject("diffs/conv_1_a/e1.diff")).toBe(false);
        await expect(s.getObject("diffs/conv_1_a/e1.diff")).rejects.toMatchObject({ code: "NOT_FOUND" });
        for (const bad of ["logs/x.log", "diffs/../x", "diffs/a/../../b", "checkpoints/a", "diffs/a/b/c", "/etc/passwd"]) {
          await expect(s.putObject(bad, bytes)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        }
      }),
    );

    test(
      "removeConversation removes its log, diffs and checkpoints, and nothing of another conversation",
      withStore(async (s) => {
        await s.appendLog("conv_a", [entry({ conversation_id: "conv_a" })]);
        await s.appendLog("conv_b", [entry({ conversation_id: "conv_b" })]);
        await s.putObject("diffs/conv_a/e.diff", enc("x"));
        await s.putObject(checkpointRel("conv_a", "src/x.ts"), enc("y"));
        await s.putObject("diffs/conv_b/e.diff", enc("z"));
        await s.removeConversation("conv_a");
        expect(await s.listConversations()).toEqual(["conv_b"]);
        expect(await s.hasObject("diffs/conv_a/e.diff")).toBe(false);
        expect(await s.hasObject(checkpointRel("conv_a", "src/x.ts"))).toBe(false);
        expect(await s.hasObject("diffs/conv_b/e.diff")).toBe(true);
      }),
    );

    test(
      "reviews and intents are listed by timestamp and removed by id",
      withStore(async (s) => {
        const late = review({ timestamp: "2026-01-02T00:00:00.000000Z" });
        const early = review({ timestamp: "2026-01-01T00:00:00.000000Z" });
        await s.putReview(late);
        await s.putReview(early);
        await s.putObject(`reviews/${late.review_id}/0.bin`, enc("content"));
        expect((await s.listReviews()).map((r) => r.review_id)).toEqual([early.review_id, late.review_id]);
        await s.deleteReview(late.review_id);
        expect((await s.listReviews()).map((r) => r.review_id)).toEqual([early.review_id]);
        expect(await s.hasObject(`reviews/${late.review_id}/0.bin`)).toBe(false);
        await s.putIntent(late);
        expect(await s.listIntents()).toEqual([late]);
        await s.deleteIntent(late.review_id);
        expect(await s.listIntents()).toEqual([]);
      }),
    );

    test(
      "write intents keep their entries and modes exactly, are listed by timestamp and removed by id",
      withStore(async (s) => {
        const e1 = entry({ edit_id: crypto.randomUUID(), timestamp: "2026-01-02T00:00:00.000001Z" });
        const e2 = entry({ edit_id: crypto.randomUUID(), timestamp: "2026-01-02T00:00:00.000002Z", operation: "create", file_path: "n.txt", hash_before: null });
        const late: WriteIntent = { intent_id: crypto.randomUUID(), timestamp: e1.timestamp, conversation_id: e1.conversation_id, entries: [e1, e2], modes: { [e1.edit_id]: ["100644", "100755"], [e2.edit_id]: [null, "100644"] } };
        const early: WriteIntent = { ...late, intent_id: crypto.randomUUID(), timestamp: "2026-01-01T00:00:00.000000Z", entries: [] };
        expect(await s.listWriteIntents()).toEqual([]);
        await s.putWriteIntent(late);
        await s.putWriteIntent(early);
        expect(await s.listWriteIntents()).toEqual([early, late]);
        await s.deleteWriteIntent(early.intent_id);
        expect(await s.listWriteIntents()).toEqual([late]);
        await s.deleteWriteIntent(late.intent_id);
        await s.deleteWriteIntent(late.intent_id); // removing twice is not an error
        expect(await s.listWriteIntents()).toEqual([]);
      }),
    );

    test(
      "the clock keeps the last timestamp",
      withStore(async (s) => {
        expect(await s.readClock()).toBeNull();
        await s.writeClock("2026-01-01T00:00:00.000001Z");
        expect(await s.readClock()).toBe("2026-01-01T00:00:00.000001Z");
      }),
    );

    test(
      "log locks exclude each other within a process, and are re-taken after release",
      withStore(async (s) => {
        const order: string[] = [];
        let entered!: () => void;
        const inside = new Promise<void>((r) => (entered = r));
        const slow = s.withLogLock(["conv_a", "conv_b"], async () => {
          order.push("first-start");
          entered();
          await Bun.sleep(30);
          order.push("first-end");
        });
        await inside;
        const fast = s.withLogLock(["conv_b"], async () => {
          order.push("second");
        });
        await Promise.all([slow, fast]);
        expect(order).toEqual(["first-start", "first-end", "second"]);
        expect(await s.withLogLock(["conv_a"], async () => 7)).toBe(7);
      }),
    );

    test(
      "a corrupt log line is an error naming the line, never an empty history",
      withStore(async (s) => {
        await s.appendLog("conv_a", [entry({ conversation_id: "conv_a" })]);
        if (s instanceof FsHistoryStore) {
          await Bun.write(join(s.root, "logs", "conv_a.log"), `${readFileSync(join(s.root, "logs", "conv_a.log"), "utf8")}{"edit_id": 3}\n`);
          await expect(s.readLog("conv_a")).rejects.toMatchObject({ code: "INTERNAL", message: expect.stringContaining("line 2") });
        }
      }),
    );
  });
}

describe("FsHistoryStore layout", () => {
  test("regression: history status failed during parallel rejects (a review record removed between listing and reading is left out)", async () => {
    await using dir = tmpDir("ws-hist-");
    const s = new FsHistoryStore(join(dir.path, ".mcp"));
    const kept = review();
    await s.putReview(kept);
    await s.putIntent(kept);
    // a name the listing sees whose file is gone by the time it is read: a dangling symlink stands for it
    for (const sub of ["reviews", "intents"]) symlinkSync(join(dir.path, "gone.json"), join(dir.path, ".mcp", "edit_history", sub, "finished.json"));
    expect((await s.listReviews()).map((r) => r.review_id)).toEqual([kept.review_id]);
    expect((await s.listIntents()).map((r) => r.review_id)).toEqual([kept.review_id]);
  });


  test("spec section 3 layout; the log is JSON Lines; writes leave no temp files", async () => {
    await using dir = tmpDir("ws-hist-");
    const s = new FsHistoryStore(join(dir.path, ".mcp"));
    const e = entry({ diff_file: "diffs/conv_1_a/x.diff", checkpoint_file: checkpointRel("conv_1_a", "src/a b.ts") });
    await s.appendLog("conv_1_a", [e]);
    await s.putObject("diffs/conv_1_a/x.diff", enc("diff"));
    await s.putObject(e.checkpoint_file!, enc("old"));
    const root = join(dir.path, ".mcp", "edit_history");
    expect(readFileSync(join(root, "logs", "conv_1_a.log"), "utf8")).toBe(`${JSON.stringify(e)}\n`);
    expect(existsSync(join(root, "diffs", "conv_1_a", "x.diff"))).toBe(true);
    expect(existsSync(join(root, e.checkpoint_file!))).toBe(true);
    expect(readdirSync(join(dir.path, ".mcp", "tmp"))).toEqual([]);
  });

  test("a log appended by another process while it is read: every read is entries in order up to its last whole line, never an error; the log is appended in place", async () => {
    await using dir = tmpDir("ws-hist-");
    const stateDir = join(dir.path, ".mcp");
    const conv = "conv_2_appended";
    const reader = new FsHistoryStore(stateDir);
    const first = entry({ conversation_id: conv });
    await reader.appendLog(conv, [first]); // the log exists: the process below appends to it
    const log = join(stateDir, "edit_history", "logs", `${conv}.log`);
    const inode = statSync(log).ino;
    const perBatch = 40; // about 17 KB a batch: an append spans pages
    const appender = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "fixtures", "log-appender.ts"), stateDir, conv, "150", String(perBatch)], { stdout: "pipe", stderr: "pipe" });
    let reads = 0;
    let last = 1;
    while (appender.exitCode === null) {
      const n = (await new FsHistoryStore(stateDir).readLog(conv)).length; // a fresh store: no cached text
      expect(n).toBeGreaterThanOrEqual(last);
      last = n;
      reads++;
      await Bun.sleep(0); // lets the child's exit be seen
    }
    expect([await appender.exited, await new Response(appender.stderr).text()]).toEqual([0, ""]);
    const all = await reader.readLog(conv);
    expect(all.length).toBe(1 + 150 * perBatch);
    expect(all.map((e) => e.timestamp)).toEqual([first.timestamp, ...Array.from({ length: 150 * perBatch }, (_, i) => `2026-01-01T00:00:00.${String(i).padStart(6, "0")}Z`)]);
    expect(reads).toBeGreaterThan(5);
    // appended in place: the same file, never rewritten through a temp file
    expect(statSync(log).ino).toBe(inode);
  });

  test("a large batch of one conversation is one pack; its objects keep their names, are listed, read and removed together", async () => {
    await using dir = tmpDir("ws-hist-");
    const s = new FsHistoryStore(join(dir.path, ".mcp"));
    const items = Array.from({ length: PACK_MIN_OBJECTS }, (_, i) => ({
      rel: i % 2 === 0 ? `diffs/conv_p/e${i}.diff` : `checkpoints/conv_p/f${i}.chkpt`,
      bytes: i === 3 ? new Uint8Array([0, 255, 10, 13]) : enc(`object ${i}\n`.repeat(i)),
    }));
    await s.putObjects(items);
    await s.putObject("diffs/conv_p/loose.diff", enc("loose"));
    const root = join(dir.path, ".mcp", "edit_history");
    expect(readdirSync(join(root, "packs", "conv_p"))).toHaveLength(1);
    expect(readdirSync(join(root, "diffs", "conv_p"))).toEqual(["loose.diff"]);
    const fresh = new FsHistoryStore(join(dir.path, ".mcp"));
    for (const it of items) {
      expect(await fresh.getObject(it.rel)).toEqual(it.bytes);
      expect(await fresh.hasObject(it.rel)).toBe(true);
    }
    expect([...(await fresh.objectNames("diffs/conv_p"))].sort()).toEqual([...items.filter((_, i) => i % 2 === 0).map((it) => it.rel.slice(13)), "loose.diff"].sort());
    // a packed object goes only with its whole batch
    await expect(fresh.deleteObjects([items[0]!.rel])).rejects.toMatchObject({ code: "INTERNAL" });
    expect(await fresh.hasObject(items[0]!.rel)).toBe(true);
    await fresh.deleteObjects(items.map((it) => it.rel));
    expect(await fresh.hasObject(items[0]!.rel)).toBe(false);
    expect(readdirSync(join(root, "packs", "conv_p"))).toEqual([]);
    expect(await fresh.getObject("diffs/conv_p/loose.diff")).toEqual(enc("loose"));
    expect(readdirSync(join(dir.path, ".mcp", "tmp"))).toEqual([]);
  });

  test("removing a conversation removes its packs; batches across conversations or of review objects stay single files", async () => {
    await using dir = tmpDir("ws-hist-");
    const s = new FsHistoryStore(join(dir.path, ".mcp"));
    const batch = (conv: string) => Array.from({ length: PACK_MIN_OBJECTS }, (_, i) => ({ rel: `diffs/${conv}/e${i}.diff`, bytes: enc(`${conv} ${i}`) }));
    await s.putObjects(batch("conv_a"));
    await s.putObjects([...batch("conv_b").slice(1), { rel: "diffs/conv_c/e0.diff", bytes: enc("c") }]);
    const root = join(dir.path, ".mcp", "edit_history");
    expect(readdirSync(join(root, "packs"))).toEqual(["conv_a"]);
    expect(readdirSync(join(root, "diffs", "conv_b"))).toHaveLength(PACK_MIN_OBJECTS - 1);
    await s.removeConversation("conv_a");
    expect(existsSync(join(root, "packs", "conv_a"))).toBe(false);
    expect(await s.hasObject("diffs/conv_a/e0.diff")).toBe(false);
    expect(await s.getObject("diffs/conv_b/e1.diff")).toEqual(enc("conv_b 1"));
  });

  test("sanitized checkpoint names keep paths that sanitize alike apart", () => {
    expect(sanitizePath("a/b")).not.toBe(sanitizePath("a_b"));
    expect(sanitizePath("src/x.ts")).toMatch(/^src_x\.ts-[0-9a-f]{12}$/);
    expect(sanitizePath("../../etc")).toMatch(/^etc-[0-9a-f]{12}$/);
    expect(sanitizePath("日本.txt")).toMatch(/^txt-[0-9a-f]{12}$|^_*txt-/);
  });

  test("a lock left by a crashed holder is taken over once stale", async () => {
    await using dir = tmpDir("ws-hist-");
    const s = new FsHistoryStore(join(dir.path, ".mcp"));
    const lockDir = join(s.root, "locks", "conv_a.lock");
    mkdirSync(lockDir, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir, old, old);
    expect(await s.withLogLock(["conv_a"], async () => "taken")).toBe("taken");
    expect(existsSync(lockDir)).toBe(false);
  });
});
