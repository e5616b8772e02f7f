import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { readFile } from "../../../src/ops/snapshot/file";
import { snapshotInfo } from "../../../src/ops/snapshot/info";
import { deleteOp } from "../../../src/ops/mutate/delete";
import { moveOp } from "../../../src/ops/mutate/move";
import { WRITE_MAX_BYTES, decodeWriteContent, writeFileOp } from "../../../src/ops/mutate/write-file";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { snapshotChanges } from "../../../src/ops/snapshot/changes";
import { closeWorkspace, openWorkspace } from "../../../src/ops/workspace";
import { tmpRepo } from "../../helpers/tmp-repo";
import { enc, permOf, read, recordingRecorder, temps, treeText, wsOf } from "../../helpers/workspace";

const lease = (r: { cache_hint: string; lease_id?: string }) => {
  if (r.cache_hint !== "until_dirty" || !r.lease_id) throw new Error("expected a worktree answer");
  return r.lease_id;
};

describe("workspace_write_file: content", () => {
  test("UTF-8 text and base64 bytes are written exactly (CRLF, NUL, invalid UTF-8, no trailing newline)", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const text = "grüße\r\n日本\n\ttab \u{1F600}";
    const r = await writeFileOp(ws, { mode: "worktree", path: "t.txt", content: text });
    expect(readFileSync(join(repo.root, "t.txt"))).toEqual(Buffer.from(text, "utf8"));
    expect(r.blob).toBe(blobIdOf(enc(text)));
    expect(r.size).toBe(Buffer.byteLength(text));
    const bin = new Uint8Array([0, 0xff, 0xfe, 0xc3, 0x28, 13, 10, 0]);
    const b64 = `base64:${Buffer.from(bin).toString("base64")}`;
    const rb = await writeFileOp(ws, { mode: "worktree", path: "b.bin", content: b64 });
    expect(new Uint8Array(readFileSync(join(repo.root, "b.bin")))).toEqual(bin);
    expect(rb.blob).toBe(blobIdOf(bin));
    // base64 wrapped over lines is the same bytes; a broken alphabet is refused
    await writeFileOp(ws, { mode: "worktree", path: "w.bin", content: `base64:${Buffer.from(bin).toString("base64").replace(/(.{4})/g, "$1\n")}` });
    expect(new Uint8Array(readFileSync(join(repo.root, "w.bin")))).toEqual(bin);
    const bad = await writeFileOp(ws, { mode: "worktree", path: "x.bin", content: "base64:not*base64" }).catch((e) => e);
    expect(bad.code).toBe("INVALID_ARGUMENT");
    await writeFileOp(ws, { mode: "worktree", path: "empty.txt", content: "" });
    expect(readFileSync(join(repo.root, "empty.txt")).length).toBe(0);
  });

  test("an existing file keeps its mode; a new file gets 0644", async () => {
    await using repo = await tmpRepo();
    repo.write("run.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    using ws = wsOf(repo);
    await writeFileOp(ws, { mode: "worktree", path: "run.sh", content: "#!/bin/sh\necho hi\n" });
    await writeFileOp(ws, { mode: "worktree", path: "new.txt", content: "n" });
    expect([permOf(repo.root, "run.sh"), permOf(repo.root, "new.txt")]).toEqual([0o755, 0o644]);
    expect(repo.git("status", "--porcelain")).toBe(" M run.sh\n?? new.txt\n");
  });

  test("expected_blob is compare-and-swap: REPO_CHANGED with the current blob, nothing written", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "v1\n");
    using ws = wsOf(repo);
    const v1 = blobIdOf(enc("v1\n"));
    const ok = await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "v2\n", expected_blob: v1 });
    expect(ok.created).toBe(false);
    const err = await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "v3\n", expected_blob: v1 }).catch((e) => e);
    expect(err.code).toBe("REPO_CHANGED");
    expect(err.details).toMatchObject({ path: "f.txt", current_blob: blobIdOf(enc("v2\n")), expected_blob: v1 });
    expect(read(repo.root, "f.txt")).toBe("v2\n");
    const missing = await writeFileOp(ws, { mode: "worktree", path: "nope.txt", content: "x", expected_blob: v1 }).catch((e) => e);
    expect(missing.code).toBe("REPO_CHANGED");
    expect(missing.details.current_blob).toBeNull();
    expect((await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "x", expected_blob: "abc" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    // A prefix of 12+ hex digits (what answers show), with or without sha256:, names the blob too.
    const v2 = blobIdOf(enc("v2\n"));
    expect((await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "v4\n", expected_blob: v2.slice(7, 19) })).blob).toBe(blobIdOf(enc("v4\n")));
    const old = await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "v5\n", expected_blob: v2.slice(0, 19) }).catch((e) => e);
    expect(old.code).toBe("REPO_CHANGED");
    expect((await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "x", expected_blob: v2.slice(7, 18) }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("create_only refuses to overwrite and creates otherwise", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "keep\n");
    using ws = wsOf(repo);
    const err = await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "x", create_only: true }).catch((e) => e);
    expect(err.code).toBe("REPO_CHANGED");
    expect(read(repo.root, "f.txt")).toBe("keep\n");
    const r = await writeFileOp(ws, { mode: "worktree", path: "g.txt", content: "new\n", create_only: true });
    expect(r.created).toBe(true);
    expect((await writeFileOp(ws, { mode: "worktree", path: "h.txt", content: "x", create_only: true, expected_blob: r.blob }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("a directory is not a file to write", async () => {
    await using repo = await tmpRepo();
    repo.write("d/f.txt", "f");
    using ws = wsOf(repo);
    expect((await writeFileOp(ws, { mode: "worktree", path: "d", content: "x" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await writeFileOp(ws, { mode: "worktree", path: "d/f.txt/under", content: "x" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });
});

describe("workspace_write_file: size limit", () => {
  test("a 1 GB base64 argument is TOO_LARGE before any decoding, and the limit itself is exact", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const huge = `base64:${"QUFB".repeat(350 * 1024 * 1024)}`; // 1.4 G chars = 1.05 GiB decoded
    const err = await writeFileOp(ws, { mode: "worktree", path: "huge.bin", content: huge }).catch((e) => e);
    expect(err.code).toBe("TOO_LARGE");
    expect(err.details.limit).toBe(WRITE_MAX_BYTES);
    expect(treeText(repo.root)).toEqual({});
    expect(temps(repo.root)).toEqual([]);
    expect(decodeWriteContent("a".repeat(1000)).length).toBe(1000);
    expect(() => decodeWriteContent("a".repeat(WRITE_MAX_BYTES + 1))).toThrow(expect.objectContaining({ code: "TOO_LARGE" }));
    // multi-byte text: fewer characters than the limit, more bytes
    expect(() => decodeWriteContent("é".repeat(WRITE_MAX_BYTES / 2 + 1))).toThrow(expect.objectContaining({ code: "TOO_LARGE" }));
    expect(decodeWriteContent(`base64:${Buffer.alloc(WRITE_MAX_BYTES).toString("base64")}`).length).toBe(WRITE_MAX_BYTES);
    expect(() => decodeWriteContent(`base64:${Buffer.alloc(WRITE_MAX_BYTES + 3).toString("base64")}`)).toThrow(expect.objectContaining({ code: "TOO_LARGE" }));
  }, 120_000);
});

describe("workspace_write_file: leases and conversations", () => {
  test("a stale or unknown lease is STALE_LEASE with the current fingerprint; the answer's new lease works next", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const first = await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "a2\n" });
    const l1 = lease(first);
    const second = await writeFileOp(ws, { mode: "worktree", path: "b.txt", content: "b\n", lease_id: l1 });
    const l2 = lease(second);
    expect(l2).not.toBe(l1);
    // the old lease saw a state before b.txt existed: stale
    const stale = await writeFileOp(ws, { mode: "worktree", path: "c.txt", content: "c\n", lease_id: l1 }).catch((e) => e);
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint).toEqual(second.cache_hint === "until_dirty" ? second.fingerprint : null);
    const unknown = await writeFileOp(ws, { mode: "worktree", path: "c.txt", content: "c\n", lease_id: `lease_${"0".repeat(32)}` }).catch((e) => e);
    expect(unknown.code).toBe("STALE_LEASE");
    expect((await writeFileOp(ws, { mode: "worktree", path: "c.txt", content: "c", lease_id: "nope" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    // an outside change makes the newest lease stale too
    writeFileSync(join(repo.root, "outside.txt"), "o");
    expect((await writeFileOp(ws, { mode: "worktree", path: "c.txt", content: "c\n", lease_id: l2 }).catch((e) => e)).code).toBe("STALE_LEASE");
    expect(treeText(repo.root)["c.txt"]).toBeUndefined();
  });

  test("the new lease's touched set holds the written path with its new blob, plus what the old lease read", async () => {
    await using repo = await tmpRepo();
    repo.write("read.txt", "r\n");
    repo.commit();
    using ws = wsOf(repo);
    const rd = await readFile(ws, { mode: "worktree", path: "read.txt" });
    const w = await writeFileOp(ws, { mode: "worktree", path: "new.txt", content: "n\n", lease_id: lease(rd) });
    const l = ws.leases.get(lease(w));
    expect(Object.fromEntries(l.touched)).toEqual({ "read.txt": rd.blob as string, "new.txt": w.blob });
  });

  test("per-file staleness: a file changed since the lease read it is STALE_LEASE even when the fingerprint did not move", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "base\n");
    repo.commit();
    writeFileSync(join(repo.root, "f.txt"), "dirty once\n"); // already modified: git status will not change again
    using ws = wsOf(repo);
    const rd = await readFile(ws, { mode: "worktree", path: "f.txt" });
    writeFileSync(join(repo.root, "f.txt"), "dirty twice, by someone else\n");
    const err = await writeFileOp(ws, { mode: "worktree", path: "f.txt", content: "mine\n", lease_id: lease(rd) }).catch((e) => e);
    expect(err.code).toBe("STALE_LEASE");
    expect(err.details.changed).toEqual([{ path: "f.txt", read_blob: rd.blob, current_blob: blobIdOf(enc("dirty twice, by someone else\n")) }]);
    expect(read(repo.root, "f.txt")).toBe("dirty twice, by someone else\n");
  });

  test("a missing mcp_conversation_id is minted and the answer says to pass it; a given one is used as is", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const rec = recordingRecorder(repo.root);
    ws.recorder = rec;
    const a = await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "a" });
    expect(a.mcp_conversation_id).toMatch(/^conv_\d+_[0-9a-f]{12}$/);
    expect(a.note).toContain(a.mcp_conversation_id!);
    const b = await writeFileOp(ws, { mode: "worktree", path: "b.txt", content: "b", mcp_conversation_id: a.mcp_conversation_id });
    expect(b.mcp_conversation_id).toBe(a.mcp_conversation_id);
    expect(b.note).toBeUndefined();
    const c = await writeFileOp(ws, { mode: "worktree", path: "c.txt", content: "c", mcp_conversation_id: "my-own.conv_1" });
    expect(c.mcp_conversation_id).toBe("my-own.conv_1");
    expect((await writeFileOp(ws, { mode: "worktree", path: "d.txt", content: "d", mcp_conversation_id: "../etc" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect(rec.calls.filter((x) => x.phase === "prepare").map((x) => `${x.ctx?.conversationId} ${x.ctx?.toolName}`)).toEqual([
      `${a.mcp_conversation_id} write_file`,
      `${a.mcp_conversation_id} write_file`,
      "my-own.conv_1 write_file",
    ]);
  });
});

describe("workspace_write_file: snapshot mode", () => {
  test("derives a new snapshot with the base's fingerprint; the disk and the base are untouched; same edit, same id", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("x.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    const status = repo.git("status", "--porcelain");
    const r = await writeFileOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt", content: "A\n" });
    if (r.cache_hint !== "immutable") throw new Error("expected an immutable answer");
    expect(r.snapshot_id).not.toBe(base.snapshot_id);
    expect(r.base_snapshot_id).toBe(base.snapshot_id);
    expect(r.mcp_conversation_id).toBeUndefined();
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: r.snapshot_id, path: "a.txt" })).content).toBe("A\n");
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt" })).content).toBe("a\n");
    expect(read(repo.root, "a.txt")).toBe("a\n");
    expect(repo.git("status", "--porcelain")).toBe(status);
    const info = snapshotInfo(ws, { snapshot_id: r.snapshot_id });
    expect(info.fingerprint).toEqual(base.fingerprint);
    expect(info.manifest_stats).toEqual({ files: 2, bytes: 2 + 10 });
    const again = await writeFileOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt", content: "A\n" });
    expect(again.cache_hint === "immutable" && again.snapshot_id).toBe(r.snapshot_id);
    // mode kept, CAS and create_only as in the work tree
    const x = await writeFileOp(ws, { mode: "snapshot", snapshot_id: r.snapshot_id, path: "x.sh", content: "#!/bin/sh\nexit 0\n" });
    const list = ws.snapshots.load((x as { snapshot_id: `sha256:${string}` }).snapshot_id).entries;
    expect(list.find((e) => e.path === "x.sh")?.mode).toBe("100755");
    expect((await writeFileOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt", content: "z", create_only: true }).catch((e) => e)).code).toBe("REPO_CHANGED");
    expect(
      (await writeFileOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, path: "a.txt", content: "z", expected_blob: blobIdOf(enc("A\n")) }).catch((e) => e)).details.current_blob,
    ).toBe(blobIdOf(enc("a\n")));
  });

  test("mode arguments are checked: lease_id only in worktree, snapshot_id only in snapshot", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    using ws = wsOf(repo);
    const base = await createSnapshot(ws, { paths: ["."] });
    const w = await writeFileOp(ws, { mode: "worktree", path: "b.txt", content: "b" });
    expect((await writeFileOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, lease_id: lease(w), path: "a.txt", content: "x" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await writeFileOp(ws, { mode: "worktree", snapshot_id: base.snapshot_id, path: "a.txt", content: "x" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await writeFileOp(ws, { mode: "snapshot", path: "a.txt", content: "x" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await writeFileOp(ws, { mode: "snapshot", snapshot_id: `sha256:${"1".repeat(64)}`, path: "a.txt", content: "x" }).catch((e) => e)).code).toBe("NOT_FOUND");
  });
});

describe("outside a git work tree", () => {
  test("write, move and delete work in a plain directory, with fingerprints and leases from its listing", async () => {
    await using dir = await tmpRepo({ git: false });
    dir.write("a.txt", "a\n");
    using ws = wsOf(dir);
    const w = await writeFileOp(ws, { mode: "worktree", path: "b/c.txt", content: "c\n" });
    if (w.cache_hint !== "until_dirty" || w.fingerprint === undefined) throw new Error("expected a worktree answer with a lease");
    expect(w.fingerprint.head_oid).toBe("");
    const m = await moveOp(ws, { mode: "worktree", lease_id: w.lease_id, from: "b/c.txt", to: "d/c.txt" });
    const d = await deleteOp(ws, { mode: "worktree", lease_id: lease(m), path: "a.txt" });
    expect(lease(d)).toMatch(/^lease_/);
    expect(treeText(dir.root)).toEqual({ "d/c.txt": "c\n" });
    // an outside change moves the listing fingerprint: the old lease is stale
    writeFileSync(join(dir.root, "x.txt"), "x");
    expect((await writeFileOp(ws, { mode: "worktree", lease_id: lease(d), path: "y.txt", content: "y" }).catch((e) => e)).code).toBe("STALE_LEASE");
  });
});

describe("a write whose repository goes away meanwhile", () => {
  test("regression (INTERNAL for a write that was made): the answer says the file was written and recorded, under which conversation; reads say the repository is gone", async () => {
    await using main = await tmpRepo();
    main.write("a.txt", "a\n");
    main.commit();
    const linked = main.beside("-linked");
    main.git("worktree", "add", "-q", linked);
    const ws = openWorkspace(linked);
    const moved = main.beside("-moved");
    try {
      expect((await snapshotChanges(ws, { from: "HEAD", to: "worktree" })).changes).toEqual([]);
      Bun.spawnSync(["mv", main.root, moved]);
      for (const read of [() => snapshotChanges(ws, { from: "HEAD", to: "worktree" }), () => createSnapshot(ws, { paths: ["."] })]) {
        expect(await read().catch((e) => e)).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_dir_missing" } });
      }
      const err = await writeFileOp(ws, { mode: "worktree", path: "new.txt", content: "made\n" }).catch((e) => e);
      expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_dir_missing", written: true, written_paths: ["new.txt"], written_total: 1 } });
      expect(err.message).toContain("new.txt written and recorded (conversation conv_");
      expect(readFileSync(join(linked, "new.txt"), "utf8")).toBe("made\n");
      const log = await new FsHistoryStore(ws.repo.stateDir).readLog(err.details.mcp_conversation_id);
      expect(log.map((e) => [e.file_path, e.operation])).toEqual([["new.txt", "create"]]);
    } finally {
      closeWorkspace(ws);
      Bun.spawnSync(["mv", moved, main.root]);
    }
  });
});
