/** The recorder on the real write path (spec 002 sections 2.2-4): what one write leaves in the history. */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import type { RepoPath } from "../../../src/core/repo-path";
import type { EditChange } from "../../../src/ops/write/edit-recorder";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { MemHistoryStore } from "../../../src/ops/history/mem-history-store";
import { HistoryRecorder } from "../../../src/ops/history/recorder";
import { afterRel } from "../../../src/ops/history/store";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { applyChanges } from "../../../src/ops/write/write-path";
import { historyFixture } from "./helpers";

const C = "conv_1_aaaa";
const enc = (s: string) => new TextEncoder().encode(s);
const p = (s: string) => s as RepoPath;

describe("HistoryRecorder", () => {
  test("an edit of an existing file: checkpoint on first touch only, hashes, the diff, exactly the spec fields", async () => {
    await using h = await historyFixture();
    h.repo.write("src/a.txt", "one\ntwo\n");
    const e1 = await h.write(C, "src/a.txt", "one\nTWO\n");
    const e2 = await h.write(C, "src/a.txt", "one\nTWO\nthree\n");
    const [x, y] = await h.entries();
    expect(x).toEqual({
      edit_id: e1,
      conversation_id: C,
      tool_call_index: 0,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      operation: "edit",
      file_path: "src/a.txt",
      source_path: null,
      tool_name: "edit_file_diff",
      status: "pending",
      diff_file: `diffs/${C}/${e1}.diff`,
      checkpoint_file: expect.stringMatching(new RegExp(`^checkpoints/${C}/src_a\\.txt-[0-9a-f]{12}\\.chkpt$`)),
      hash_before: sha256Hex("one\ntwo\n"),
      hash_after: sha256Hex("one\nTWO\n"),
    });
    expect(y).toMatchObject({ edit_id: e2, tool_call_index: 1, checkpoint_file: null, hash_before: x!.hash_after });
    expect(y!.timestamp > x!.timestamp).toBe(true);
    const root = join(h.repo.root, ".mcp/edit_history");
    expect(readFileSync(join(root, x!.checkpoint_file!), "utf8")).toBe("one\ntwo\n");
    expect(JSON.parse(readFileSync(join(root, `${x!.checkpoint_file}.json`), "utf8"))).toEqual({ path: "src/a.txt", mode: "100644", hash: sha256Hex("one\ntwo\n") });
    expect(readFileSync(join(root, x!.diff_file!), "utf8")).toBe("diff --git a/src/a.txt b/src/a.txt\n--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    expect(readFileSync(join(root, "logs", `${C}.log`), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))).toEqual([x, y]);
  });

  test("create, delete and move entries; a create needs no checkpoint", async () => {
    await using h = await historyFixture();
    h.repo.write("old.txt", "old\n");
    await h.write(C, "new.txt", "new\n");
    await h.del(C, "old.txt");
    await h.move(C, "new.txt", "dir/moved.txt");
    const [c, d, m] = await h.entries();
    expect(c).toMatchObject({ operation: "create", tool_name: "write_file", hash_before: null, hash_after: sha256Hex("new\n"), checkpoint_file: null });
    expect(d).toMatchObject({ operation: "delete", tool_name: "delete_file", hash_before: sha256Hex("old\n"), hash_after: null, checkpoint_file: expect.any(String) });
    expect(m).toMatchObject({ operation: "move", tool_name: "move_file", file_path: "dir/moved.txt", source_path: "new.txt", hash_before: sha256Hex("new\n"), hash_after: sha256Hex("new\n"), checkpoint_file: null });
  });

  test("the changes of one tool call share its index and are recorded deletes, moves, writes", async () => {
    await using h = await historyFixture();
    h.repo.write("a.txt", "a\n");
    h.repo.write("gone.txt", "g\n");
    const ids = await h.call(C, [
      { kind: "write", path: p("z.txt"), bytes: enc("z\n") },
      { kind: "move", from: p("a.txt"), path: p("b.txt") },
      { kind: "delete", path: p("gone.txt") },
    ]);
    const entries = await h.entries();
    expect(entries.map((e) => [e.operation, e.tool_call_index])).toEqual([
      ["delete", 0],
      ["move", 0],
      ["create", 0],
    ]);
    expect(ids).toEqual([entries[2]!.edit_id, entries[1]!.edit_id, entries[0]!.edit_id]); // in the caller's order
    await h.write(C, "z.txt", "zz\n");
    expect((await h.entries())[3]!.tool_call_index).toBe(1);
  });

  test("a file changed outside the history between two edits of a conversation gets a new checkpoint", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "1\n");
    await h.write(C, "f.txt", "2\n");
    writeFileSync(join(h.repo.root, "f.txt"), "by hand\n");
    const e = await h.write(C, "f.txt", "3\n");
    const entry = (await h.entries())[1]!;
    expect(entry.checkpoint_file).toEndWith(`.${e}.chkpt`);
    expect(readFileSync(join(h.repo.root, ".mcp/edit_history", entry.checkpoint_file!), "utf8")).toBe("by hand\n");
  });

  test("binary content: the diff says so and the bytes after are stored for replay", async () => {
    await using h = await historyFixture();
    const e = await h.write(C, "b.bin", new Uint8Array([0, 1, 2]));
    const entry = (await h.entries())[0]!;
    expect(readFileSync(join(h.repo.root, ".mcp/edit_history", entry.diff_file!), "utf8")).toContain("Binary files /dev/null and b/b.bin differ");
    expect(new Uint8Array(readFileSync(join(h.repo.root, ".mcp/edit_history", afterRel(C, e))))).toEqual(new Uint8Array([0, 1, 2]));
  });

  test("an invalid conversation id writes nothing", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "1\n");
    await expect(h.write("../escape", "f.txt", "2\n")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(h.read("f.txt")).toBe("1\n");
    expect(await h.entries()).toEqual([]);
  });

  test("a history that fails to record takes the write back: no entry, no file change, no stray objects", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "1\n");
    const store = new FsHistoryStore(h.ws.repo.stateDir);
    store.appendLog = async () => {
      throw new Error("disk full");
    };
    const recorder = new HistoryRecorder(store);
    await expect(applyChanges(h.ws, [{ kind: "write", path: p("f.txt"), bytes: enc("2\n") }], { recorder, conversationId: C, toolName: "write_file" })).rejects.toThrow("disk full");
    expect(h.read("f.txt")).toBe("1\n");
    expect(await h.entries()).toEqual([]);
    const root = join(h.repo.root, ".mcp/edit_history");
    for (const dir of ["diffs", "checkpoints"]) if (existsSync(join(root, dir, C))) expect(readdirSync(join(root, dir, C))).toEqual([]);
  });

  test("abort after prepare leaves the history as it was (memory store)", async () => {
    const store = new MemHistoryStore();
    const rec = new HistoryRecorder(store);
    const change: EditChange = { operation: "edit", path: p("f.txt"), before: { bytes: enc("x\n"), mode: "100644" } };
    const prepared = await rec.prepare({ conversationId: C, toolName: "edit_file_diff" }, [change]);
    expect(await store.hasObject(((prepared.token as any).drafts[0].checkpoint) as string)).toBe(true);
    await rec.abort(prepared);
    expect(await store.hasObject(((prepared.token as any).drafts[0].checkpoint) as string)).toBe(false);
    expect(await store.listConversations()).toEqual([]);
  });

  test("snapshot-mode writes change no file and are not recorded", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "1\n");
    const { snapshot_id } = await createSnapshot(h.ws, { paths: ["."] });
    await writeFileOp(h.ws, { mode: "snapshot", snapshot_id, path: "f.txt", content: "2\n", mcp_conversation_id: C });
    expect(h.read("f.txt")).toBe("1\n");
    expect(await h.entries()).toEqual([]);
  });
});
