import { describe, expect, test } from "bun:test";
import { cli, mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

/** Small things a user trips over on first use, through the compiled server. */
describe("first use", () => {
  test("STALE_LEASE for an unknown lease carries the current fingerprint (spec 2.3), as a moved lease does", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const live = (await s.call("snapshot_list", { mode: "worktree" })).fingerprint;
    const unknown = `lease_${"0".repeat(32)}`;
    for (const [tool, args] of [
      ["snapshot_file", { mode: "worktree", path: "a.txt", lease_id: unknown }],
      ["workspace_write_file", { mode: "worktree", path: "a.txt", content: "b\n", lease_id: unknown }],
      ["snapshot_changes", { from: "worktree", to: "worktree", lease_id: unknown }],
      ["snapshot_create", { lease_id: unknown }],
    ] as const) {
      const e = await s.callError(tool, args);
      expect([tool, e.code]).toEqual([tool, "STALE_LEASE"]);
      expect(e.details.fingerprint).toEqual(live);
    }
  });

  test("a rejected patch does not announce a new conversation, and records nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_apply_patch", { mode: "worktree", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+two\n" });
    expect(r.applied).toBe(false);
    expect(r.mcp_conversation_id).toBeUndefined();
    expect(r.note).toBeUndefined();
    expect(cli(["history", "status", "--root", repo.root]).stdout).toBe("no recorded edits\n");
  });

  test("a write that changes nothing records nothing and says so", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "same\n");
    repo.write("b.txt", "b\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const w = await s.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "same\n" });
    expect(w).toMatchObject({ changed: [], changed_total: 0, created: false, path: "a.txt" });
    expect(w.note).toContain("Nothing changed: a.txt already holds this content");
    expect(w.mcp_conversation_id).toBeUndefined();
    // a patch whose result equals the file (remove a line and add it back) is the same
    const p = await s.call("workspace_apply_patch", { mode: "worktree", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+b\n" });
    expect(p).toMatchObject({ applied: true, changed: [] });
    expect(p.note).toContain("Nothing changed");
    expect(cli(["history", "status", "--root", repo.root]).stdout).toBe("no recorded edits\n");
    // a write that does change something is recorded, and only its changed path
    const real = await s.call("workspace_apply_patch", {
      mode: "worktree",
      patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-same\n+same\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+c\n",
    });
    expect(real.changed.map((c: any) => c.path)).toEqual(["b.txt"]);
    expect(real.mcp_conversation_id).toBeString();
    const status = cli(["history", "status", "--root", repo.root, "--json"]).json();
    expect(status.entries.map((e: any) => e.file_path)).toEqual(["b.txt"]);
  });

  test("notes use the argument names: max_matches, not maxMatches", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "x\nx\nx\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    const g = await s.call("snapshot_grep", { mode: "worktree", pattern: "x", max_matches: 1 });
    expect(g.note).toContain("max_matches=1");
    expect(g.note).not.toMatch(/maxMatches|maxBytes|fixedStrings/);
    const files = await s.call("snapshot_grep", { mode: "worktree", pattern: "y", max_files: 1, paths: ["."] });
    expect(files.truncated).toBe(false);
  });
});
