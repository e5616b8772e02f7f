import { describe, expect, test } from "bun:test";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { readFile } from "../../../src/ops/snapshot/file";
import { listEntries } from "../../../src/ops/snapshot/list";
import { openWorkspace } from "../../../src/ops/workspace";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write("src/a/deep.ts", "deep\n");
  repo.write("src/b.ts", "b1\nb2\nb3\n");
  repo.write("src.txt", "s");
  repo.write("bin/tool", "#!/bin/sh\n", 0o755);
  repo.write("img.png", new Uint8Array([0x89, 0x50, 0, 0, 1]));
  repo.write("latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  repo.symlink("inside-link", "src/b.ts");
  repo.symlink("outside-link", "/etc/hostname");
  repo.write("crlf.txt", "one\r\ntwo\r\nthree");
}

describe("snapshot_list", () => {
  test("direct children with implicit directories, in byte order, both modes agree", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const live = await listEntries(ws, { mode: "worktree" });
    const frozen = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id });
    const shape = (r: typeof live) => r.entries.map((e) => `${e.type}:${e.path}`);
    expect(shape(live)).toEqual(["dir:bin", "file:crlf.txt", "file:img.png", "symlink:inside-link", "file:latin1.txt", "symlink:outside-link", "dir:src", "file:src.txt"]);
    expect(shape(frozen)).toEqual(shape(live));
    expect(live.entries.find((e) => e.path === "bin")).toEqual({ path: "bin", type: "dir" });
    const b = (await listEntries(ws, { mode: "worktree", path: "src" })).entries.find((e) => e.path === "src/b.ts");
    expect(b).toMatchObject({ type: "file", size: 9 });
    expect(b?.blob).toMatch(/^sha256:/);
    const exec = (await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "bin" })).entries[0];
    expect(exec).toMatchObject({ path: "bin/tool", mode: "100755" });
  });

  test("recursive listing, limits, truncation and totals", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const all = await listEntries(ws, { mode: "worktree", path: "src", recursive: true });
    expect(all.entries.map((e) => e.path)).toEqual(["src/a", "src/a/deep.ts", "src/b.ts"]);
    const page = await listEntries(ws, { mode: "worktree", recursive: true, limit: 2 });
    expect(page.entries).toHaveLength(2);
    expect(page.truncated).toBe(true);
    expect(page.total).toBe(12);
    expect((await listEntries(ws, { mode: "worktree", limit: 0 }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("snapshot mode: uncaptured or unknown paths are an empty list; worktree mode: NOT_FOUND", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["src/b.ts"] });
    const listed = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "src" });
    expect(listed.entries.map((e) => e.path)).toEqual(["src/b.ts"]);
    const none = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "bin" });
    expect(none).toMatchObject({ entries: [], truncated: false, total: 0 });
    expect((await listEntries(ws, { mode: "worktree", path: "nope" }).catch((e) => e)).code).toBe("NOT_FOUND");
  });

  test("worktree listing touches the returned entries and implicit parents", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const r = await listEntries(ws, { mode: "worktree", path: "src/a" });
    const lease = ws.leases.get(r.cache_hint === "until_dirty" ? r.lease_id : "");
    expect([...lease.touched.keys()].sort()).toEqual(["src", "src/a", "src/a/deep.ts"]);
    expect(lease.touched.get("src/a/deep.ts")).toBe(r.entries[0]?.blob ?? "missing");
    expect(lease.touched.get("src")).toBeNull();
  });
});

describe("snapshot_file", () => {
  test("text, CRLF, binary and non-UTF-8 content round-trip exactly", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    for (const mode of ["worktree", "snapshot"] as const) {
      const args = mode === "snapshot" ? { mode, snapshot_id: snap.snapshot_id } : { mode };
      expect((await readFile(ws, { ...args, path: "crlf.txt" })).content).toBe("one\r\ntwo\r\nthree");
      const png = await readFile(ws, { ...args, path: "img.png" });
      expect(png.encoding).toBe("base64");
      expect(png.content).toBe(`base64:${Buffer.from([0x89, 0x50, 0, 0, 1]).toString("base64")}`);
      const latin = await readFile(ws, { ...args, path: "latin1.txt" });
      expect(latin.encoding).toBe("base64");
      expect(Buffer.from(latin.content.slice(7), "base64")).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    }
  });

  test("line ranges: 1-based inclusive, total_lines, no final newline, past the end", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const mid = await readFile(ws, { mode: "worktree", path: "crlf.txt", start_line: 2, end_line: 3 });
    expect(mid).toMatchObject({ content: "two\r\nthree", start_line: 2, end_line: 3, total_lines: 3 });
    const past = await readFile(ws, { mode: "worktree", path: "src/b.ts", start_line: 3, end_line: 99 });
    expect(past).toMatchObject({ content: "b3\n", end_line: 3 });
    // start_line past the end is an error naming the file's line count, not an empty answer
    const beyond = await readFile(ws, { mode: "worktree", path: "src/b.ts", start_line: 50 }).catch((e) => e);
    expect(beyond).toMatchObject({ code: "INVALID_ARGUMENT", details: { arg: "start_line", total_lines: 3 } });
    expect(beyond.message).toContain("has 3 lines");
    expect((await readFile(ws, { mode: "worktree", path: "src/b.ts", start_line: 3, end_line: 2 }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await readFile(ws, { mode: "worktree", path: "img.png", start_line: 1 }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("symlinks: followed inside the root in worktree mode, link text in snapshot mode, escapes refused", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const live = await readFile(ws, { mode: "worktree", path: "inside-link" });
    expect(live).toMatchObject({ content: "b1\nb2\nb3\n", resolved_path: "src/b.ts", type: "file" });
    const frozen = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "inside-link" });
    expect(frozen).toMatchObject({ content: "src/b.ts", type: "symlink" });
    expect((await readFile(ws, { mode: "worktree", path: "outside-link" }).catch((e) => e)).code).toBe("PERMISSION_DENIED");
  });

  test("directories and missing files are clear errors", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    expect((await readFile(ws, { mode: "worktree", path: "src" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "src" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    const miss = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "zzz" }).catch((e) => e);
    expect(miss.code).toBe("NOT_FOUND");
    expect(miss.message).toContain("zzz");
    expect((await readFile(ws, { mode: "worktree", path: "zzz" }).catch((e) => e)).code).toBe("NOT_FOUND");
  });
});
