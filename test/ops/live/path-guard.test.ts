import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { RepoPath } from "../../../src/core/repo-path";
import { resolveInRoot } from "../../../src/ops/live/path-guard";
import { openRoot } from "../../../src/repo/root";
import { tmpRepo } from "../../helpers/tmp-repo";

describe("resolveInRoot", () => {
  test("regression: a missing path under a missing directory keeps every segment (b/c.txt is not c.txt)", async () => {
    await using repo = await tmpRepo();
    const r = resolveInRoot(openRoot(repo.root), "b/c/d.txt" as RepoPath);
    expect(r).toMatchObject({ resolved: "b/c/d.txt", exists: false });
    expect(r.abs).toBe(join(openRoot(repo.root).root, "b/c/d.txt"));
  });

  test("a missing file below a symlinked directory resolves through the link, and is refused if the link leaves the root", async () => {
    await using repo = await tmpRepo();
    mkdirSync(join(repo.root, "real"));
    symlinkSync("real", join(repo.root, "alias"));
    symlinkSync("/tmp", join(repo.root, "out"));
    expect(resolveInRoot(openRoot(repo.root), "alias/new/x.txt" as RepoPath).resolved).toBe("real/new/x.txt" as RepoPath);
    expect(() => resolveInRoot(openRoot(repo.root), "out/new/x.txt" as RepoPath)).toThrow(/outside the repository root/);
  });
});
