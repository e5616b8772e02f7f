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

  test("regression (advice to remove a file the repository tracks): a .mcp file the repository tracks is refused saying to move it with git; an untracked one, to move it aside; neither is touched", async () => {
    await using repo = await tmpRepo();
    repo.write(".mcp", '{"mcpServers":{}}\n');
    repo.write("a.txt", "a\n");
    repo.commit();
    const r = cli(["snapshot", "create", "--root", repo.root, "--json"]);
    expect(r.code).toBe(1);
    const err = JSON.parse(r.stdout).error;
    expect(err).toMatchObject({ code: "PERMISSION_DENIED", details: { reason: "state_dir_tracked", tracked: [".mcp"] } });
    expect(err.message).toContain("the repository tracks this one");
    expect(err.message).toContain("git mv .mcp");
    expect(err.message).not.toContain("Remove it");
    expect(readFileSync(join(repo.root, ".mcp"), "utf8")).toBe('{"mcpServers":{}}\n');
    expect(runGit(repo.root, ["status", "--porcelain", "--ignored"])).toBe("");

    await using loose = await tmpRepo();
    loose.write("a.txt", "a\n");
    loose.commit();
    loose.write(".mcp", "someone's notes\n");
    const u = cli(["snapshot", "create", "--root", loose.root, "--json"]);
    expect(u.code).toBe(1);
    const uerr = JSON.parse(u.stdout).error;
    expect(uerr).toMatchObject({ code: "PERMISSION_DENIED", details: { reason: "state_dir_not_a_directory" } });
    expect(uerr.message).toContain("Move it aside");
    expect(uerr.message).not.toContain("Remove it");
    expect(readFileSync(join(loose.root, ".mcp"), "utf8")).toBe("someone's notes\n");
  });
});
