/**
 * A patch of many files has the history's checkpoints started as soon as its files are read
 * (EditRecorder.checkpointAhead): one pack, written and made durable by one synchronous writev on an I/O thread
 * while the hunks are applied, which prepare takes when it is exactly the checkpoints the call needs. What the
 * history records must be what it records without the head start: every checkpoint the file as it was read,
 * under the name and edit id prepare gives it; a call that ends before prepare, or whose checkpoints turn out
 * otherwise, leaves nothing of them behind.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import type { RepoPath } from "../../../src/core/repo-path";
import { applyChanges } from "../../../src/ops/write/write-path";
import { historyFixture } from "../history/helpers";

const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const body = (i: number, tag: string) => Array.from({ length: 30 }, (_, l) => (l === 12 ? `line ${l} of ${i} ${tag}` : `line ${l} of file ${i}`)).join("\n") + "\n";
const path = (i: number) => `src/d${i % 3}/f${i}.txt`;
const hunk = (i: number, from: string, to: string) =>
  `--- a/${path(i)}\n+++ b/${path(i)}\n@@ -12,3 +12,3 @@\n line 11 of file ${i}\n-line 12 of ${i} ${from}\n+line 12 of ${i} ${to}\n line 13 of file ${i}\n`;

/** Counts of the history store's batch writes in this test (startPack: ahead; putObjects: at prepare or seal). */
const original = { startPack: FsHistoryStore.prototype.startPack, putObjects: FsHistoryStore.prototype.putObjects };
function countWrites() {
  const n = { startPack: 0, started: 0, putObjects: 0, objects: 0 };
  FsHistoryStore.prototype.startPack = function (this: FsHistoryStore, items) {
    n.startPack++;
    const pack = original.startPack.call(this, items);
    if (pack) n.started++;
    return pack;
  };
  FsHistoryStore.prototype.putObjects = async function (this: FsHistoryStore, items) {
    n.putObjects++;
    n.objects += items.length;
    return original.putObjects.call(this, items);
  };
  return n;
}
afterEach(() => Object.assign(FsHistoryStore.prototype, original));

const packs = (root: string, conv: string) => {
  const dir = join(root, ".mcp/edit_history/packs", conv);
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".pack")) : [];
};
const packTemps = (root: string) => readdirSync(join(root, ".mcp/tmp")).filter((n) => n.endsWith(".pack"));
/** The pack temp files once a discarded pack's write is over (it is removed then, not before the call answers). */
async function packTempsSettled(root: string): Promise<string[]> {
  for (let waited = 0; packTemps(root).length > 0 && waited < 10_000; waited += 20) await Bun.sleep(20);
  return packTemps(root);
}

