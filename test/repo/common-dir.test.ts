/** The git configuration files a cache is keyed by, found where the environment says they are. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { configStamp } from "../../src/repo/common-dir";
import { cli } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

describe("configuration files below something that is not a directory", () => {
  test("regression (INTERNAL: ENOTDIR, with the machine's path): XDG_CONFIG_HOME naming a file is a configuration git reads none of, as git takes it", async () => {
    await using dir = tmpDir("ws-xdg-");
    const file = join(dir.path, "not-a-directory");
    writeFileSync(file, "x\n");
    expect(configStamp([join(file, "git", "config"), join(dir.path, "missing")])).toBe("-\0-");
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.write("a.txt", "b\n");
    const r = cli(["snapshot", "changes", "HEAD", "worktree", "--root", repo.root], { env: { XDG_CONFIG_HOME: file } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("modified     a.txt\n");
  });
});
