import { describe, expect, test } from "bun:test";
import { chmodSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BlobId } from "../../../src/core/hash";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { diffEntries, snapshotChanges } from "../../../src/ops/snapshot/changes";
import { snapshotDiff } from "../../../src/ops/snapshot/diff";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import type { SideEntry } from "../../../src/ops/snapshot/tree-side";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

async function snap(ws: Workspace): Promise<string> {
  return (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
}

function seed(repo: TmpRepo): void {
  repo.write("keep.txt", "same\n");
  repo.write("edit.txt", "v1\n");
  repo.write("gone.txt", "bye\n");
  repo.write("run.sh", "#!/bin/sh\n");
  repo.write("src/a.ts", "a\n");
  repo.write("src/b.ts", "b\n");
}

function change(repo: TmpRepo): void {
  repo.write("edit.txt", "v2\n");
  rmSync(join(repo.root, "gone.txt"));
  chmodSync(join(repo.root, "run.sh"), 0o755);
  repo.write("new.txt", "hello\n");
  repo.write("src/b.ts", "B\n");
}

const EXPECTED = [
  { path: "edit.txt", status: "modified" },
  { path: "gone.txt", status: "deleted" },
  { path: "new.txt", status: "added" },
  { path: "run.sh", status: "mode_changed", old_mode: "100644", new_mode: "100755" },
  { path: "src/b.ts", status: "modified" },
];

describe("snapshot_changes", () => {
  test("between two snapshots: sorted statuses, counts, immutable branch", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    change(repo);
    const b = await snap(ws);
    const r = await snapshotChanges(ws, { from: a, to: b });
    expect(r.cache_hint).toBe("immutable");
    expect("lease_id" in r).toBe(false);
    expect(r.from).toBe(a);
    expect(r.to).toBe(b);
    expect(r.changes).toEqual(EXPECTED as never);
    expect(r.counts).toEqual({ added: 1, modified: 2, deleted: 1, mode_changed: 1, total: 5 });
    expect(r.truncated).toBe(false);
    // Reversed sides swap added/deleted and the modes.
    const back = await snapshotChanges(ws, { from: b.slice(7, 19), to: a.slice(0, 20) });
    expect(back.changes.map((c) => `${c.status} ${c.path}`)).toEqual([
      "modified edit.txt",
      "added gone.txt",
      "deleted new.txt",
      "mode_changed run.sh",
      "modified src/b.ts",
    ]);
    closeWorkspace(ws);
  });

  test("regression (a glob taken as a path that names nothing: an empty answer): globs in paths narrow every side, with diff and grep alike", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.write("src/deep/c.txt", "c\n");
    repo.write("app/[slug]/page.tsx", "p\n");
    repo.write("what?.txt", "q\n");
    repo.commit();
    change(repo);
    repo.write("src/deep/c.txt", "C\n");
    repo.write("app/[slug]/page.tsx", "P\n");
    repo.write("what?.txt", "Q\n");
    const ws = openWorkspace(repo.root);
    const paths = async (...p: string[]) => (await snapshotChanges(ws, { from: "HEAD", to: "worktree", paths: p })).changes.map((c) => c.path);
    expect(await paths("*.txt")).toEqual(["edit.txt", "gone.txt", "new.txt", "src/deep/c.txt", "what?.txt"]); // at any depth
    expect(await paths("src/*.ts")).toEqual(["src/b.ts"]); // from the root: direct children
    expect(await paths("src/**/*.txt", "run.sh")).toEqual(["run.sh", "src/deep/c.txt"]);
    expect(await paths("app/[slug]/page.tsx")).toEqual(["app/[slug]/page.tsx"]); // no * or ?: a path, brackets and all
    expect(await paths("what?.txt")).toEqual(["what?.txt"]); // a glob also matches the path it spells
    expect(await paths("*.nothing")).toEqual([]);
    const cut = await snapshotChanges(ws, { from: "HEAD", to: "worktree", paths: ["*.txt"], limit: 2 });
    expect(cut.counts.total).toBe(5);
    const rest = await snapshotChanges(ws, { from: "HEAD", to: "worktree", paths: ["*.txt"], limit: 10, cursor: cut.cursor });
    expect([...cut.changes, ...rest.changes].map((c) => c.path)).toEqual(await paths("*.txt"));
    expect((await snapshotChanges(ws, { from: "HEAD", to: "worktree", paths: ["*.ts"], cursor: cut.cursor }).catch((e) => e)).code).toBe("INVALID_ARGUMENT"); // a cursor of other paths
    const diff = await snapshotDiff(ws, { from: "HEAD", to: "worktree", paths: ["src/**"] });
    expect([...diff.diff.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1])).toEqual(["src/b.ts", "src/deep/c.txt"]);
    const found = await snapshotGrep(ws, { mode: "worktree", pattern: "^[A-Z]$", paths: ["*.txt", "*.ts"] });
    expect(found.matches.map((m) => m.path)).toEqual(["src/b.ts", "src/deep/c.txt", "what?.txt"]);
    for (const bad of ["/etc/*", "../*.txt", "src/../../*"]) {
      expect((await snapshotChanges(ws, { from: "HEAD", to: "worktree", paths: [bad] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    }
    closeWorkspace(ws);
  });

  test("two snapshots compare by manifest alone: no blob is read (the stores can be gone)", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    change(repo);
    const b = await snap(ws);
    closeWorkspace(ws);
    rmSync(join(repo.root, ".mcp", "blobs"), { recursive: true, force: true });
    rmSync(join(repo.root, ".mcp", "git"), { recursive: true, force: true });
    rmSync(join(repo.root, ".mcp", "cache"), { recursive: true, force: true });
    const fresh = openWorkspace(repo.root);
    expect((await snapshotChanges(fresh, { from: a, to: b })).changes).toEqual(EXPECTED as never);
    closeWorkspace(fresh);
  });

  test("snapshot against the work tree: worktree branch with a lease that touched the reported paths", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    change(repo);
    const r = await snapshotChanges(ws, { from: a, to: "worktree" });
    expect(r.cache_hint).toBe("until_dirty");
    if (r.cache_hint !== "until_dirty") throw new Error("unreachable");
    expect(r.to).toBe("worktree");
    expect(r.changes).toEqual(EXPECTED as never);
    const lease = ws.leases.get(r.lease_id);
    expect([...lease.touched.keys()].sort()).toEqual(EXPECTED.map((c) => c.path));
    expect(lease.touched.get("gone.txt")).toBeNull();
    expect(lease.touched.get("new.txt")).toMatch(/^sha256:/);
    // The lease validates on reuse, and fails once the tree moves on.
    const again = await snapshotChanges(ws, { from: "worktree", to: a, lease_id: r.lease_id });
    expect(again.changes.map((c) => c.status)).toEqual(["modified", "added", "deleted", "mode_changed", "modified"]);
    repo.write("another.txt", "x\n");
    const stale = await snapshotChanges(ws, { from: a, to: "worktree", lease_id: r.lease_id }).catch((e) => e);
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint).toBeTruthy();
    closeWorkspace(ws);
  });

  test("paths narrow the comparison", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    change(repo);
    const b = await snap(ws);
    const r = await snapshotChanges(ws, { from: a, to: b, paths: ["src/", "new.txt"] });
    expect(r.changes.map((c) => c.path)).toEqual(["new.txt", "src/b.ts"]);
    expect(r.counts.total).toBe(2);
    const none = await snapshotChanges(ws, { from: a, to: b, paths: ["nowhere"] });
    expect(none.changes).toEqual([]);
    closeWorkspace(ws);
  });

  test("from == to is an empty answer, not an error", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    const r = await snapshotChanges(ws, { from: a, to: a.slice(0, 15) });
    expect(r.changes).toEqual([]);
    expect(r.counts).toEqual({ added: 0, modified: 0, deleted: 0, mode_changed: 0, total: 0 });
    const live = await snapshotChanges(ws, { from: "worktree", to: "worktree" });
    expect(live.changes).toEqual([]);
    expect(live.cache_hint).toBe("until_dirty");
    closeWorkspace(ws);
  });

  test("bad input: unknown ids, paths outside the root, reserved paths, a lease with two snapshots", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    const unknown = await snapshotChanges(ws, { from: a, to: `sha256:${"0".repeat(64)}` }).catch((e) => e);
    expect(unknown.code).toBe("NOT_FOUND");
    expect((await snapshotChanges(ws, { from: "deadbeef00", to: a }).catch((e) => e)).code).toBe("NOT_FOUND");
    const unborn = await snapshotChanges(ws, { from: "HEAD", to: a }).catch((e) => e); // no commit yet
    expect(unborn).toMatchObject({ code: "NOT_FOUND", details: { reason: "unborn_head" } });
    expect(unborn.message).toContain("names no commit yet: the repository has none");
    expect((await snapshotChanges(ws, { from: "HEAD~1", to: a }).catch((e) => e)).message).toContain("names no snapshot and no commit");
    expect((await snapshotChanges(ws, { from: "", to: a }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await snapshotChanges(ws, { from: a, to: a, paths: ["../x"] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await snapshotChanges(ws, { from: a, to: a, paths: ["/etc"] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await snapshotChanges(ws, { from: a, to: a, paths: [".git"] }).catch((e) => e)).code).toBe("PERMISSION_DENIED");
    const lease = await snapshotChanges(ws, { from: a, to: a, lease_id: `lease_${"0".repeat(32)}` }).catch((e) => e);
    expect(lease.code).toBe("INVALID_ARGUMENT");
    closeWorkspace(ws);
  });

  test("paging: limit and cursor give the same list as one call; a foreign cursor is INVALID_ARGUMENT", async () => {
    await using repo = await tmpRepo({ git: false });
    const ws = openWorkspace(repo.root);
    repo.write("base", "x");
    const a = await snap(ws);
    for (let i = 0; i < 57; i++) repo.write(`f/${String(i).padStart(3, "0")}-ü.txt`, `${i}\n`);
    const b = await snap(ws);
    const whole = await snapshotChanges(ws, { from: a, to: b });
    expect(whole.changes.length).toBe(57);
    const pages: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const r = await snapshotChanges(ws, { from: a, to: b, limit: 10, cursor });
      expect(r.counts.total).toBe(57);
      pages.push(...r.changes.map((c) => c.path));
      cursor = r.cursor;
      expect(r.truncated).toBe(cursor !== undefined);
      calls++;
    } while (cursor);
    expect(calls).toBe(6);
    expect(pages).toEqual(whole.changes.map((c) => c.path));
    const first = await snapshotChanges(ws, { from: a, to: b, limit: 10 });
    const foreign = await snapshotChanges(ws, { from: b, to: a, cursor: first.cursor }).catch((e) => e);
    expect(foreign.code).toBe("INVALID_ARGUMENT");
    expect(foreign.message).toContain("different query");
    const scoped = await snapshotChanges(ws, { from: a, to: b, paths: ["f"], cursor: first.cursor }).catch((e) => e);
    expect(scoped.code).toBe("INVALID_ARGUMENT");
    expect((await snapshotChanges(ws, { from: a, to: b, cursor: "not-a-cursor" }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    closeWorkspace(ws);
  });
});

describe("diffEntries (the merge walk)", () => {
  const e = (path: string, blob: string, mode: SideEntry["mode"] = "100644"): SideEntry => ({ path, blob: `sha256:${blob}` as BlobId, mode });

  test("orders by UTF-8 bytes, not UTF-16 units", () => {
    // U+FF5E (BMP, high) sorts before U+1F600 (astral) in UTF-8; UTF-16 order says the opposite.
    const from = [e("\uff5e", "1"), e("\u{1f600}", "1")];
    const to = [e("\uff5e", "2"), e("\u{1f600}", "1")];
    expect(diffEntries(from, to).map((p) => p.change)).toEqual([{ path: "\uff5e", status: "modified" }]);
  });

  test("a symlink that replaces a file with the same bytes is a mode change", () => {
    expect(diffEntries([e("x", "1")], [e("x", "1", "120000")]).map((p) => p.change)).toEqual([
      { path: "x", status: "mode_changed", old_mode: "100644", new_mode: "120000" },
    ]);
    expect(diffEntries([e("x", "1")], [e("x", "2", "100755")]).map((p) => p.change)).toEqual([
      { path: "x", status: "modified", old_mode: "100644", new_mode: "100755" },
    ]);
  });

  test("no rename detection: a move is a deletion plus an addition", () => {
    expect(diffEntries([e("old", "1")], [e("new", "1")]).map((p) => p.change.status)).toEqual(["added", "deleted"]);
  });

  test("100k-entry manifests compare without reading files", () => {
    const n = 100_000;
    const from: SideEntry[] = [];
    const to: SideEntry[] = [];
    for (let i = 0; i < n; i++) {
      const p = `dir${i % 97}/file-${String(i).padStart(6, "0")}.ts`;
      from.push(e(p, `a${i}`));
      if (i % 10 !== 0) to.push(e(p, i % 7 === 0 ? `b${i}` : `a${i}`));
    }
    const sort = (xs: SideEntry[]) => xs.sort((x, y) => (x.path < y.path ? -1 : 1));
    const pairs = diffEntries(sort(from), sort(to));
    expect(pairs.filter((p) => p.change.status === "deleted").length).toBe(n / 10);
    expect(pairs.filter((p) => p.change.status === "modified").length).toBe(
      Array.from({ length: n }, (_, i) => i).filter((i) => i % 10 !== 0 && i % 7 === 0).length,
    );
  });
});
