/** The server's workspaces by root directory. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { WorkspacePool } from "../../src/mcp/roots";
import { runStarved, srcImport } from "../helpers/starved";
import { tmpRepo } from "../helpers/tmp-repo";

describe("WorkspacePool", () => {
  test("regression (a descriptor shortage read as a missing root): a root looked up with no descriptor free fails as that; a missing root is NOT_FOUND", async () => {
    await using repo = await tmpRepo();
    const r = runStarved(
      repo.root,
      srcImport("WorkspacePool", import.meta.dir, "../../src/mcp/roots.ts"),
      `try { new WorkspacePool().get(${JSON.stringify(repo.root)}); console.log("opened"); } catch (e) { console.log((e as { code?: string }).code ?? "?"); }`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("EMFILE");
    const pool = new WorkspacePool();
    expect(() => pool.get(join(repo.root, "no-such-dir"))).toThrow(/does not exist/);
    pool.closeAll();
  });
});
