import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openRoot } from "../../src/repo/root";
import { literalPathspecs } from "../../src/repo/tree-scan";
import { listOthers } from "../../src/repo/untracked-guess";
import type { RepoPath } from "../../src/core/repo-path";
import { rng } from "../ops/patch/fixtures";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

/** The untracked directories git's status names whole. */
function untrackedDirs(root: string): string[] {
  return runGit(root, ["status", "--porcelain=v1", "-z", "--untracked-files=normal"])
    .split("\0")
    .filter((r) => r.startsWith("?? ") && r.endsWith("/"))
    .map((r) => r.slice(3, -1));
}

/** git's own listing of them, against the user's index. */
function gitOthers(root: string, dirs: string[]): string {
  return runGit(root, ["ls-files", "-z", "--others", "--exclude-standard", "--", ...literalPathspecs(dirs as RepoPath[])]);
}

async function ours(root: string, dirs: string[]): Promise<string> {
  return Buffer.from((await listOthers(openRoot(root), literalPathspecs(dirs as RepoPath[]))).stdout).toString();
}

describe("listing untracked directories", () => {
  test("equals git's listing against the index, over random trees with ignore rules at every level", async () => {
    const r = rng(4242);
    for (let round = 0; round < 6; round++) {
      await using repo = await tmpRepo();
      repo.write(".gitignore", "*.tmp\n");
      for (let i = 0; i < 12; i++) repo.write(`t${r.int(3)}/d${r.int(3)}/f${i}.txt`, `${i}\n`);
      repo.commit("tracked");
      for (let i = 0; i < 40; i++) {
        const dir = `u${r.int(4)}/${r.pick(["a", "b", "c d", "é"])}/${r.int(2) ? "deep/" : ""}`;
        mkdirSync(join(repo.root, dir), { recursive: true });
        writeFileSync(join(repo.root, dir, r.pick(["x.txt", "y.tmp", "z.log", "w.md"])), "u\n");
        if (r.int(6) === 0) writeFileSync(join(repo.root, dir, ".gitignore"), r.pick(["*.log\n", "w.md\n", "!y.tmp\n"]));
      }
      appendFileSync(join(repo.root, ".git/info/exclude"), "*.md\n");
      const dirs = untrackedDirs(repo.root);
      expect(dirs.length).toBeGreaterThan(0);
      expect(await ours(repo.root, dirs)).toBe(gitOthers(repo.root, dirs));
    }
  });

  test("a skip-worktree .gitignore above them: git's rules from the index are kept (the index is version 3)", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitignore", "*.secret\n");
    repo.write("kept.txt", "k\n");
    repo.commit("rules");
    // as a sparse checkout leaves it: skip-worktree and not in the work tree, where git reads the index's blob
    runGit(repo.root, ["update-index", "--skip-worktree", ".gitignore"]);
    rmSync(join(repo.root, ".gitignore"));
    mkdirSync(join(repo.root, "new"));
    writeFileSync(join(repo.root, "new", "a.secret"), "s\n");
    writeFileSync(join(repo.root, "new", "b.txt"), "t\n");
    const dirs = untrackedDirs(repo.root);
    expect(dirs).toEqual(["new"]);
    const listed = await ours(repo.root, dirs);
    expect(listed).toBe(gitOthers(repo.root, dirs));
    expect(listed).toBe("new/b.txt\0");
  });
});
