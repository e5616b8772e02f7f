/**
 * The review workflow end to end, as a person meets it: an agent edits
 * through the compiled server (MCP SDK client), then `worksnap history`
 * (the same binary) rejects and re-accepts. Plain directories, no git.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession } from "../helpers/binary";
import { numbered, patch, text } from "../helpers/line-patch";
import { tmpRepo } from "../helpers/tmp-repo";

function history(root: string, ...args: string[]) {
  const r = cli(["history", ...args, "--root", root]);
  if (r.code !== 0) throw new Error(`history ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r;
}

describe("review of an agent's edits, end to end", () => {
  test("three patches in one conversation, the second shifting lines for the third: reject the second leaves exactly the first and third; accept restores all three", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("line", 40);
    repo.write("src/app.txt", text(base));
    await using s = await mcpSession(repo.root);

    const first = await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", base, 2, 1, ["FIRST"]) });
    const conv = first.mcp_conversation_id as string;
    expect(conv).toMatch(/^conv_\d+_[0-9a-f]+$/);
    expect(first.note).toContain(conv);
    const v1 = [...base];
    v1[2] = "FIRST";
    const second = await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", v1, 10, 0, ["SECOND a", "SECOND b", "SECOND c"]), mcp_conversation_id: conv });
    expect(second.mcp_conversation_id).toBe(conv);
    expect(second.note).toBeUndefined();
    const v2 = [...v1];
    v2.splice(10, 0, "SECOND a", "SECOND b", "SECOND c");
    await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", v2, 33, 1, ["THIRD"]), mcp_conversation_id: conv });
    const v3 = [...v2];
    v3[33] = "THIRD";
    expect(readFileSync(join(repo.root, "src/app.txt"), "utf8")).toBe(text(v3));

    const entries = history(repo.root, "status", "--json").json().entries;
    expect(entries.map((e: any) => [e.conversation_id, e.tool_call_index, e.tool_name, e.operation, e.file_path, e.status])).toEqual([
      [conv, 0, "edit_file_diff", "edit", "src/app.txt", "pending"],
      [conv, 1, "edit_file_diff", "edit", "src/app.txt", "pending"],
      [conv, 2, "edit_file_diff", "edit", "src/app.txt", "pending"],
    ]);
    const [e1, e2, e3] = entries.map((e: any) => e.edit_id as string);
    expect(history(repo.root, "show", e2).stdout).toContain("+SECOND a\n+SECOND b\n+SECOND c\n");

    const rejected = history(repo.root, "reject", e2);
    expect(rejected.stdout).toContain(`rejected ${e2.slice(0, 8)}`);
    const want = [...base];
    want[2] = "FIRST";
    want[30] = "THIRD";
    expect(readFileSync(join(repo.root, "src/app.txt"), "utf8")).toBe(text(want));
    expect(history(repo.root, "status", "--json").json().entries.map((e: any) => [e.edit_id, e.status])).toEqual([
      [e1, "pending"],
      [e2, "rejected"],
      [e3, "pending"],
    ]);

    history(repo.root, "accept", e2);
    expect(readFileSync(join(repo.root, "src/app.txt"), "utf8")).toBe(text(v3));

    // The agent keeps working after the review: its next patch is recorded on top, in the same conversation.
    await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.txt", v3, 0, 1, ["ZERO"]), mcp_conversation_id: conv });
    expect(history(repo.root, "status", "--json", "--conv", conv).json().entries.map((e: any) => e.tool_call_index)).toEqual([0, 1, 2, 3]);
  }, 60_000);

  test("create -> edit -> move -> edit: rejecting the move keeps the file and both edits at its first path; accepting moves it again", async () => {
    await using repo = await tmpRepo({ git: false });
    await using s = await mcpSession(repo.root);
    const lines = numbered("a", 12);
    const created = await s.call("workspace_write_file", { mode: "worktree", path: "pkg/a.txt", content: text(lines) });
    const conv = created.mcp_conversation_id as string;
    const v1 = [...lines];
    v1[1] = "EDIT ONE";
    await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("pkg/a.txt", lines, 1, 1, ["EDIT ONE"]), mcp_conversation_id: conv });
    await s.call("workspace_move", { mode: "worktree", from: "pkg/a.txt", to: "lib/b.txt", mcp_conversation_id: conv });
    await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("lib/b.txt", v1, 9, 1, ["EDIT TWO"]), mcp_conversation_id: conv });
    const v2 = [...v1];
    v2[9] = "EDIT TWO";

    const entries = history(repo.root, "status", "--json").json().entries;
    expect(entries.map((e: any) => [e.operation, e.tool_name, e.source_path, e.file_path])).toEqual([
      ["create", "write_file", null, "pkg/a.txt"],
      ["edit", "edit_file_diff", null, "pkg/a.txt"],
      ["move", "move_file", "pkg/a.txt", "lib/b.txt"],
      ["edit", "edit_file_diff", null, "lib/b.txt"],
    ]);
    const move = entries[2].edit_id as string;

    history(repo.root, "reject", move);
    expect(readFileSync(join(repo.root, "pkg/a.txt"), "utf8")).toBe(text(v2));
    expect(existsSync(join(repo.root, "lib"))).toBe(false);

    history(repo.root, "accept", move);
    expect(readFileSync(join(repo.root, "lib/b.txt"), "utf8")).toBe(text(v2));
    expect(existsSync(join(repo.root, "pkg"))).toBe(false);

    history(repo.root, "reject", "--conv", conv);
    expect(existsSync(join(repo.root, "lib/b.txt"))).toBe(false);
    expect(existsSync(join(repo.root, "pkg/a.txt"))).toBe(false);
  }, 60_000);

  test("a conversation id the server has not seen is used as given; snapshot-mode writes are not recorded; delete is reviewable", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("keep.txt", "precious\n");
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_delete", { mode: "worktree", path: "keep.txt", mcp_conversation_id: "my-own-id" });
    expect(r.mcp_conversation_id).toBe("my-own-id");
    const snap = await s.call("snapshot_create", { paths: ["."] });
    await s.call("workspace_write_file", { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "x.txt", content: "x\n", mcp_conversation_id: "my-own-id" });
    const entries = history(repo.root, "status", "--json").json().entries;
    expect(entries.map((e: any) => [e.conversation_id, e.operation, e.tool_name])).toEqual([["my-own-id", "delete", "delete_file"]]);
    history(repo.root, "reject", "--conv", "my-own-id");
    expect(readFileSync(join(repo.root, "keep.txt"), "utf8")).toBe("precious\n");
  }, 60_000);

  test("one patch over 30 files (its history objects stored as one pack): show, reject one edit, reject the rest, accept again", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("row", 12);
    const names = Array.from({ length: 30 }, (_, i) => `pkg/f${String(i).padStart(2, "0")}.txt`);
    for (const n of names) repo.write(n, text(base));
    await using s = await mcpSession(repo.root);
    const all = names.map((n, i) => patch(n, base, 5, 1, [`EDIT ${i}`])).join("");
    const r = await s.call("workspace_apply_patch", { mode: "worktree", patch: all });
    const conv = r.mcp_conversation_id as string;
    const edited = (i: number) => text(base.map((l, k) => (k === 5 ? `EDIT ${i}` : l)));
    names.forEach((n, i) => expect(readFileSync(join(repo.root, n), "utf8")).toBe(edited(i)));

    const entries = history(repo.root, "status", "--json").json().entries;
    expect(entries.length).toBe(30);
    // The per-object files are not on disk one by one; show reads them through the store.
    expect(existsSync(join(repo.root, ".mcp", "edit_history", "diffs", conv, `${entries[7].edit_id}.diff`))).toBe(false);
    expect(readdirSync(join(repo.root, ".mcp", "edit_history", "packs", conv)).filter((f) => f.endsWith(".pack")).length).toBeGreaterThan(0);
    expect(history(repo.root, "show", entries[7].edit_id).stdout).toContain("-row 6\n+EDIT 7\n");

    history(repo.root, "reject", entries[7].edit_id);
    expect(readFileSync(join(repo.root, names[7] as string), "utf8")).toBe(text(base));
    expect(readFileSync(join(repo.root, names[8] as string), "utf8")).toBe(edited(8));
    history(repo.root, "reject", "--conv", conv);
    for (const n of names) expect(readFileSync(join(repo.root, n), "utf8")).toBe(text(base));
    // Accepting the conversation leaves its rejected edits rejected; named by id they are applied again.
    history(repo.root, "accept", "--conv", conv);
    for (const n of names) expect(readFileSync(join(repo.root, n), "utf8")).toBe(text(base));
    history(repo.root, "accept", ...entries.map((e: { edit_id: string }) => e.edit_id));
    names.forEach((n, i) => expect(readFileSync(join(repo.root, n), "utf8")).toBe(edited(i)));
  }, 60_000);
});
