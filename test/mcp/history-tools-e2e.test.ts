/**
 * history_list and history_undo through the compiled server and the MCP SDK's
 * client: an agent sees and takes back its own edits, with the review's
 * line-shift compensation and refusals, and nothing of another session's
 * conversations. Two clients are two sessions (two server processes) on one
 * repository, as two agents would be.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, historyEntries as status, mcpSession } from "../helpers/binary";
import { edited, numbered, patch, text } from "../helpers/line-patch";
import { tmpRepo } from "../helpers/tmp-repo";


describe("history tools for agents (own conversation only)", () => {
  test("an agent lists its edits newest first and undoes the middle one: the first and last stay, line shifts compensated; the CLI sees it rejected", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("line", 40);
    repo.write("src/app.txt", text(base));
    await using a = await mcpSession(repo.root);
    const first = await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", base, 2, 1, ["FIRST"]) });
    const conv = first.mcp_conversation_id as string;
    const v1 = edited(base, 2, 1, ["FIRST"]);
    await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", v1, 10, 0, ["SECOND a", "SECOND b"]), mcp_conversation_id: conv });
    const v2 = edited(v1, 10, 0, ["SECOND a", "SECOND b"]);
    await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", v2, 33, 1, ["THIRD"]), mcp_conversation_id: conv });

    const list = await a.call("history_list", { include_diff: true });
    expect(list.conversations).toEqual([{ mcp_conversation_id: conv, edits: 3, pending: 3 }]);
    expect(list.edits.map((e: any) => [e.tool_call_index, e.operation, e.path, e.status, e.added, e.removed])).toEqual([
      [2, "edit", "src/app.txt", "pending", 1, 1],
      [1, "edit", "src/app.txt", "pending", 2, 0],
      [0, "edit", "src/app.txt", "pending", 1, 1],
    ]);
    expect(list.edits[1].diff).toContain("+SECOND a\n+SECOND b\n");
    expect(list.total).toBe(3);
    expect(list.truncated).toBe(false);

    const second = list.edits[1].edit_id as string;
    const undo = await a.call("history_undo", { edit_ids: [second.slice(0, 8)] });
    expect(undo.undone).toEqual([{ edit_id: second, mcp_conversation_id: conv, operation: "edit", path: "src/app.txt" }]);
    expect(undo.files.map((f: any) => [f.path, f.action])).toEqual([["src/app.txt", "written"]]);
    const want = [...base];
    want[2] = "FIRST";
    want[31] = "THIRD";
    expect(readFileSync(join(repo.root, "src/app.txt"), "utf8")).toBe(text(want));
    expect(status(repo.root).map((e) => [e.tool_call_index, e.status])).toEqual([
      [0, "pending"],
      [1, "rejected"],
      [2, "pending"],
    ]);

    // Undoing it again changes nothing; last: 1 takes the newest pending edit (the third).
    expect((await a.call("history_undo", { edit_ids: [second] })).already_undone).toEqual([second]);
    const last = await a.call("history_undo", { last: 1 });
    expect(last.undone.map((u: any) => u.edit_id)).toEqual([list.edits[0].edit_id]);
    expect(readFileSync(join(repo.root, "src/app.txt"), "utf8")).toBe(text(edited(base, 2, 1, ["FIRST"])));
    const tooMany = await a.callError("history_undo", { last: 2 });
    expect(tooMany.code).toBe("INVALID_ARGUMENT");
    expect(tooMany.message).toContain("1 pending edit");
  }, 60_000);

  test("another session sees none of it and can undo none of it (PERMISSION_DENIED), and the files stay as they are", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "one\n");
    await using a = await mcpSession(repo.root);
    await using b = await mcpSession(repo.root);
    const w = await a.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "one\ntwo\n" });
    const conv = w.mcp_conversation_id as string;
    const editId = status(repo.root)[0]!.edit_id as string;

    expect(await b.call("history_list", {})).toEqual({ conversations: [], edits: [], total: 0, truncated: false });
    const listOther = await b.callError("history_list", { mcp_conversation_id: conv });
    expect(listOther.code).toBe("PERMISSION_DENIED");
    expect(listOther.details.reason).toBe("not_own_conversation");
    for (const args of [{ edit_ids: [editId] }, { edit_ids: [editId.slice(0, 8)] }, { last: 1, mcp_conversation_id: conv }]) {
      const e = await b.callError("history_undo", args);
      expect(e.code).toBe("PERMISSION_DENIED");
    }
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("one\ntwo\n");
    expect(status(repo.root)[0]!.status).toBe("pending");

    // B's own write does not let it into A's conversation, even when it names it.
    await b.call("workspace_write_file", { mode: "worktree", path: "b.txt", content: "b\n", mcp_conversation_id: conv });
    expect((await b.call("history_list", {})).edits).toEqual([]);
    expect((await b.callError("history_undo", { last: 1, mcp_conversation_id: conv })).code).toBe("PERMISSION_DENIED");
    // A's conversation is A's: it lists both edits recorded in it.
    expect((await a.call("history_list", {})).edits.map((e: any) => e.path)).toEqual(["b.txt", "a.txt"]);
    // No tool lets an agent accept.
    const tools = (await a.client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("history_list");
    expect(tools).toContain("history_undo");
    expect(tools.filter((n) => /accept|reject|review/.test(n))).toEqual([]);
  }, 60_000);

  test("a conversation id an agent chooses is its own only when its first write opened it", async () => {
    await using repo = await tmpRepo({ git: false });
    await using a = await mcpSession(repo.root);
    await using b = await mcpSession(repo.root);
    await a.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "a\n", mcp_conversation_id: "task-42" });
    await a.call("workspace_write_file", { mode: "worktree", path: "a2.txt", content: "a2\n", mcp_conversation_id: "task-42" });
    // B joins task-42 after A opened it: not B's, and B's own write into it stays reviewable only by a person.
    await b.call("workspace_write_file", { mode: "worktree", path: "b.txt", content: "b\n", mcp_conversation_id: "task-42" });
    expect((await a.call("history_list", { mcp_conversation_id: "task-42" })).edits.map((e: any) => e.path)).toEqual(["b.txt", "a2.txt", "a.txt"]);
    expect((await b.callError("history_list", { mcp_conversation_id: "task-42" })).code).toBe("PERMISSION_DENIED");
    // A snapshot-mode write records nothing and decides nothing: B's first recorded write into "task-b" opens it.
    const snap = await b.call("snapshot_create", { paths: ["."] });
    await b.call("workspace_write_file", { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "x.txt", content: "x\n", mcp_conversation_id: "task-b" });
    expect((await b.call("history_list", {})).conversations).toEqual([]);
    await b.call("workspace_write_file", { mode: "worktree", path: "c.txt", content: "c\n", mcp_conversation_id: "task-b" });
    expect((await b.call("history_list", {})).conversations).toEqual([{ mcp_conversation_id: "task-b", edits: 1, pending: 1 }]);
    const undo = await b.call("history_undo", { last: 1 });
    expect(undo.undone.map((u: any) => u.path)).toEqual(["c.txt"]);
    expect(undo.files).toEqual([{ path: "c.txt", action: "deleted", hash: null }]);
  }, 60_000);

  test("an edit a person accepted is the person's: the agent's undo is PERMISSION_DENIED", async () => {
    await using repo = await tmpRepo({ git: false });
    await using a = await mcpSession(repo.root);
    await a.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "a\n" });
    const id = status(repo.root)[0]!.edit_id as string;
    expect(cli(["history", "accept", id, "--root", repo.root]).code).toBe(0);
    const e = await a.callError("history_undo", { edit_ids: [id] });
    expect(e.code).toBe("PERMISSION_DENIED");
    expect(e.details.reason).toBe("accepted_by_person");
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("a\n");
  }, 60_000);

  test("a later own edit that depends on the undone one: refused with both named, nothing written; undoing both together works", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("row", 20);
    repo.write("f.txt", text(base));
    await using a = await mcpSession(repo.root);
    const r1 = await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", base, 8, 1, ["CHANGED"]) });
    const conv = r1.mcp_conversation_id as string;
    const v1 = edited(base, 8, 1, ["CHANGED"]);
    await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", v1, 8, 1, ["CHANGED AGAIN"]), mcp_conversation_id: conv });
    const [e1, e2] = status(repo.root).map((e) => e.edit_id as string);
    const before = readFileSync(join(repo.root, "f.txt"), "utf8");

    const refused = await a.callError("history_undo", { edit_ids: [e1!] });
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.details.reason).toBe("dependent_edits");
    expect(refused.details.resolution).toBe("undo_together");
    expect(refused.details.dependent_edit_ids).toEqual([e2]);
    expect(refused.message).toContain("pass all of them in edit_ids");
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(before);

    const both = await a.call("history_undo", { edit_ids: [e1!, e2!] });
    expect(both.undone.map((u: any) => u.edit_id).sort()).toEqual([e1, e2].sort());
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(text(base));
  }, 60_000);

  test("a dependent edit of another conversation: refused, and the answer shows only its path and reason, nothing of its content", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("row", 20);
    repo.write("f.txt", text(base));
    await using a = await mcpSession(repo.root);
    await using b = await mcpSession(repo.root);
    await a.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", base, 8, 1, ["MINE"]) });
    const v1 = edited(base, 8, 1, ["MINE"]);
    await b.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", v1, 8, 1, ["SECRET OF B"]), mcp_conversation_id: "b-conv" });
    const entries = status(repo.root);
    const mine = entries.find((e) => e.conversation_id !== "b-conv")!.edit_id as string;
    const theirs = entries.find((e) => e.conversation_id === "b-conv")!.edit_id as string;
    const before = readFileSync(join(repo.root, "f.txt"), "utf8");

    const refused = await a.callError("history_undo", { edit_ids: [mine] });
    expect(refused.details.resolution).toBe("ask_person");
    expect(refused.details.conflicts).toEqual([{ path: "f.txt", reason: "context_mismatch", other_conversation: true }]);
    expect(refused.message).toContain("worksnap history review");
    const all = JSON.stringify(refused);
    expect(all).not.toContain("SECRET OF B");
    expect(all).not.toContain(theirs);
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(before);
    expect(status(repo.root).map((e) => e.status)).toEqual(["pending", "pending"]);
  }, 60_000);

  test("a file changed outside the history since: REPO_CHANGED with the change shown, nothing discarded (a person decides)", async () => {
    await using repo = await tmpRepo({ git: false });
    await using a = await mcpSession(repo.root);
    await a.call("workspace_write_file", { mode: "worktree", path: "notes.txt", content: "agent line\n" });
    writeFileSync(join(repo.root, "notes.txt"), "agent line\nhand-written line\n");
    const e = await a.callError("history_undo", { last: 1 });
    expect(e.code).toBe("REPO_CHANGED");
    expect(e.details.reason).toBe("external_modification");
    expect(e.details.resolution).toBe("ask_person");
    expect(e.details.changes[0].path).toBe("notes.txt");
    expect(e.details.changes[0].diff).toContain("+hand-written line");
    expect(e.message).toContain("ask the user");
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("agent line\nhand-written line\n");
    expect(status(repo.root)[0]!.status).toBe("pending");
  }, 60_000);
});
