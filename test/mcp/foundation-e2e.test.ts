import { describe, expect, test } from "bun:test";
import { tmpRepo } from "../helpers/tmp-repo";
import { mcpSession } from "../helpers/binary";

describe("dist/worksnap serve, driven by the MCP SDK client", () => {
  test("create a snapshot, list and read it, use a lease, get STALE_LEASE after an outside change", async () => {
    await using repo = await tmpRepo();
    repo.write("src/app.ts", "one\ntwo\nthree\n");
    repo.write("README.md", "# hi\n");
    repo.commit();
    await using s = await mcpSession(repo.root);

    const snap = await s.call("snapshot_create", { paths: ["."] });
    expect(snap.cache_hint).toBe("immutable");
    expect(snap.manifest_stats).toEqual({ files: 2, bytes: 19 });

    const listed = await s.call("snapshot_list", { mode: "snapshot", snapshot_id: snap.snapshot_id.slice(0, 15) });
    expect(listed.entries.map((e: any) => [e.path, e.type])).toEqual([["README.md", "file"], ["src", "dir"]]);
    expect(listed.cache_hint).toBe("immutable");
    const unknown = await s.call("snapshot_list", { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "nowhere" });
    expect(unknown).toMatchObject({ entries: [], truncated: false });

    const part = await s.call("snapshot_file", { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "src/app.ts", start_line: 2, end_line: 2 });
    expect(part.content).toBe("two\n");

    const live = await s.call("snapshot_file", { mode: "worktree", path: "src/app.ts" });
    expect(live.cache_hint).toBe("until_dirty");
    expect(live.lease_id).toMatch(/^lease_[0-9a-f]{32}$/);
    const again = await s.call("snapshot_list", { mode: "worktree", lease_id: live.lease_id, path: "src" });
    expect(again.lease_id).toBe(live.lease_id);
    expect(again.fingerprint).toEqual(live.fingerprint);

    const info = await s.call("snapshot_info", { snapshot_id: snap.snapshot_id });
    expect(info.fingerprint).toEqual(live.fingerprint);
    expect(info).not.toHaveProperty("lease_id");

    repo.write("src/app.ts", "changed outside\n");
    const stale = await s.callError("snapshot_file", { mode: "worktree", path: "src/app.ts", lease_id: live.lease_id });
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint.status_hash).not.toBe(live.fingerprint.status_hash);
    expect(stale.details.fingerprint.head_oid).toBe(live.fingerprint.head_oid);

    const old = await s.call("snapshot_file", { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "src/app.ts" });
    expect(old.content).toBe("one\ntwo\nthree\n");
  });

  test("bad input gets structured errors, and the server keeps answering", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    await using s = await mcpSession(repo.root);
    expect((await s.callError("snapshot_file", { mode: "worktree", path: "../etc/passwd" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("snapshot_file", { mode: "worktree", path: "/etc/passwd" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("snapshot_file", { mode: "worktree", path: ".git/config" })).code).toBe("PERMISSION_DENIED");
    expect((await s.callError("snapshot_list", { mode: "worktree", lease_id: "lease_123" })).code).toBe("INVALID_ARGUMENT");
    const unknownLease = await s.callError("snapshot_list", { mode: "worktree", lease_id: `lease_${"a".repeat(32)}` });
    expect(unknownLease.code).toBe("STALE_LEASE");
    expect(unknownLease.details).toHaveProperty("fingerprint");
    expect((await s.callError("snapshot_info", { snapshot_id: "sha256:deadbeef" })).code).toBe("NOT_FOUND");
    expect((await s.callError("snapshot_info", { snapshot_id: "nothex!" })).code).toBe("INVALID_ARGUMENT");
    const typo = await s.callError("snapshot_list", { mode: "worktree", leaseid: "x" });
    expect(typo.code).toBe("INVALID_ARGUMENT");
    expect(typo.message).toContain("leaseid");
    const wrongMode = await s.callError("snapshot_list", { mode: "snapshot" });
    expect(wrongMode.message).toContain("snapshot_id");
    expect((await s.callError("snapshot_create", {})).code).toBe("INVALID_ARGUMENT");
    expect((await s.call("snapshot_list", { mode: "worktree" })).entries).toHaveLength(1);
  });

  test("a file over the inline cap is TOO_LARGE with a hint; a range reads it", async () => {
    await using repo = await tmpRepo();
    repo.write("big.txt", "0123456789abcdef\n".repeat(20_000));
    await using s = await mcpSession(repo.root);
    const err = await s.callError("snapshot_file", { mode: "worktree", path: "big.txt" });
    expect(err.code).toBe("TOO_LARGE");
    expect(err.message).toContain("start_line");
    const part = await s.call("snapshot_file", { mode: "worktree", path: "big.txt", start_line: 10, end_line: 12 });
    expect(part.content).toBe("0123456789abcdef\n".repeat(3));
    expect(part.total_lines).toBe(20_000);
  });

  test("progress notifications are sent for snapshot_create when asked", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 4500; i++) repo.write(`d${i % 10}/f${i}.txt`, `${i}\n`);
    await using s = await mcpSession(repo.root);
    const seen: number[] = [];
    const r: any = await s.client.callTool({ name: "snapshot_create", arguments: { paths: ["."] } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(r.structuredContent.manifest_stats.files).toBe(4500);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[seen.length - 1]).toBe(4500);
  });
});
