/**
 * One tool call's changes are recorded as one batch: checkpoints made durable
 * together before the files change, diffs together after, one log rewrite.
 * The same history results with syncfs and with per-file fsync.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import type { RepoPath } from "../../../src/core/repo-path";
import type { WriteChange } from "../../../src/ops/write-path";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { ISLAND_MIN_BYTES } from "../../../src/ops/history/record-diff";
import { HistoryRecorder } from "../../../src/ops/history/recorder";
import { applyChanges } from "../../../src/ops/write-path";
import { configureDurability } from "../../../src/repo/durable";
import { historyFixture } from "./helpers";

const C = "conv_1_batch";
const enc = (s: string) => new TextEncoder().encode(s);
const text = (i: number, v: string) => Array.from({ length: 30 }, (_, k) => `file ${i} line ${k}${k === 15 ? ` ${v}` : ""}\n`).join("");

afterEach(() => configureDurability({ syncfs: true }));

describe("recording a many-file tool call", () => {
  for (const syncfs of [true, false]) {
    test(`${syncfs ? "syncfs" : "per-file fsync"}: 40 files, two object batches and one log rewrite; every checkpoint, diff and entry in place`, async () => {
      configureDurability({ syncfs });
      await using h = await historyFixture();
      for (let i = 0; i < 40; i++) h.repo.write(`d${i % 4}/f${i}.txt`, text(i, "old"));
      const store = new FsHistoryStore(h.ws.repo.stateDir);
      const calls = { putObjects: 0, appendLog: 0, entries: 0 };
      const putObjects = store.putObjects.bind(store);
      const appendLog = store.appendLog.bind(store);
      store.putObjects = async (items) => {
        calls.putObjects++;
        return putObjects(items);
      };
      store.appendLog = async (conv, entries) => {
        calls.appendLog++;
        calls.entries += entries.length;
        return appendLog(conv, entries);
      };
      const changes: WriteChange[] = Array.from({ length: 40 }, (_, i) => ({ kind: "write", path: `d${i % 4}/f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
      const ids = (await applyChanges(h.ws, changes, { recorder: new HistoryRecorder(store), conversationId: C, toolName: "edit_file_diff" })).editIds;
      expect(calls).toEqual({ putObjects: 2, appendLog: 1, entries: 40 });
      const entries = await h.entries();
      expect(entries.map((e) => e.edit_id).sort()).toEqual([...ids].sort());
      const root = join(h.repo.root, ".mcp/edit_history");
      for (const e of entries) {
        const i = Number(/f(\d+)\.txt$/.exec(e.file_path)![1]);
        expect(e).toMatchObject({ tool_call_index: 0, hash_before: sha256Hex(text(i, "old")), hash_after: sha256Hex(text(i, "new")) });
        expect(readFileSync(join(root, e.checkpoint_file!), "utf8")).toBe(text(i, "old"));
        expect(JSON.parse(readFileSync(join(root, `${e.checkpoint_file}.json`), "utf8"))).toEqual({ path: e.file_path, mode: "100644", hash: sha256Hex(text(i, "old")) });
        expect(readFileSync(join(root, e.diff_file!), "utf8")).toContain(`+file ${i} line 15 new\n`);
        expect(h.read(e.file_path)).toBe(text(i, "new"));
      }
      expect(readdirSync(join(h.repo.root, ".mcp/tmp"))).toEqual([]);
      // and the history replays: rejecting one edit restores exactly that file
      await h.review({ action: "reject", editIds: [ids[7]!] });
      expect(h.read("d3/f7.txt")).toBe(text(7, "old"));
      expect(h.read("d0/f8.txt")).toBe(text(8, "new"));
    });
  }

  test("a diff batch that cannot be written takes every file back and leaves no object, entry or temp file", async () => {
    await using h = await historyFixture();
    for (let i = 0; i < 12; i++) h.repo.write(`f${i}.txt`, text(i, "old"));
    // A file where the conversation's diff directory must go: the commit's batch fails after the files changed.
    mkdirSync(join(h.repo.root, ".mcp/edit_history/diffs"), { recursive: true });
    writeFileSync(join(h.repo.root, ".mcp/edit_history/diffs", C), "in the way\n");
    const changes: WriteChange[] = Array.from({ length: 12 }, (_, i) => ({ kind: "write", path: `f${i}.txt` as RepoPath, bytes: enc(text(i, "new")), operation: "edit" }));
    await expect(h.call(C, changes)).rejects.toThrow();
    for (let i = 0; i < 12; i++) expect(h.read(`f${i}.txt`)).toBe(text(i, "old"));
    expect(await h.entries()).toEqual([]);
    const checkpoints = join(h.repo.root, ".mcp/edit_history/checkpoints", C);
    if (existsSync(checkpoints)) expect(readdirSync(checkpoints)).toEqual([]);
    expect(readdirSync(join(h.repo.root, ".mcp/tmp"))).toEqual([]);
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
