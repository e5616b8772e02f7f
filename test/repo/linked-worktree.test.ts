import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { readFile } from "../../src/ops/snapshot/file";
import { openWorkspace } from "../../src/ops/workspace";
import { commonDir, userObjectDir } from "../../src/repo/common-dir";
import { contentConversionPossible } from "../../src/repo/content-conversion";
import { readGitState } from "../../src/repo/fingerprint";
import { indexIdentity } from "../../src/repo/index-identity";
import { indexTreeChanges } from "../../src/repo/state-memory";
import { runGit, tmpDir, tmpRepo } from "../helpers/tmp-repo";

/**
 * A linked work tree (`git worktree add`, how agents often get a checkout of their own): its git directory,
 * `.git/worktrees/<name>`, holds its HEAD and index; objects, refs, config and `info/` live in the common directory
 * its `commondir` file names.
 */
async function linkedTree() {
  const main = await tmpRepo();
  main.write("a.txt", "a\n");
  main.write("d/b.txt", "b\n");
  main.commit();
  const dir = tmpDir("ws-linked-");
  const linked = join(dir.path, "tree");
  main.git("worktree", "add", "-q", linked);
  const git = (...args: string[]) => runGit(linked, args);
  return {
    main,
    linked,
    git,
    async [Symbol.asyncDispose]() {
      await dir[Symbol.asyncDispose]();
      await main[Symbol.asyncDispose]();
    },
  };
}

describe("a linked work tree", () => {
  test("regression: its fingerprint's index_oid was empty (the index's tree was written without the repository's objects)", async () => {
    await using t = await linkedTree();
    const ws = openWorkspace(t.linked);
    expect(ws.repo.gitDir).toContain(join(".git", "worktrees"));
    expect(commonDir(ws.repo.gitDir as string)).toBe(join(t.main.root, ".git"));
    expect(userObjectDir(ws.repo.gitDir as string)).toBe(join(t.main.root, ".git", "objects"));
    const before = (await readGitState(ws.repo)).fingerprint;
    expect(before.index_oid).toBe(t.git("write-tree").trim());
    writeFileSync(join(t.linked, "d", "b.txt"), "b, staged\n");
    t.git("add", "d/b.txt");
    const after = (await readGitState(ws.repo)).fingerprint;
    expect(after.index_oid).toBe(t.git("write-tree").trim());
    expect(after.index_oid).not.toBe(before.index_oid);
    // what a stale lease is told: the paths whose index entry moved between the two trees
    expect(await indexTreeChanges(ws.repo, before.index_oid, after.index_oid)).toEqual(new Set(["d/b.txt"]));
    // the empty id an earlier build kept for this index is not taken for its tree
    writeFileSync(join(t.linked, ".mcp", "cache", "index-tree.json"), JSON.stringify({ identity: indexIdentity(join(ws.repo.gitDir as string, "index")), oid: "" }));
    expect((await readGitState(ws.repo)).fingerprint.index_oid).toBe(after.index_oid);
  });

  test("attributes in the common directory's info/ make content conversion possible there", async () => {
    await using t = await linkedTree();
    expect(await contentConversionPossible(openWorkspace(t.linked).repo, [""])).toBe(false);
    mkdirSync(join(t.main.root, ".git", "info"), { recursive: true });
    writeFileSync(join(t.main.root, ".git", "info", "attributes"), "*.txt eol=crlf\n");
    expect(await contentConversionPossible(openWorkspace(t.linked).repo, [""])).toBe(true);
  });

  test("a capture of many clean files links the repository's packs into the private store, and reads every file back", async () => {
    await using t = await linkedTree();
    for (let i = 0; i < 2100; i++) writeFileSync(join(t.linked, `f${String(i).padStart(4, "0")}.txt`), `file ${i}\n`);
    t.git("add", "-A");
    t.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "many");
    t.git("gc", "-q");
    const packs = readdirSync(join(t.main.root, ".git", "objects", "pack")).filter((n) => n.endsWith(".pack"));
    expect(packs.length).toBe(1);
    const ws = openWorkspace(t.linked);
    const snap = await createSnapshot(ws, { paths: ["."] });
    expect(snap.manifest_stats.files).toBe(2102);
    // the user's pack is in the store as a hard link (the same inode), not copied object by object
    const userPack = statSync(join(t.main.root, ".git", "objects", "pack", packs[0] as string));
    expect(userPack.nlink).toBeGreaterThan(1);
    for (const path of ["a.txt", "d/b.txt", "f0000.txt", "f2099.txt"]) {
      const read = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path });
      expect(read.content).toBe(path === "a.txt" ? "a\n" : path === "d/b.txt" ? "b\n" : `file ${Number(path.slice(1, 5))}\n`);
    }
  });
});
