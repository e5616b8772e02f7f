/** The server's workspaces by root directory. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { WorkspacePool } from "../../src/mcp/roots";
import { starvedOutcomes } from "../helpers/starved";
import { tmpRepo } from "../helpers/tmp-repo";

describe("WorkspacePool", () => {
  test("regression (a descriptor shortage read as a missing root): a root looked up with no descriptor free fails as that; a missing root is NOT_FOUND", async () => {
    await using repo = await tmpRepo();
    const r = starvedOutcomes(repo.root, import.meta.dir, [["WorkspacePool", "../../src/mcp/roots.ts"]], "", [`new WorkspacePool().get(${JSON.stringify(repo.root)})`]);
    expect(r.stderr).toBe("");
    expect(r.outcomes).toEqual(["EMFILE"]);
    const pool = new WorkspacePool();
    expect(() => pool.get(join(repo.root, "no-such-dir"))).toThrow(/does not exist/);
    pool.closeAll();
  });
});
