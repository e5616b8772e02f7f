/**
 * snapshot_grep, snapshot_changes, snapshot_diff and snapshot_export through
 * the compiled binary and the MCP SDK's own client (which validates every
 * structuredContent against the tool's output schema).
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { mcpSession } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write(".gitignore", "ignored/\n");
  repo.write("src/a.ts", "export const foo = 1;\nfoo();\n");
  repo.write("src/b.ts", "nothing\n");
  repo.write("docs/notes.md", "foo in docs\nline two\n");
  repo.write("bin/tool.sh", "#!/bin/sh\n", 0o755);
  repo.write("data.bin", new Uint8Array([0, 102, 111, 111]));
  repo.write("ignored/skip.ts", "foo\n");
  repo.commit();
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("compare tools end to end", () => {
  test("tools/list offers the four tools with hybrid output schemas and short descriptions", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const { tools } = await s.client.listTools();
    for (const name of ["snapshot_grep", "snapshot_changes", "snapshot_diff", "snapshot_export"]) {
      const t = tools.find((x) => x.name === name);
      expect(t).toBeDefined();
      expect(t!.description!.length).toBeLessThan(2000);
      const branches = (t!.outputSchema as unknown as { oneOf: { properties?: { cache_hint?: { const?: string } } }[] }).oneOf;
      expect(branches.map((b) => b.properties?.cache_hint?.const ?? "error")).toEqual(["immutable", "until_dirty", "error"]);
      expect(t!.inputSchema.type).toBe("object");
    }
  });

  test("snapshot_changes and snapshot_diff: immutable between snapshots, worktree branch with a lease, git apply reproduces the target", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using scratch = tmpDir("ws-e2e-apply-");
    await using s = await mcpSession(repo.root);
    const a = (await s.call("snapshot_create", { paths: ["."] })).snapshot_id;
    for (const name of readdirSync(repo.root)) if (name !== ".git" && name !== ".mcp") cpSync(join(repo.root, name), join(scratch.path, name), { recursive: true });
    repo.write("src/a.ts", "export const foo = 2;\nfoo();\nbar();\n");
    rmSync(join(repo.root, "src/b.ts"));
    repo.write("new/file.txt", "fresh\n");

    const live = await s.call("snapshot_changes", { from: a, to: "worktree" });
    expect(live).toMatchObject({ cache_hint: "until_dirty", from: a, to: "worktree", truncated: false });
    expect(live.changes).toEqual([
      { path: "new/file.txt", status: "added" },
      { path: "src/a.ts", status: "modified" },
      { path: "src/b.ts", status: "deleted" },
    ]);
    const b = (await s.call("snapshot_create", { paths: ["."] })).snapshot_id;
    const fixed = await s.call("snapshot_changes", { from: a.slice(7, 20), to: b });
    expect(fixed).toMatchObject({ cache_hint: "immutable", from: a, to: b, counts: { total: 3 } });
    expect("lease_id" in fixed).toBe(false);
    expect(await s.call("snapshot_changes", { from: b, to: b })).toMatchObject({ changes: [], counts: { total: 0 } });

    const diff = await s.call("snapshot_diff", { from: a, to: b });
    expect(diff).toMatchObject({ cache_hint: "immutable", truncated: false, omitted: [] });
    const applied = Bun.spawnSync(["git", "apply", "-"], { cwd: scratch.path, stdin: new Blob([diff.diff]), stderr: "pipe" });
    expect(applied.stderr.toString()).toBe("");
    expect(readFileSync(join(scratch.path, "src/a.ts"), "utf8")).toBe("export const foo = 2;\nfoo();\nbar();\n");
    expect(existsSync(join(scratch.path, "src/b.ts"))).toBe(false);
    expect(readFileSync(join(scratch.path, "new/file.txt"), "utf8")).toBe("fresh\n");

    const liveDiff = await s.call("snapshot_diff", { from: a, to: "worktree", paths: ["src/a.ts"], lease_id: live.lease_id });
    expect(liveDiff).toMatchObject({ cache_hint: "until_dirty", lease_id: live.lease_id, files: [{ path: "src/a.ts", status: "modified" }] });
    repo.write("another.txt", "the git status changes\n");
    const stale = await s.callError("snapshot_diff", { from: a, to: "worktree", lease_id: live.lease_id });
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint).toMatchObject({ head_oid: expect.any(String) });
  });

  test("snapshot_grep in both modes, paging with a cursor, and a cursor from another query refused", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using s = await mcpSession(repo.root);
    const live = await s.call("snapshot_grep", { mode: "worktree", pattern: "foo" });
    expect(live).toMatchObject({ cache_hint: "until_dirty", files_searched: 5, candidates: 6, files_matched: 2, binary_skipped: 1, truncated: false });
    expect(live.matches.map((m: { path: string; line: number; col: number }) => `${m.path}:${m.line}:${m.col}`)).toEqual([
      "docs/notes.md:1:1",
      "src/a.ts:1:14",
      "src/a.ts:2:1",
    ]);
    const id = (await s.call("snapshot_create", { lease_id: live.lease_id })).snapshot_id;
    const info = await s.call("snapshot_info", { snapshot_id: id });
    expect(info.manifest_stats.files).toBe(5); // every searched candidate was touched, the binary file was not
    const first = await s.call("snapshot_grep", { mode: "snapshot", snapshot_id: id, pattern: "FOO", case_insensitive: true, max_matches: 2 });
    expect(first).toMatchObject({ cache_hint: "immutable", snapshot_id: id, truncated: true });
    const rest = await s.call("snapshot_grep", { mode: "snapshot", snapshot_id: id, pattern: "FOO", case_insensitive: true, max_matches: 2, cursor: first.cursor });
    expect([...first.matches, ...rest.matches].map((m: { path: string; line: number }) => `${m.path}:${m.line}`)).toEqual([
      "docs/notes.md:1",
      "src/a.ts:1",
      "src/a.ts:2",
    ]);
    const foreign = await s.callError("snapshot_grep", { mode: "snapshot", snapshot_id: id, pattern: "foo", max_matches: 2, cursor: first.cursor });
    expect(foreign.code).toBe("INVALID_ARGUMENT");
    const none = await s.call("snapshot_grep", { mode: "worktree", pattern: "foo", include: ["*.rs"] });
    expect(none).toMatchObject({ matches: [], candidates: 0, files_searched: 0, truncated: false });
    expect((await s.callError("snapshot_grep", { mode: "worktree", pattern: "" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("snapshot_grep", { mode: "worktree", pattern: "foo", paths: ["../etc"] })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("snapshot_grep", { mode: "snapshot", snapshot_id: "0123456789abcdef", pattern: "x" })).code).toBe("NOT_FOUND");
    const invalid = await s.callError("snapshot_grep", { mode: "worktree", pattern: "[unclosed" });
    expect(invalid.code).toBe("INVALID_ARGUMENT");
  });

  test(
    "a catastrophic regex is refused or cut off by the time budget while the server keeps answering other requests",
    async () => {
      await using repo = await tmpRepo();
      repo.write("min.js", `${"a".repeat(30_000)}!=\n`);
      repo.write("ok.txt", "x = 1\n");
      repo.commit();
      await using s = await mcpSession(repo.root);
      const refused = await s.callError("snapshot_grep", { mode: "worktree", pattern: "(a+)+$" });
      expect(refused.code).toBe("INVALID_ARGUMENT");
      expect(refused.details.reason).toBe("catastrophic_backtracking");

      const order: string[] = [];
      const slow = s.raw("snapshot_grep", { mode: "worktree", pattern: "\\w*\\w*\\w*\\w*=" }).then((r) => {
        order.push("grep");
        return r;
      });
      const list = await s.call("snapshot_list", { mode: "worktree" });
      order.push("list");
      const grepOk = await s.call("snapshot_grep", { mode: "worktree", pattern: "x", fixed_strings: true });
      order.push("literal grep");
      expect(list.entries.map((e: { path: string }) => e.path)).toEqual(["min.js", "ok.txt"]);
      expect(grepOk.matches.map((m: { path: string }) => m.path)).toEqual(["ok.txt"]);
      const r = await slow;
      expect(order).toEqual(["list", "literal grep", "grep"]);
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ timed_out: true, truncated: true });
      expect(typeof r.structuredContent.cursor).toBe("string");
      // Still serving afterwards.
      expect((await s.call("snapshot_list", { mode: "worktree" })).entries.length).toBe(2);
    },
    60_000,
  );

  test("snapshot_export writes .mcp/exports/<hex>.tar atomically and answers path, size and sha256; a deleted blob is NOT_FOUND", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "alpha\n");
    repo.write("b/c.txt", "gamma\n");
    await using s = await mcpSession(repo.root);
    const id = (await s.call("snapshot_create", { paths: ["."] })).snapshot_id;
    const r = await s.call("snapshot_export", { snapshot_id: id });
    expect(r).toMatchObject({ cache_hint: "immutable", snapshot_id: id, path: `.mcp/exports/${id.slice(7)}.tar`, files: 2 });
    const bytes = readFileSync(join(repo.root, r.path));
    expect(bytes.length).toBe(r.bytes);
    expect(sha256(bytes)).toBe(r.sha256);
    expect((await s.call("snapshot_export", { snapshot_id: id })).sha256).toBe(r.sha256);

    const wt = await s.call("snapshot_export", { mode: "worktree", paths: ["b"] });
    expect(wt).toMatchObject({ cache_hint: "until_dirty", files: 1 });
    expect(typeof wt.lease_id).toBe("string");
    expect((await s.callError("snapshot_export", {})).code).toBe("INVALID_ARGUMENT");

    rmSync(join(repo.root, r.path));
    const blob = `sha256:${sha256(new TextEncoder().encode("gamma\n"))}`;
    const hex = blob.slice(7);
    rmSync(join(repo.root, ".mcp", "blobs", "sha256", hex.slice(0, 2), hex.slice(2)));
    const err = await s.callError("snapshot_export", { snapshot_id: id });
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toContain(blob);
    expect(err.details).toMatchObject({ blob, path: "b/c.txt" });
    expect(existsSync(join(repo.root, r.path))).toBe(false);
    // nothing of the export is left in .mcp/tmp (the server's spare files are its own)
    expect(readdirSync(join(repo.root, ".mcp", "tmp")).filter((n) => !n.endsWith("-spares"))).toEqual([]);
    expect(statSync(join(repo.root, ".mcp", "exports")).isDirectory()).toBe(true);
  });
});
