import { describe, expect, test } from "bun:test";
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, isWithin, type RepoPath } from "../../src/core/repo-path";
import { listRevisionTree, revisionRecords } from "../../src/repo/git-revision";
import { indexRead, revisionViaIndex } from "../../src/repo/revision-via-index";
import { openRoot } from "../../src/repo/root";
import { startIndexListing } from "../../src/repo/tree-scan";
import { type TmpRepo, runGit, tmpRepo } from "../helpers/tmp-repo";

/** revisionViaIndex of `rev` under `scope`, and the commit's tree listed (listRevisionTree), under the same scope. */
async function both(root: string, rev: string, scope: RepoPath[] = [ROOT]) {
  const repo = openRoot(root);
  const commit = runGit(root, ["rev-parse", `${rev}^{commit}`]).trim();
  const before = indexRead(repo);
  if (!before) throw new Error("not a git repository");
  const told = await revisionViaIndex(repo, commit, scope, startIndexListing(repo, scope), before);
  const listed = (await listRevisionTree(repo, commit)).entries.filter((e) => scope.some((s) => isWithin(e.path, s)));
  return { told, listed };
}

async function expectSame(root: string, revs: string[], scopes: RepoPath[][] = [[ROOT]]): Promise<void> {
  for (const rev of revs) {
    for (const scope of scopes) {
      const { told, listed } = await both(root, rev, scope);
      expect({ rev, scope, entries: told }).toEqual({ rev, scope, entries: listed });
    }
  }
}

/** A history of three commits with files, an executable, a symlink, names that sort apart in UTF-16 and UTF-8. */
async function history(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  repo.write("a.txt", "a\n");
  repo.write("a-b/c", "c\n");
  repo.write("a/b", "b\n");
  repo.write("bin/run", "#!/bin/sh\n", 0o755);
  repo.symlink("link", "a.txt");
  repo.write("\u{1F600}.txt", "beyond the BMP\n");
  repo.write("\uff01.txt", "below it\n");
  repo.write("dir/deep/x", "x\n");
  repo.commit("one");
  repo.write("a.txt", "a2\n");
  repo.write("new.txt", "n\n");
  rmSync(join(repo.root, "dir/deep/x"));
  repo.git("add", "-A");
  repo.commit("two");
  repo.write("a/b", "b3\n");
  repo.commit("three");
  return repo;
}

describe("a commit's files told from the index (revision-via-index.ts) are the commit's tree", () => {
  test("HEAD and older commits, clean index, whole tree and scopes", async () => {
    await using repo = await history();
    await expectSame(repo.root, ["HEAD", "HEAD~1", "HEAD~2"], [[ROOT], ["a" as RepoPath], ["dir" as RepoPath, "bin" as RepoPath], ["nothing" as RepoPath]]);
  });

  test("staged changes, deletions, additions, a mode change, a file become a symlink, intent-to-add, a rename", async () => {
    await using repo = await history();
    repo.write("a.txt", "staged\n");
    repo.write("added", "added\n");
    repo.write("ita", "intent\n");
    repo.git("add", "a.txt", "added");
    repo.git("add", "-N", "ita");
    repo.git("rm", "-q", "--cached", "new.txt");
    repo.git("update-index", "--chmod=+x", "a/b");
    rmSync(join(repo.root, "link"));
    repo.symlink("link", "new.txt");
    repo.git("add", "link");
    renameSync(join(repo.root, "a-b/c"), join(repo.root, "a-b/moved"));
    repo.git("add", "-A", "a-b");
    // the work tree changed too, unstaged: the index is what counts
    repo.write("bin/run", "changed in the tree only\n");
    await expectSame(repo.root, ["HEAD", "HEAD~1", "HEAD~2"], [[ROOT], ["a-b" as RepoPath]]);
  });

  test("an empty index, and one before the first commit's files were added", async () => {
    await using repo = await history();
    repo.git("read-tree", "--empty");
    await expectSame(repo.root, ["HEAD", "HEAD~2"]);
  });

  test("an unmerged merge: the commit's side of a conflicted path, a path only one side added", async () => {
    await using repo = await history();
    repo.git("checkout", "-q", "-b", "other");
    repo.write("a.txt", "other\n");
    repo.write("only-other", "o\n");
    repo.commit("other");
    repo.git("checkout", "-q", "main");
    repo.write("a.txt", "main\n");
    repo.commit("main");
    expect(() => repo.git("merge", "-q", "other")).toThrow(/merge/);
    expect(repo.git("ls-files", "-u")).toContain("a.txt");
    await expectSame(repo.root, ["HEAD", "other", "HEAD~1"]);
  });

  test("a sparse checkout (skip-worktree entries absent from the work tree), a sparse index, a submodule", async () => {
    await using repo = await history();
    await using sub = await tmpRepo();
    sub.write("inside", "i\n");
    sub.commit();
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.root, "mod");
    repo.commit("with a submodule");
    repo.git("sparse-checkout", "set", "--no-cone", "/a.txt", "/bin/");
    await expectSame(repo.root, ["HEAD", "HEAD~1", "HEAD~3"]);
    repo.git("sparse-checkout", "set", "--cone", "--sparse-index", "bin");
    await expectSame(repo.root, ["HEAD", "HEAD~1"], [[ROOT], ["a" as RepoPath]]);
  });

  test("a root below the top of the work tree: its part of the commit, named from it", async () => {
    await using repo = await history();
    repo.write("dir/own", "own\n");
    repo.git("add", "dir/own");
    await expectSame(join(repo.root, "a"), ["HEAD", "HEAD~2"]);
    await expectSame(join(repo.root, "dir"), ["HEAD", "HEAD~2"]);
  });

  test("an index replaced while it is read is not trusted: null, and the caller lists the tree", async () => {
    await using repo = await history();
    const root = openRoot(repo.root);
    const before = indexRead(root);
    if (!before) throw new Error("not a git repository");
    repo.write("a.txt", "staged later\n");
    repo.git("add", "a.txt");
    const commit = repo.git("rev-parse", "HEAD").trim();
    expect(await revisionViaIndex(root, commit, [ROOT], startIndexListing(root, [ROOT]), before)).toBeNull();
  });
});

describe("a commit's tree listing read (revisionRecords)", () => {
  test("is listRevisionTree's reading of git's output: modes, kinds, names that are not UTF-8, reserved paths, order", () => {
    const rec = (mode: string, type: string, oid: string, path: string | Uint8Array) =>
      Buffer.concat([Buffer.from(`${mode} ${type} ${oid}\t`), typeof path === "string" ? Buffer.from(path) : Buffer.from(path), Buffer.from([0])]);
    const oid = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    const raw = Buffer.concat([
      rec("100644", "blob", oid, "\uff01"),
      rec("100755", "blob", oid, "a"),
      rec("160000", "commit", oid, "mod"),
      rec("120000", "blob", oid, "l"),
      rec("100644", "blob", oid, new Uint8Array([0x62, 0xff])),
      rec("100644", "blob", oid, ".mcp/state"),
      rec("100644", "blob", oid, "\u{1F600}"),
      rec("100644", "blob", oid, "sub/x"),
    ]);
    const tree = revisionRecords(raw);
    expect(tree.entries.map((e) => [e.path, e.mode])).toEqual([
      ["a", "100755"],
      ["l", "120000"],
      ["sub/x", "100644"],
      ["\uff01", "100644"],
      ["\u{1F600}", "100644"],
    ]);
    expect(tree.skipped).toEqual({ non_utf8: 1, submodules: 1 });
    expect(revisionRecords(raw, "sub/").entries.map((e) => e.path)).toEqual(["x"]);
  });
});
