/**
 * The workspace tools through the compiled binary and the MCP SDK's own
 * Client (which validates every structured answer against the tool's output
 * schema): a model's session of reads and writes, leases, snapshot mode,
 * rejects, errors, the edit history, and huge inputs.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";
import { POOL_PREFIX, RESERVE_START } from "../../src/repo/tmp-reserve";

const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("");

describe("workspace tools end to end", () => {
  test("a session: write, read under the returned lease, patch, move, delete, all in one reviewable conversation", async () => {
    await using repo = await tmpRepo();
    repo.write("src/app.ts", ten);
    repo.commit();
    await using s = await mcpSession(repo.root);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["workspace_apply_patch", "workspace_write_file", "workspace_delete", "workspace_move"]));

    const w = await s.call("workspace_write_file", { mode: "worktree", path: "src/new.ts", content: "export const x = 1;\n" });
    expect(w.cache_hint).toBe("until_dirty");
    expect(w.created).toBe(true);
    expect(w.note).toContain(w.mcp_conversation_id);
    const conv = w.mcp_conversation_id;

    const rd = await s.call("snapshot_file", { mode: "worktree", path: "src/app.ts", lease_id: w.lease_id });
    expect(rd.lease_id).toBe(w.lease_id);
    const p = await s.call("workspace_apply_patch", {
      mode: "worktree",
      lease_id: rd.lease_id,
      mcp_conversation_id: conv,
      patch: "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n",
    });
    expect(p.applied).toBe(true);
    expect(p.note).toBeUndefined();
    expect(p.changed).toEqual([{ path: "src/app.ts", status: "modified", blob: expect.stringMatching(/^sha256:/) }]);
    expect(readFileSync(join(repo.root, "src/app.ts"), "utf8")).toBe(ten.replace("line 3\n", "LINE THREE\n"));

    const m = await s.call("workspace_move", { mode: "worktree", lease_id: p.lease_id, mcp_conversation_id: conv, from: "src/new.ts", to: "lib/new.ts" });
    expect(m.changed[0]).toMatchObject({ path: "lib/new.ts", from: "src/new.ts", status: "renamed" });
    const d = await s.call("workspace_delete", { mode: "worktree", lease_id: m.lease_id, mcp_conversation_id: conv, path: "lib/new.ts" });
    expect(d.changed).toEqual([{ path: "lib/new.ts", status: "deleted" }]);
    expect(repo.git("status", "--porcelain")).toBe(" M src/app.ts\n");

    // Every write is in the edit history, under the one conversation.
    const hist = cli(["history", "status", "--json", "--root", repo.root]);
    expect(hist.code).toBe(0);
    const text = hist.stdout;
    expect(text).toContain(conv);
    expect((text.match(new RegExp(conv, "g")) ?? []).length).toBeGreaterThanOrEqual(4);
  });

  test("a server stages later writes in spare files it made between calls; on exit it leaves only its unused spares, empty, as a pool", async () => {
    await using repo = await tmpRepo();
    const N = 60;
    for (let i = 0; i < N; i++) repo.write(`src/f${i}.txt`, `one ${i}\ntwo\n`);
    repo.commit();
    const patch = (from: string, to: string) =>
      Array.from({ length: N }, (_, i) => `--- a/src/f${i}.txt\n+++ b/src/f${i}.txt\n@@ -1,2 +1,2 @@\n-${from} ${i}\n+${to} ${i}\n two\n`).join("");
    const tmp = join(repo.root, ".mcp", "tmp");
    const sparesDir = () => readdirSync(tmp).find((n) => n.endsWith("-spares"));
    {
      await using s = await mcpSession(repo.root);
      const first = await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("one", "ONE"), mcp_conversation_id: "spares" });
      expect(first.changed_total).toBe(N);
      // between calls: the replaced files go and the spares are made again (a server keeps RESERVE_START from start-up)
      for (let k = 0; k < 400; k++) {
        const dir = sparesDir();
        if (dir && readdirSync(join(tmp, dir)).length === Math.max(N, RESERVE_START) && readdirSync(tmp).length === 1) break;
        await Bun.sleep(25);
      }
      const dir = sparesDir()!;
      expect(readdirSync(tmp)).toEqual([dir]);
      const spareInodes = new Set(readdirSync(join(tmp, dir)).map((n) => statSync(join(tmp, dir, n)).ino));
      const second = await s.call("workspace_apply_patch", { mode: "worktree", patch: patch("ONE", "uno"), mcp_conversation_id: "spares", lease_id: first.lease_id });
      expect(second.changed_total).toBe(N);
      for (let i = 0; i < N; i++) {
        expect(readFileSync(join(repo.root, `src/f${i}.txt`), "utf8")).toBe(`uno ${i}\ntwo\n`);
        expect(spareInodes.has(statSync(join(repo.root, `src/f${i}.txt`)).ino)).toBe(true);
      }
      // both calls are in the history, and reviewable
      const hist = cli(["history", "status", "--json", "--root", repo.root]);
      expect(hist.code).toBe(0);
      expect((hist.stdout.match(/"spares"/g) ?? []).length).toBeGreaterThanOrEqual(1);
    }
    // on exit: the unused spares, empty, wait as one pool for the next process; nothing else is left
    const left = readdirSync(tmp);
    expect(left.length).toBeLessThanOrEqual(1);
    for (const pool of left) {
      expect(pool.startsWith(POOL_PREFIX)).toBe(true);
      for (const n of readdirSync(join(tmp, pool))) expect(statSync(join(tmp, pool, n)).size).toBe(0);
    }
  });

  test("errors come back structured: STALE_LEASE with the fingerprint, PERMISSION_DENIED, INVALID_ARGUMENT, REPO_CHANGED", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.commit();
    await using s = await mcpSession(repo.root);
    const rd = await s.call("snapshot_file", { mode: "worktree", path: "a.txt" });
    writeFileSync(join(repo.root, "outside.txt"), "someone else\n");
    const stale = await s.callError("workspace_apply_patch", { mode: "worktree", lease_id: rd.lease_id, patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 1\n+x\n" });
    expect(stale.code).toBe("STALE_LEASE");
    expect(Object.keys(stale.details.fingerprint).sort()).toEqual(["head_oid", "index_oid", "status_hash"]);
    expect((await s.callError("workspace_write_file", { mode: "worktree", path: ".git/config", content: "x" })).code).toBe("PERMISSION_DENIED");
    expect((await s.callError("workspace_write_file", { mode: "worktree", path: "../x", content: "x" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("workspace_move", { mode: "worktree", from: "a.txt", to: "a.txt" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("workspace_delete", { mode: "worktree", path: "nope" })).code).toBe("NOT_FOUND");
    const cas = await s.callError("workspace_write_file", { mode: "worktree", path: "a.txt", content: "x", expected_blob: rd.blob.replace(/.$/, "0") === rd.blob ? rd.blob.replace(/.$/, "1") : rd.blob.replace(/.$/, "0") });
    expect(cas.code).toBe("REPO_CHANGED");
    expect(cas.details.current_blob).toBe(rd.blob);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe(ten);
  });

  test("a rejected patch answers with every reject and writes nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.write("b.txt", ten);
    repo.commit();
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_apply_patch", {
      mode: "worktree",
      patch: "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-line 1\n+ok\n--- a/a.txt\n+++ b/a.txt\n@@ -5,2 +5,2 @@\n-line five\n+x\n line 6\n",
    });
    expect(r.applied).toBe(false);
    expect(r.rejects).toEqual([{ path: "a.txt", hunks: [expect.objectContaining({ index: 0, reason: "context_mismatch", expected_at: { line: 5, text: ["line 5", "line 6"] } })] }]);
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("a patch sent as base64: applies its bytes (a Latin-1 file, as git applies the same patch); bad base64 is INVALID_ARGUMENT; a non-UTF-8 name is a reject", async () => {
    await using repo = await tmpRepo();
    repo.write("legacy.txt", Buffer.from("caf\xe9\nna\xefve\n", "latin1"));
    repo.commit();
    repo.write("legacy.txt", Buffer.from("caf\xe9 cr\xe8me\nna\xefve\n", "latin1"));
    const patch = Bun.spawnSync(["git", "diff"], { cwd: repo.root }).stdout;
    const expected = readFileSync(join(repo.root, "legacy.txt"));
    repo.git("checkout", "-q", "--", ".");
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_apply_patch", { mode: "worktree", patch: `base64:${patch.toString("base64")}` });
    expect(r.applied).toBe(true);
    expect(readFileSync(join(repo.root, "legacy.txt")).equals(expected)).toBe(true);
    const bad = await s.callError("workspace_apply_patch", { mode: "worktree", patch: "base64:not base64!" });
    expect(bad.code).toBe("INVALID_ARGUMENT");
    expect(bad.message).toContain("patch starts with base64: but the rest is not valid base64");
    const quoted = ['diff --git "a/caf\\351.txt" "b/caf\\351.txt"', "new file mode 100644", "--- /dev/null", '+++ "b/caf\\351.txt"', "@@ -0,0 +1 @@", "+x", ""].join("\n");
    const named = await s.call("workspace_apply_patch", { mode: "worktree", patch: quoted });
    expect(named.applied).toBe(false);
    expect(named.rejects[0].hunks[0].message).toContain("is not valid UTF-8");
    expect(readdirSync(repo.root).filter((n) => n !== ".git" && n !== ".mcp")).toEqual(["legacy.txt"]);
  });

  test("snapshot mode: edits derive new snapshots and leave the disk and git status as they were", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", ten);
    repo.commit();
    repo.write("wip.txt", "uncommitted\n");
    await using s = await mcpSession(repo.root);
    const status = repo.git("status", "--porcelain");
    const snap = await s.call("snapshot_create", { paths: ["."] });
    const p = await s.call("workspace_apply_patch", { mode: "snapshot", snapshot_id: snap.snapshot_id, patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 1\n+first\n" });
    expect(p.cache_hint).toBe("immutable");
    expect(p.base_snapshot_id).toBe(snap.snapshot_id);
    const w = await s.call("workspace_write_file", { mode: "snapshot", snapshot_id: p.snapshot_id, path: "new.txt", content: "n\n" });
    const mv = await s.call("workspace_move", { mode: "snapshot", snapshot_id: w.snapshot_id, from: "wip.txt", to: "done/wip.txt" });
    const del = await s.call("workspace_delete", { mode: "snapshot", snapshot_id: mv.snapshot_id, path: "new.txt" });
    const list = await s.call("snapshot_list", { mode: "snapshot", snapshot_id: del.snapshot_id, recursive: true });
    expect(list.entries.map((e: { path: string }) => e.path)).toEqual(["a.txt", "done", "done/wip.txt"]);
    expect((await s.call("snapshot_file", { mode: "snapshot", snapshot_id: del.snapshot_id, path: "a.txt" })).content).toBe(ten.replace("line 1\n", "first\n"));
    expect(repo.git("status", "--porcelain")).toBe(status);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe(ten);
  });
});

describe("huge inputs through the binary", () => {
  test("a 100 MB patch applies (1,000 hunks in one file, and the deletion of a 100 MB file)", async () => {
    await using repo = await tmpRepo();
    const row = (i: number) => `row ${i} ${"x".repeat(80)}\n`;
    repo.write("edit.txt", Array.from({ length: 200_000 }, (_, i) => row(i)).join(""));
    const old = Array.from({ length: 1_100_000 }, (_, i) => `old ${i} ${"z".repeat(80)}\n`);
    repo.write("old.txt", old.join(""));
    repo.commit();
    const parts: string[] = ["--- a/edit.txt\n+++ b/edit.txt\n"];
    for (let i = 0; i < 200_000; i += 200) parts.push(`@@ -${i + 1},1 +${i + 1},1 @@\n-${row(i)}+ROW ${i}\n`);
    parts.push(`--- a/old.txt\n+++ /dev/null\n@@ -1,${old.length} +0,0 @@\n`);
    const patch = parts.join("") + old.map((l) => `-${l}`).join("");
    expect(patch.length).toBeGreaterThan(100_000_000);
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_apply_patch", { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.changed.map((c: { path: string; status: string }) => [c.path, c.status])).toEqual([
      ["edit.txt", "modified"],
      ["old.txt", "deleted"],
    ]);
    const after = readFileSync(join(repo.root, "edit.txt"), "utf8");
    expect(after.startsWith(`ROW 0\n${row(1)}`)).toBe(true);
    expect(after.split("\n").filter((l) => l.startsWith("ROW ")).length).toBe(1000);
  }, 300_000);

  test("long contents full of escapes, every UTF-8 length and U+2028 arrive byte for byte; one with a lone surrogate as the plain parse gives it", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const line = (i: number) => `\t"quoted \\ ${i}" é € 😀 \u2028 \u0001 /x/\r\n`;
    const content = Array.from({ length: 6000 }, (_, i) => line(i)).join("");
    expect(JSON.stringify(content).length).toBeGreaterThan(256 * 1024);
    await s.call("workspace_write_file", { mode: "worktree", path: "long.txt", content });
    expect(readFileSync(join(repo.root, "long.txt")).equals(Buffer.from(content, "utf8"))).toBe(true);
    // ASCII content is a string made over the request's own memory, and those bytes are the file's; twice, and a patch of it
    const ascii = Array.from({ length: 20_000 }, (_, i) => `line ${i}\t"q" \\ /x/\n`).join("");
    await s.call("workspace_write_file", { mode: "worktree", path: "ascii.txt", content: ascii });
    await s.call("workspace_write_file", { mode: "worktree", path: "ascii2.txt", content: ascii });
    expect(readFileSync(join(repo.root, "ascii.txt"), "utf8")).toBe(ascii);
    expect(readFileSync(join(repo.root, "ascii2.txt"), "utf8")).toBe(ascii);
    const asciiPatch = `--- a/ascii.txt\n+++ b/ascii.txt\n@@ -1,3000 +1,3000 @@\n${Array.from({ length: 3000 }, (_, i) => `-line ${i}\t"q" \\ /x/\n`).join("")}${Array.from({ length: 3000 }, (_, i) => `+LINE ${i}\n`).join("")}`;
    expect((await s.call("workspace_apply_patch", { mode: "worktree", patch: asciiPatch })).applied).toBe(true);
    expect(readFileSync(join(repo.root, "ascii.txt"), "utf8")).toBe(Array.from({ length: 3000 }, (_, i) => `LINE ${i}\n`).join("") + ascii.split("\n").slice(3000).join("\n"));
    // a lone surrogate has no UTF-8: the content is written as the JSON.parse'd string encodes (U+FFFD)
    const lone = `${content}\ud800 end\n`;
    await s.call("workspace_write_file", { mode: "worktree", path: "lone.txt", content: lone });
    expect(readFileSync(join(repo.root, "lone.txt")).equals(Buffer.from(lone, "utf8"))).toBe(true);
    // a patch as long: its first 2,000 lines replaced
    const news = Array.from({ length: 2000 }, (_, i) => `€ "${i}"\t\r\n`);
    const body = Array.from({ length: 2000 }, (_, i) => `-${line(i)}`).join("") + news.map((l) => `+${l}`).join("");
    const patch = `--- a/long.txt\n+++ b/long.txt\n@@ -1,2000 +1,2000 @@\n${body}`;
    expect(JSON.stringify(patch).length).toBeGreaterThan(64 * 1024);
    expect((await s.call("workspace_apply_patch", { mode: "worktree", patch })).applied).toBe(true);
    const rest = Array.from({ length: 4000 }, (_, i) => line(i + 2000)).join("");
    expect(readFileSync(join(repo.root, "long.txt"), "utf8")).toBe(news.join("") + rest);
  }, 120_000);

  test("a 1 GB base64 write is TOO_LARGE and the server keeps serving", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const content = `base64:${"QUFB".repeat(256 * 1024 * 1024 + 1)}`;
    const err = await s.callError("workspace_write_file", { mode: "worktree", path: "huge.bin", content });
    expect(err.code).toBe("TOO_LARGE");
    const ok = await s.call("workspace_write_file", { mode: "worktree", path: "small.txt", content: "still here\n" });
    expect(ok.created).toBe(true);
    expect(repo.git("status", "--porcelain")).toBe("?? small.txt\n");
  }, 300_000);
});
