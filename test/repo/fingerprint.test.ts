import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash";
import { readGitState, STATUS_ARGS } from "../../src/repo/fingerprint";
import { openRoot } from "../../src/repo/root";
import { liveFingerprint } from "../../src/ops/live/live-tree";
import { openWorkspace } from "../../src/ops/workspace";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

describe("fingerprint (spec 2.2)", () => {
  test("head_oid, index_oid and status_hash match git's own answers", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    const head = repo.commit();
    repo.write("b.txt", "untracked\n");
    const { fingerprint } = await readGitState(openRoot(repo.root));
    expect(fingerprint.head_oid).toBe(head);
    expect(fingerprint.index_oid).toBe(repo.git("write-tree").trim());
    const status = Bun.spawnSync(["git", ...STATUS_ARGS], { cwd: repo.root }).stdout;
    expect(fingerprint.status_hash).toBe(sha256Hex(status));
  });

  test("unborn HEAD gives an empty head_oid; an empty index gives the empty tree", async () => {
    await using repo = await tmpRepo();
    const { fingerprint } = await readGitState(openRoot(repo.root));
    expect(fingerprint.head_oid).toBe("");
    expect(fingerprint.index_oid).toBe("4b825dc642cb6eb9a060e54bf8d69288fbee4904");
  });

  test("an unmerged index gives an empty index_oid", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", "base\n");
    repo.commit("base");
    repo.git("checkout", "-q", "-b", "other");
    repo.write("f.txt", "other\n");
    repo.commit("other");
    repo.git("checkout", "-q", "main");
    repo.write("f.txt", "main\n");
    repo.commit("main");
    Bun.spawnSync(["git", "merge", "other"], { cwd: repo.root, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    expect(repo.git("ls-files", "-u")).not.toBe("");
    const { fingerprint } = await readGitState(openRoot(repo.root));
    expect(fingerprint.index_oid).toBe("");
    expect(fingerprint.head_oid).not.toBe("");
  });

  test("works while the user holds .git/index.lock, leaves it untouched, and never creates one", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.write("a.txt", "changed\n");
    const lock = join(repo.root, ".git", "index.lock");
    writeFileSync(lock, "held by the user");
    const before = statSync(lock);
    const indexBefore = readFileSync(join(repo.root, ".git", "index"));
    const ws = openWorkspace(repo.root);
    const fp = await liveFingerprint(ws);
    expect(fp.index_oid).toMatch(/^[0-9a-f]{40}$/);
    const snap = await createSnapshot(ws, { paths: ["."] });
    expect(snap.manifest_stats.files).toBe(1);
    expect(readFileSync(lock, "utf8")).toBe("held by the user");
    expect(statSync(lock).mtimeMs).toBe(before.mtimeMs);
    expect(readFileSync(join(repo.root, ".git", "index"))).toEqual(indexBefore);
  });

  test("no index.lock ever appears while fingerprints are computed", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 50; i++) repo.write(`f${i}.txt`, `${i}\n`);
    repo.commit();
    for (let i = 0; i < 50; i += 3) repo.write(`f${i}.txt`, `changed ${i}\n`);
    const ws = openWorkspace(repo.root);
    const lock = join(repo.root, ".git", "index.lock");
    let seen = false;
    let running = true;
    const watcher = (async () => {
      while (running) {
        if (existsSync(lock)) seen = true;
        await Bun.sleep(0);
      }
    })();
    for (let i = 0; i < 10; i++) await liveFingerprint(ws);
    await createSnapshot(ws, { paths: ["."] });
    running = false;
    await watcher;
    expect(seen).toBe(false);
  });

  test("worksnap's own state does not change git status or the fingerprint", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.write("new.txt", "n\n");
    const statusBefore = runGit(repo.root, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
    const ws = openWorkspace(repo.root);
    const fp1 = await liveFingerprint(ws);
    await createSnapshot(ws, { paths: ["."] });
    const fp2 = await liveFingerprint(ws);
    expect(fp2).toEqual(fp1);
    expect(readFileSync(join(repo.root, ".mcp", ".gitignore"), "utf8")).toBe("*\n");
    const statusAfter = runGit(repo.root, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
    expect(statusAfter).toBe(statusBefore);
    expect(statusAfter).not.toContain(".mcp");
  });

  test("outside git: empty git fields and a status_hash that follows the files", async () => {
    await using dir = await tmpRepo({ git: false });
    dir.write("a.txt", "a\n");
    const ws = openWorkspace(dir.root);
    const fp1 = await liveFingerprint(ws);
    expect(fp1.head_oid).toBe("");
    expect(fp1.index_oid).toBe("");
    expect(fp1.status_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await liveFingerprint(ws)).toEqual(fp1);
    dir.write("b.txt", "b\n");
    expect((await liveFingerprint(ws)).status_hash).not.toBe(fp1.status_hash);
  });
});
