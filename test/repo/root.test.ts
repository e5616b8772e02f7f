import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRoot } from "../../src/repo/root";
import { cli, mcpSession } from "../helpers/binary";
import { starvedOutcomes } from "../helpers/starved";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

/** A PATH with nothing on it: the compiled binary needs nothing else (it is standalone). */
function emptyPath(): { PATH: string } & Disposable {
  const dir = mkdtempSync(join(tmpdir(), "ws-empty-path-"));
  return { PATH: dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("no git needed where the spec says so", () => {
  test("outside a git repository, serve and history work with no git executable on PATH", async () => {
    await using dir = await tmpRepo({ git: false });
    dir.write("notes.txt", "one\n");
    using path = emptyPath();
    expect(Bun.which("git", { PATH: path.PATH })).toBeNull();
    {
      await using s = await mcpSession(dir.root, [], { env: { PATH: path.PATH } });
      const read = await s.call("snapshot_file", { mode: "worktree", path: "notes.txt" });
      expect(read.fingerprint.head_oid).toBe("");
      const w = await s.call("workspace_write_file", { mode: "worktree", path: "notes.txt", content: "two\n", lease_id: read.lease_id });
      expect(w.changed[0].path).toBe("notes.txt");
      expect((await s.call("snapshot_create", { paths: ["."] })).manifest_stats.files).toBe(1);
    }
    const env = { PATH: path.PATH };
    const status = cli(["history", "status", "--root", dir.root, "--json"], { env });
    expect([status.code, status.stderr]).toEqual([0, ""]);
    expect(status.json().entries.map((e: any) => e.file_path)).toEqual(["notes.txt"]);
    const show = cli(["history", "show", status.json().entries[0].edit_id, "--root", dir.root], { env });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("+two");
    expect(cli(["snapshot", "list", "--root", dir.root], { env }).code).toBe(0);
  });

  test("inside a git repository without git on PATH the error says so plainly (not INTERNAL)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using path = emptyPath();
    const r = cli(["snapshot", "list", "--root", repo.root, "--json"], { env: { PATH: path.PATH } });
    expect(r.code).toBe(1);
    expect(r.json().error.code).toBe("NOT_FOUND");
    expect(r.json().error.message).toContain("git is not on PATH");
  });
});

/** top/ with a tracked file, an ignore rule for sub/ at the top, and sub/ with tracked, untracked and ignored files. */
function monorepo(repo: TmpRepo): string {
  repo.write("top.txt", "top\n");
  repo.write(".gitignore", "*.log\nsub/build/\n");
  repo.write("sub/app.ts", "export const app = 1;\n");
  repo.write("sub/lib/util.ts", "export const util = 2;\n");
  repo.commit();
  repo.write("sub/new.ts", "untracked\n");
  repo.write("sub/debug.log", "ignored by the top's rule\n");
  repo.write("sub/build/out.js", "ignored directory\n");
  return join(repo.root, "sub");
}

describe("a root inside a repository behaves as part of that repository", () => {
  test("the fingerprint is the repository's, the ignore rules are git's, the candidates are the subdirectory's, named from it", async () => {
    await using repo = await tmpRepo();
    const sub = monorepo(repo);
    expect(openRoot(sub)).toMatchObject({ gitPrefix: "sub/", gitDir: expect.stringMatching(/\.git$/) });
    await using s = await mcpSession(sub);
    const list = await s.call("snapshot_list", { mode: "worktree", recursive: true });
    expect(list.entries.map((e: any) => e.path)).toEqual(["app.ts", "lib", "lib/util.ts", "new.ts"]);
    // .mcp/ lives in the root, and git does not see it: the repository's fingerprint is unchanged by it; the top's
    // .mcp/ holds only the work-tree lock every root of the work tree shares, and git does not see it either
    expect(existsSync(join(sub, ".mcp"))).toBe(true);
    expect(readdirSync(join(repo.root, ".mcp")).filter((n) => ![".gitignore", "format", "locks", "tmp"].includes(n))).toEqual([]);
    expect(repo.git("status", "--porcelain")).toBe("?? sub/new.ts\n");
    {
      await using atTop = await mcpSession(repo.root);
      const top = await atTop.call("snapshot_list", { mode: "worktree" });
      expect(list.fingerprint).toEqual(top.fingerprint);
      expect(list.fingerprint.head_oid).toBe(repo.git("rev-parse", "HEAD").trim());
    }
    const snap = await s.call("snapshot_create", { paths: ["."] });
    expect(snap.manifest_stats.files).toBe(3);
    const grep = await s.call("snapshot_grep", { mode: "worktree", pattern: "ignored" });
    expect(grep.matches).toEqual([]); // debug.log and build/ are ignored by the top's .gitignore
    // clean tracked files are known by their index blobs (the repository's index, read from the subdirectory)
    const changes = await s.call("snapshot_changes", { from: snap.snapshot_id, to: "worktree" });
    expect(changes.changes).toEqual([]);
    writeFileSync(join(sub, "app.ts"), "export const app = 3;\n");
    const after = await s.call("snapshot_changes", { from: snap.snapshot_id, to: "worktree" });
    expect(after.changes).toEqual([{ path: "app.ts", status: "modified" }]);
  });

  test("a change anywhere in the repository moves the lease (the fingerprint is the repository's); writes still cannot leave the root", async () => {
    await using repo = await tmpRepo();
    const sub = monorepo(repo);
    symlinkSync("../top.txt", join(sub, "up-link"));
    await using s = await mcpSession(sub);
    const read = await s.call("snapshot_file", { mode: "worktree", path: "app.ts" });
    writeFileSync(join(repo.root, "top.txt"), "changed outside the root\n");
    const stale = await s.callError("workspace_write_file", { mode: "worktree", path: "app.ts", content: "x\n", lease_id: read.lease_id });
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint).toEqual((await s.call("snapshot_list", { mode: "worktree" })).fingerprint);
    expect((await s.callError("workspace_write_file", { mode: "worktree", path: "../top.txt", content: "x\n" })).code).toBe("INVALID_ARGUMENT");
    expect((await s.callError("workspace_write_file", { mode: "worktree", path: "up-link", content: "x\n" })).code).toBe("PERMISSION_DENIED");
    expect((await s.callError("snapshot_file", { mode: "worktree", path: "up-link" })).code).toBe("PERMISSION_DENIED");
    const w = await s.call("workspace_write_file", { mode: "worktree", path: "lib/new.ts", content: "n\n" });
    expect(w.changed[0].path).toBe("lib/new.ts");
    expect(repo.git("status", "--porcelain", "--", "sub/lib")).toBe("?? sub/lib/new.ts\n");
  });

  test("a root in an untracked directory lists its untracked files; a root the repository ignores is a plain directory", async () => {
    await using repo = await tmpRepo();
    monorepo(repo);
    mkdirSync(join(repo.root, "fresh", "pkg"), { recursive: true });
    writeFileSync(join(repo.root, "fresh", "pkg", "index.ts"), "fresh\n");
    const fresh = cli(["snapshot", "list", "--recursive", "--root", join(repo.root, "fresh", "pkg"), "--json"]).json();
    expect(fresh.entries.map((e: any) => e.path)).toEqual(["index.ts"]);
    expect(fresh.fingerprint.head_oid).not.toBe("");
    const ignored = cli(["snapshot", "list", "--recursive", "--root", join(repo.root, "sub", "build"), "--json"]).json();
    expect(ignored.entries.map((e: any) => e.path)).toEqual(["out.js"]);
    expect(ignored.fingerprint.head_oid).toBe("");
  });

  test("attributes above a root below the top count for content conversion", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitattributes", "*.txt eol=crlf\n");
    for (let i = 0; i < 5; i++) repo.write(`sub/t${i}.txt`, `line ${i}\nsecond\n`);
    repo.commit();
    for (let i = 0; i < 5; i++) rmSync(join(repo.root, `sub/t${i}.txt`));
    repo.git("checkout", "--", ".");
    const sub = join(repo.root, "sub");
    const snap = cli(["snapshot", "create", "--root", sub, "--json"]).json();
    const file = cli(["snapshot", "file", "t3.txt", "--snapshot", snap.snapshot_id, "--root", sub]);
    expect(file.stdout).toBe("line 3\r\nsecond\r\n"); // the work tree's bytes, not the index blob's
  });
});

