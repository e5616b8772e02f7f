import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { closeWorkspace, openWorkspace } from "../../../src/ops/workspace";
import { lockDirOf, withWorktreeLock } from "../../../src/ops/write/worktree-lock";
import { mcpSession } from "../../helpers/binary";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

describe("nested roots of one work tree share the work-tree lock", () => {
  test("regression (nested roots took separate work-tree locks): a server on a root below the top waits while the top's root holds the lock", async () => {
    await using repo = await tmpRepo();
    repo.write("sub/a.txt", "one\n");
    repo.commit();
    using top = wsOf(repo);
    const sub = openWorkspace(join(repo.root, "sub"));
    closeWorkspace(sub);
    expect(lockDirOf(sub)).toBe(lockDirOf(top));
    // the root's own state stays its own
    expect(sub.repo.stateDir).toBe(join(repo.root, "sub", ".mcp"));
    // another process: a server on the subdirectory
    await using s = await mcpSession(join(repo.root, "sub"));
    {
      let written: Promise<unknown> | null = null;
      await withWorktreeLock(top, async () => {
        written = s.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "two\n" });
        // long enough for an unlocked write to land many times over
        await Bun.sleep(500);
        expect(readFileSync(join(repo.root, "sub/a.txt"), "utf8")).toBe("one\n");
      });
      await written;
      expect(readFileSync(join(repo.root, "sub/a.txt"), "utf8")).toBe("two\n");
    }
  });

  test("the top's .mcp/ made for the lock is kept out of git's status like the root's own", async () => {
    await using repo = await tmpRepo();
    repo.write("sub/a.txt", "one\n");
    repo.commit();
    const sub = openWorkspace(join(repo.root, "sub"));
    closeWorkspace(sub);
    expect(existsSync(join(repo.root, ".mcp", ".gitignore"))).toBe(true);
    const status = Bun.spawnSync(["git", "status", "--porcelain"], { cwd: repo.root }).stdout.toString();
    expect(status).toBe("");
  });
});