describe("a many-file patch's checkpoints, started when its files are read", () => {
  test("are the call's: started once, not written again, each the file as read; a reject restores every file", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 30; i++) h.repo.write(path(i), body(i, "old"));
    const before = h.tree();
    const n = countWrites();
    const r = await applyPatchOp(h.ws, { mode: "worktree", patch: Array.from({ length: 30 }, (_, i) => hunk(i, "old", "new")).join(""), mcp_conversation_id: "conv_1_ahead" });
    expect(r.applied).toBe(true);
    // the checkpoints went by the pack started ahead; putObjects wrote the diffs only
    expect(n).toMatchObject({ startPack: 1, started: 1, putObjects: 1, objects: 30 });
    expect(packs(h.repo.root, "conv_1_ahead")).toHaveLength(2);
    expect(packTemps(h.repo.root)).toEqual([]);
    const reader = new FsHistoryStore(h.ws.repo.stateDir);
    const entries = await h.entries();
    expect(entries).toHaveLength(30);
    for (const e of entries) {
      const i = Number(/f(\d+)\.txt$/.exec(e.file_path)![1]);
      expect(dec(await reader.getObject(e.checkpoint_file!))).toBe(body(i, "old"));
      expect(JSON.parse(dec(await reader.getObject(`${e.checkpoint_file}.json`)))).toEqual({ path: e.file_path, mode: "100644", hash: sha256Hex(body(i, "old")) });
      expect(h.read(e.file_path)).toBe(body(i, "new"));
    }
    await h.review({ action: "reject", conversationId: "conv_1_ahead" });
    expect(h.tree()).toEqual(before);
  });

  test("in a conversation that wrote the files before, only those changed by hand since are checkpointed, under the edit ids prepare gives them", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 24; i++) h.repo.write(path(i), body(i, "old"));
    const C = "conv_2_ahead";
    await applyPatchOp(h.ws, { mode: "worktree", patch: Array.from({ length: 24 }, (_, i) => hunk(i, "old", "new")).join(""), mcp_conversation_id: C });
    // 10 files changed by hand since the conversation left them
    for (let i = 0; i < 10; i++) writeFileSync(join(h.repo.root, path(i)), body(i, "hand"));
    const n = countWrites();
    const second = Array.from({ length: 24 }, (_, i) => hunk(i, i < 10 ? "hand" : "new", "again")).join("");
    const r = await applyPatchOp(h.ws, { mode: "worktree", patch: second, mcp_conversation_id: C });
    expect(r.applied).toBe(true);
    expect(n).toMatchObject({ startPack: 1, started: 1, putObjects: 1, objects: 24 });
    const reader = new FsHistoryStore(h.ws.repo.stateDir);
    const entries = (await h.entries()).filter((e) => e.tool_call_index === 1);
    expect(entries).toHaveLength(24);
    for (const e of entries) {
      const i = Number(/f(\d+)\.txt$/.exec(e.file_path)![1]);
      if (i >= 10) {
        expect(e.checkpoint_file).toBeNull();
        continue;
      }
      // a path checkpointed before gets a name of its own, made of this edit's id
      expect(e.checkpoint_file).toContain(e.edit_id.slice(0, 12));
      expect(dec(await reader.getObject(e.checkpoint_file!))).toBe(body(i, "hand"));
    }
    expect(packTemps(h.repo.root)).toEqual([]);
  });

  test("a patch rejected after its files were read leaves no pack, and no temp file once the pack's write is over", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 20; i++) h.repo.write(path(i), body(i, "old"));
    const before = h.tree();
    const n = countWrites();
    const patch = Array.from({ length: 20 }, (_, i) => hunk(i, i === 19 ? "not there" : "old", "new")).join("");
    const r = await applyPatchOp(h.ws, { mode: "worktree", patch, mcp_conversation_id: "conv_3_ahead" });
    expect(r.applied).toBe(false);
    expect(n.started).toBe(1);
    expect(packs(h.repo.root, "conv_3_ahead")).toEqual([]);
    expect(await packTempsSettled(h.repo.root)).toEqual([]);
    expect(h.tree()).toEqual(before);
  });

  test("a file changed between the read and the write: nothing written, the pack started ahead removed", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 20; i++) h.repo.write(path(i), body(i, "old"));
    // the change set is built from the reads; the write path finds one file changed since (REPO_CHANGED)
    const n = countWrites();
    const counted = FsHistoryStore.prototype.startPack;
    FsHistoryStore.prototype.startPack = function (this: FsHistoryStore, items) {
      const pack = counted.call(this, items);
      writeFileSync(join(h.repo.root, path(5)), body(5, "meanwhile"));
      return pack;
    };
    const r = applyPatchOp(h.ws, { mode: "worktree", patch: Array.from({ length: 20 }, (_, i) => hunk(i, "old", "new")).join(""), mcp_conversation_id: "conv_4_ahead" });
    await expect(r).rejects.toMatchObject({ code: "REPO_CHANGED" });
    expect(n.started).toBe(1);
    expect(packs(h.repo.root, "conv_4_ahead")).toEqual([]);
    expect(await packTempsSettled(h.repo.root)).toEqual([]);
    expect(h.read(path(5))).toBe(body(5, "meanwhile"));
    expect(h.read(path(4))).toBe(body(4, "old"));
  });

  test("a write path call without reads of its own (no head start) records as before", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 20; i++) h.repo.write(path(i), body(i, "old"));
    const n = countWrites();
    const enc = (s: string) => new TextEncoder().encode(s);
    await applyChanges(h.ws, Array.from({ length: 20 }, (_, i) => ({ kind: "write" as const, path: path(i) as RepoPath, bytes: enc(body(i, "new")), operation: "edit" as const })), {
      recorder: h.ws.recorder,
      conversationId: "conv_5_ahead",
      toolName: "write_file",
    });
    expect(n).toMatchObject({ startPack: 0, putObjects: 2, objects: 60 });
  });
});
