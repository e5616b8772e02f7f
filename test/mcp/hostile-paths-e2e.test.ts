import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

/** Every tool that takes a path, called with `p` where the path goes. */
function everyPathCall(p: string, snapshotId: string): [string, Record<string, unknown>][] {
  return [
    ["snapshot_create", { paths: [p] }],
    ["snapshot_list", { mode: "worktree", path: p }],
    ["snapshot_list", { mode: "snapshot", snapshot_id: snapshotId, path: p }],
    ["snapshot_file", { mode: "worktree", path: p }],
    ["snapshot_file", { mode: "snapshot", snapshot_id: snapshotId, path: p }],
    ["snapshot_grep", { mode: "worktree", pattern: "x", paths: [p] }],
    ["snapshot_changes", { from: snapshotId, to: "worktree", paths: [p] }],
    ["snapshot_diff", { from: snapshotId, to: "worktree", paths: [p] }],
    ["snapshot_export", { mode: "worktree", paths: [p] }],
    ["workspace_write_file", { mode: "worktree", path: p, content: "x\n" }],
    ["workspace_write_file", { mode: "snapshot", snapshot_id: snapshotId, path: p, content: "x\n" }],
    ["workspace_delete", { mode: "worktree", path: p }],
    ["workspace_move", { mode: "worktree", from: "a.txt", to: p }],
    ["workspace_move", { mode: "worktree", from: p, to: "b.txt" }],
  ];
}

describe("hostile paths through every tool", () => {
  test("long names: a component over 255 bytes or a path over PATH_MAX is INVALID_ARGUMENT on every tool, never INTERNAL", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const snap = await s.call("snapshot_create", { paths: ["."] });
    const longName = `dir/${"n".repeat(256)}`;
    const longPath = Array.from({ length: 21 }, () => "p".repeat(200)).join("/");
    for (const p of [longName, longPath]) {
      for (const [tool, args] of everyPathCall(p, snap.snapshot_id)) {
        const e = await s.callError(tool, args);
        expect([tool, e.code]).toEqual([tool, "INVALID_ARGUMENT"]);
        expect(e.message).toMatch(/bytes/);
      }
    }
    // in a patch a path is checked like any other bad path: a malformed reject, nothing written
    const patched = await s.call("workspace_apply_patch", { mode: "worktree", patch: `--- /dev/null\n+++ b/${longName}\n@@ -0,0 +1 @@\n+x\n` });
    expect(patched.applied).toBe(false);
    expect(patched.rejects[0].hunks[0].reason).toBe("malformed");
  });

  test("long names: a path that parses but is too long under the root is INVALID_ARGUMENT for writes (ENAMETOOLONG), never INTERNAL", async () => {
    await using repo = await tmpRepo({ name: `ws-${"r".repeat(150)}-` });
    repo.write("a.txt", "a\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const p = `${Array.from({ length: 19 }, () => "q".repeat(200)).join("/")}/${"f".repeat(150)}`;
    for (const [tool, args] of [
      ["workspace_write_file", { mode: "worktree", path: p, content: "x\n" }],
      ["workspace_move", { mode: "worktree", from: "a.txt", to: p }],
    ] as const) {
      const e = await s.callError(tool, args);
      expect([tool, e.code]).toEqual([tool, "INVALID_ARGUMENT"]);
      expect(JSON.stringify(e)).not.toContain(repo.root);
    }
    // reads cannot find what cannot exist
    expect((await s.callError("snapshot_file", { mode: "worktree", path: p })).code).toBe("NOT_FOUND");
  });

  test("case and normalisation: .GIT, .Git, .MCP and their look-alikes are refused by every tool, and never listed", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    // on a case-sensitive file system these are ordinary directories; they must still never be read or written
    for (const dir of [".GIT", ".Mcp", "vendor/.git"]) {
      mkdirSync(join(repo.root, dir), { recursive: true });
      writeFileSync(join(repo.root, dir, "config"), "[core]\n");
    }
    await using s = await mcpSession(repo.root);
    const snap = await s.call("snapshot_create", { paths: ["."] });
    const all = await s.call("snapshot_list", { mode: "worktree", recursive: true });
    expect(all.entries.map((e: any) => e.path)).toEqual(["a.txt"]); // vendor holds a .git: a nested repository, not descended into
    const grep = await s.call("snapshot_grep", { mode: "worktree", pattern: "core" });
    expect(grep.matches).toEqual([]);
    for (const p of [".GIT/config", ".Git/hooks/pre-commit", ".MCP/blobs/x", ".git./config", "GIT~1/config", ".g\u200cit/config", "vendor/.git/config"]) {
      for (const [tool, args] of everyPathCall(p, snap.snapshot_id)) {
        const e = await s.callError(tool, args);
        expect([p, tool, e.code]).toEqual([p, tool, "PERMISSION_DENIED"]);
      }
    }
    const patched = await s.call("workspace_apply_patch", { mode: "worktree", patch: "--- /dev/null\n+++ b/.Git/hooks/post-checkout\n@@ -0,0 +1 @@\n+x\n" });
    expect(patched.applied).toBe(false);
  });
});
