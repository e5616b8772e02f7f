import { describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

/**
 * Regression: the compiled executable, and the regex child processes it starts as bun, loaded the working
 * directory's bunfig.toml and .env, so a repository's `preload` script ran inside worksnap (code execution on
 * opening a repository) and its .env changed worksnap's own settings (WORKSNAP_NATIVE=0).
 */
describe("r-bunfig-preload: nothing of the repository runs inside worksnap", () => {
  test("bunfig.toml preload and .env in the repository are ignored, by the CLI, the server and grep's regex children", async () => {
    await using repo = await tmpRepo();
    await using out = tmpDir("ws-preload-");
    const marker = join(out.path, "ran");
    repo.write("bunfig.toml", 'preload = ["./preload.ts"]\n');
    repo.write("preload.ts", `require("node:fs").appendFileSync(${JSON.stringify(marker)}, "ran\\n");\n`);
    repo.write(".env", "WORKSNAP_NATIVE=0\n");
    repo.write("data.txt", Array.from({ length: 50 }, (_, i) => `line ${i} key=value`).join("\n") + "\n");
    repo.commit();

    const version = cli(["--version"], { cwd: repo.root });
    expect(version.code).toBe(0);
    if (process.env.WORKSNAP_BUILD_NATIVE !== "0" && process.env.WORKSNAP_NATIVE !== "0") expect(version.stdout).toContain("native: on");
    expect(cli(["snapshot", "create"], { cwd: repo.root }).code).toBe(0);
    // `.*.*=` cannot be proven cheap: it runs in child processes (regex-sandbox.ts)
    const grep = cli(["snapshot", "grep", ".*.*=", "data.txt"], { cwd: repo.root });
    expect(grep.code).toBe(0);
    expect(grep.stdout.split("\n").filter(Boolean)).toHaveLength(50);
    {
      await using s = await mcpSession(repo.root);
      const r = await s.call("snapshot_grep", { mode: "worktree", pattern: ".*.*=", paths: ["data.txt"] });
      expect(r.matches).toHaveLength(50);
    }
    expect(existsSync(marker)).toBe(false);
    rmSync(marker, { force: true });
  });
});
