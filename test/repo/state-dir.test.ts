/** `.mcp/` as worksnap takes it: its own, never a directory of the repository's tracked files. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../helpers/binary";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

describe("a .mcp/ that is the repository's", () => {
  test("regression (state mixed into tracked files, hidden from the tools): refused before anything is written there", async () => {
    await using repo = await tmpRepo();
    repo.write(".mcp/config.json", '{"servers":{}}\n');
    repo.write("a.txt", "a\n");
    repo.commit();
    for (const args of [["snapshot", "create"], ["history", "status"], ["snapshot", "list"]]) {
      const r = cli([...args, "--root", repo.root, "--json"]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      const err = JSON.parse(r.stdout).error;
      expect(err).toMatchObject({ code: "PERMISSION_DENIED", details: { reason: "state_dir_tracked", tracked: [".mcp/config.json"] } });
      expect(err.message).toContain(".mcp/ holds files the repository tracks (.mcp/config.json)");
    }
    expect(readdirSync(join(repo.root, ".mcp"))).toEqual(["config.json"]);
    expect(readFileSync(join(repo.root, ".mcp", "config.json"), "utf8")).toBe('{"servers":{}}\n');
    expect(runGit(repo.root, ["status", "--porcelain", "--ignored"])).toBe("");
  });

  test("an untracked .mcp/ (an earlier worksnap's, or a plain directory's) is taken as before", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.write(".mcp/.gitignore", "*\n");
    repo.write(".mcp/snapshots/.keep", "");
    expect(cli(["snapshot", "create", "--root", repo.root]).code).toBe(0);
    expect(readFileSync(join(repo.root, ".mcp", "format"), "utf8")).toMatch(/^\d+\n$/);
    // worksnap's own .gitignore committed by someone is no repository file of its own
    await using committed = await tmpRepo();
    committed.write(".mcp/.gitignore", "*\n");
    runGit(committed.root, ["add", "-f", ".mcp/.gitignore"]);
    committed.write("a.txt", "a\n");
    committed.commit();
    expect(cli(["snapshot", "create", "--root", committed.root]).code).toBe(0);
    await using plain = await tmpRepo({ git: false });
    plain.write(".mcp/config.json", "{}\n");
    plain.write("b.txt", "b\n");
    expect(cli(["snapshot", "create", "--root", plain.root]).code).toBe(0);
  });
});
