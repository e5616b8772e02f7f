/**
 * One tool call's changes are recorded as one batch: checkpoints and diffs made
 * durable together before the files change (one pack file when there are
 * many), one log rewrite after. The same history results with syncfs and with
 * per-file fsync.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import type { RepoPath } from "../../../src/core/repo-path";
import type { WriteChange } from "../../../src/ops/write/write-path";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { FsHistoryStore, PACK_MIN_OBJECTS } from "../../../src/ops/history/fs-history-store";
import { ISLAND_MIN_BYTES } from "../../../src/ops/history/record-diff";
import { HistoryRecorder } from "../../../src/ops/history/recorder";
import { applyChanges } from "../../../src/ops/write/write-path";
import { configureDurability } from "../../../src/repo/durable";
import { temps } from "../../helpers/workspace";
import { historyFixture } from "./helpers";

const C = "conv_1_batch";
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const text = (i: number, v: string) => Array.from({ length: 30 }, (_, k) => `file ${i} line ${k}${k === 15 ? ` ${v}` : ""}\n`).join("");

afterEach(() => configureDurability({ syncfs: true }));

function countingStore(stateDir: string) {
  const store = new FsHistoryStore(stateDir);
  const calls = { putObjects: 0, objects: 0, appendLog: 0, entries: 0 };
  const putObjects = store.putObjects.bind(store);
  const appendLog = store.appendLog.bind(store);
  store.putObjects = async (items) => {
    calls.putObjects++;
    calls.objects += items.length;
    return putObjects(items);
  };
  store.appendLog = async (conv, entries) => {
    calls.appendLog++;
    calls.entries += entries.length;
    return appendLog(conv, entries);
  };
  return { store, calls };
}

describe("recording a many-file tool call", () => {
  for (const syncfs of [true, false]) {
    test(`${syncfs ? "syncfs" : "per-file fsync"}: 40 files, a checkpoint pack, a diff pack and one log rewrite; every checkpoint, diff and entry readable`, async () => {
      configureDurability({ syncfs });
      await using h = await historyFixture();
      for (let i = 0; i < 40; i++) h.repo.write(`d${i % 4}/f${i}.txt`, text(i, "old"));
      const { store, calls } = countingStore(h.ws.repo.stateDir);
      const changes: WriteChange[] = Array.from({ length: 40 }, (_, i) => ({ kind: "write", path: `d${i % 4}/f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
      const ids = (await applyChanges(h.ws, changes, { recorder: new HistoryRecorder(store), conversationId: C, toolName: "edit_file_diff" })).editIds;
      // 40 checkpoints with their 40 metadata files, then 40 diffs
      expect(calls).toEqual({ putObjects: 2, objects: 120, appendLog: 1, entries: 40 });
      const root = join(h.repo.root, ".mcp/edit_history");
      expect(readdirSync(join(root, "packs", C)).filter((n) => n.endsWith(".pack"))).toHaveLength(2);
      expect(existsSync(join(root, "diffs", C))).toBe(false);
      expect(existsSync(join(root, "checkpoints", C))).toBe(false);
      const entries = await h.entries();
      expect(entries.map((e) => e.edit_id).sort()).toEqual([...ids].sort());
      const reader = new FsHistoryStore(h.ws.repo.stateDir); // a fresh store: nothing cached
      for (const e of entries) {
        const i = Number(/f(\d+)\.txt$/.exec(e.file_path)![1]);
        expect(e).toMatchObject({ tool_call_index: 0, hash_before: sha256Hex(text(i, "old")), hash_after: sha256Hex(text(i, "new")), diff_file: `diffs/${C}/${e.edit_id}.diff` });
        expect(dec(await reader.getObject(e.checkpoint_file!))).toBe(text(i, "old"));
        expect(JSON.parse(dec(await reader.getObject(`${e.checkpoint_file}.json`)))).toEqual({ path: e.file_path, mode: "100644", hash: sha256Hex(text(i, "old")) });
        const side = (v: string) => ({ path: e.file_path, bytes: enc(text(i, v)), mode: "100644" as const });
        expect(dec(await reader.getObject(e.diff_file!))).toBe(unifiedDiff(side("old"), side("new")));
        expect(await reader.hasObject(e.diff_file!)).toBe(true);
        expect(h.read(e.file_path)).toBe(text(i, "new"));
      }
      expect(await reader.hasObject(`diffs/${C}/not-there.diff`)).toBe(false);
      await expect(reader.getObject(`diffs/${C}/not-there.diff`)).rejects.toMatchObject({ code: "NOT_FOUND" });
      expect((await reader.objectNames(`checkpoints/${C}`)).size).toBe(80);
      expect(temps(h.repo.root)).toEqual([]);
      // and the history replays: rejecting one edit restores exactly that file
      await h.review({ action: "reject", editIds: [ids[7]!] });
      expect(h.read("d3/f7.txt")).toBe(text(7, "old"));
      expect(h.read("d0/f8.txt")).toBe(text(8, "new"));
    });
  }

  test("a call with fewer objects than a pack keeps spec 002's layout: one file per checkpoint and diff", async () => {
    await using h = await historyFixture();
    const files = Math.floor((PACK_MIN_OBJECTS - 1) / 2);
    for (let i = 0; i < files; i++) h.repo.write(`f${i}.txt`, text(i, "old"));
    await h.call(C, Array.from({ length: files }, (_, i) => ({ kind: "write", path: `f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" })));
    const root = join(h.repo.root, ".mcp/edit_history");
    expect(existsSync(join(root, "packs"))).toBe(false);
    for (const e of await h.entries()) {
      expect(readFileSync(join(root, e.checkpoint_file!), "utf8")).toContain("old");
      expect(readFileSync(join(root, e.diff_file!), "utf8")).toContain("new");
    }
  });

  test("a pack that cannot be written leaves every file, the history and .mcp/tmp as they were", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 12; i++) h.repo.write(`f${i}.txt`, text(i, "old"));
    // A file where the conversation's pack directory must go: prepare's batch fails before any file changes.
    mkdirSync(join(h.repo.root, ".mcp/edit_history/packs"), { recursive: true });
    writeFileSync(join(h.repo.root, ".mcp/edit_history/packs", C), "in the way\n");
    const changes: WriteChange[] = Array.from({ length: 12 }, (_, i) => ({ kind: "write", path: `f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
    await expect(h.call(C, changes)).rejects.toThrow();
    for (let i = 0; i < 12; i++) expect(h.read(`f${i}.txt`)).toBe(text(i, "old"));
    expect(await h.entries()).toEqual([]);
    expect(readdirSync(join(h.repo.root, ".mcp/edit_history/packs"))).toEqual([C]);
    expect(temps(h.repo.root)).toEqual([]);
  });

  test("a diff batch that cannot be written takes every file back and removes the checkpoints written before it", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 12; i++) h.repo.write(`f${i}.txt`, text(i, "old"));
    const store = new FsHistoryStore(h.ws.repo.stateDir);
    const putObjects = store.putObjects.bind(store);
    let batches = 0;
    store.putObjects = async (items) => {
      if (++batches === 2) throw new Error("the disk is full");
      return putObjects(items);
    };
    const changes: WriteChange[] = Array.from({ length: 12 }, (_, i) => ({ kind: "write", path: `f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
    await expect(applyChanges(h.ws, changes, { recorder: new HistoryRecorder(store), conversationId: C, toolName: "edit_file_diff" })).rejects.toThrow("the disk is full");
    expect(batches).toBe(2);
    for (let i = 0; i < 12; i++) expect(h.read(`f${i}.txt`)).toBe(text(i, "old"));
    expect(await h.entries()).toEqual([]);
    expect(readdirSync(join(h.repo.root, ".mcp/edit_history/packs", C))).toEqual([]);
    expect(temps(h.repo.root)).toEqual([]);
  });

  test("a log that cannot be written takes every file back and removes the call's pack", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 12; i++) h.repo.write(`f${i}.txt`, text(i, "old"));
    const store = new FsHistoryStore(h.ws.repo.stateDir);
    let packsBeforeCommit: string[] = [];
    // The log write fails (a full disk, say) after the files changed.
    store.appendLog = async () => {
      packsBeforeCommit = readdirSync(join(h.repo.root, ".mcp/edit_history/packs", C));
      throw new Error("no space left for the log");
    };
    const changes: WriteChange[] = Array.from({ length: 12 }, (_, i) => ({ kind: "write", path: `f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
    await expect(applyChanges(h.ws, changes, { recorder: new HistoryRecorder(store), conversationId: C, toolName: "edit_file_diff" })).rejects.toThrow("no space left");
    // 24 checkpoint objects in a pack, 12 diffs as single files
    expect(packsBeforeCommit).toHaveLength(1);
    for (let i = 0; i < 12; i++) expect(h.read(`f${i}.txt`)).toBe(text(i, "old"));
    expect(await h.entries()).toEqual([]);
    expect(readdirSync(join(h.repo.root, ".mcp/edit_history/packs", C))).toEqual([]);
    expect(readdirSync(join(h.repo.root, ".mcp/edit_history/diffs", C))).toEqual([]);
    expect(temps(h.repo.root)).toEqual([]);
  });

  test("a large file's edits (recorded as islands of its diff) replay: rejecting the middle one of three keeps the others", async () => {
    await using h = await historyFixture();
    const lines = Array.from({ length: 120_000 }, (_, k) => `const v${k} = ${(k * 7919) % 10007};\n`);
    h.repo.write("big.ts", lines.join(""));
    const edit = (ls: string[], at: number, line: string) => ls.map((l, k) => (k === at ? line : l));
    const v1 = edit(lines, 1000, "// one\n");
    const v2 = edit(v1, 60_000, "// two\n");
    const v3 = edit(v2, 110_000, "// three\n");
    await h.write(C, "big.ts", v1.join(""));
    const e2 = await h.write(C, "big.ts", v2.join(""));
    await h.write(C, "big.ts", v3.join(""));
    const diff = readFileSync(join(h.repo.root, ".mcp/edit_history", (await h.entries())[1]!.diff_file!), "utf8");
    expect(v1.join("").length).toBeGreaterThan(ISLAND_MIN_BYTES);
    const side = (ls: string[]) => ({ path: "big.ts", bytes: enc(ls.join("")), mode: "100644" as const });
    expect(diff).toBe(unifiedDiff(side(v1), side(v2)));
    expect(diff).toContain("-const v60000 = ");
    await h.review({ action: "reject", editIds: [e2] });
    expect(h.read("big.ts")).toBe(edit(v1, 110_000, "// three\n").join(""));
  });
});