describe("a root opened with no descriptor free", () => {
  test("regression (a descriptor shortage read as a missing root): it fails as that; a missing root is NOT_FOUND", async () => {
    await using repo = await tmpRepo();
    const r = starvedOutcomes(repo.root, import.meta.dir, [["openRoot", "../../src/repo/root.ts"]], "", [`openRoot(${JSON.stringify(repo.root)})`]);
    expect(r.stderr).toBe("");
    expect(r.outcomes).toEqual(["EMFILE"]);
    expect(() => openRoot(join(repo.root, "no-such-dir"))).toThrow(/does not exist/);
  });
});

describe("a .git file naming a git directory that is gone", () => {
  test("regression (served as a plain directory): a linked work tree whose repository moved is NOT_FOUND saying so and how to repair it, from its top and below; repaired, it is served as before", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("sub/b.txt", "b\n");
    repo.commit();
    const linked = repo.beside("-linked");
    repo.git("worktree", "add", "-q", linked);
    const moved = repo.beside("-moved");
    Bun.spawnSync(["mv", repo.root, moved]);
    try {
      for (const root of [linked, join(linked, "sub")]) {
        const r = cli(["snapshot", "create", "--root", root, "--json"]);
        expect(r.code).toBe(1);
        const err = JSON.parse(r.stdout).error;
        expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_dir_missing" } });
        expect(err.message).toContain("git worktree repair");
        expect(r.stdout).not.toContain(moved);
        expect(r.stdout).not.toContain(linked);
      }
      expect(() => openRoot(linked)).toThrow("names a git directory git cannot open");
      Bun.spawnSync(["git", "worktree", "repair", linked], { cwd: moved });
      const fixed = cli(["snapshot", "changes", "HEAD", "worktree", "--root", linked]);
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).toBe("");
    } finally {
      Bun.spawnSync(["mv", moved, repo.root]);
    }
  });
});
