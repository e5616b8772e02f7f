/** Running git: output through a pipe, or spooled to a removed file for large output (the index listing). */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, gitFailed } from "../../src/repo/git";
import { cli } from "../helpers/binary";
import { runGit, tmpDir, tmpRepo } from "../helpers/tmp-repo";

describe("git output spooled to a file", () => {
  test("the same bytes as through a pipe, for half a megabyte of listing (many pipe buffers); nothing is left where the file was made", async () => {
    await using tmp = tmpDir("git-spool-");
    const repo = join(tmp.path, "repo");
    const spoolDir = join(tmp.path, "spool");
    mkdirSync(repo);
    mkdirSync(spoolDir);
    runGit(repo, ["init", "-q"]);
    // names long enough that the listing is many pipe buffers' worth
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(repo, `dir-${d}-${"x".repeat(60)}`));
      for (let f = 0; f < 200; f++) writeFileSync(join(repo, `dir-${d}-${"x".repeat(60)}`, `file-${f}-${"y".repeat(120)}.txt`), `${d} ${f}\n`);
    }
    runGit(repo, ["add", "-A"]);
    const args = ["ls-files", "-s", "-v", "-z"];
    const piped = await git(args, { cwd: repo });
    const spooled = await git(args, { cwd: repo, spool: join(spoolDir, "listing") });
    expect(piped.stdout.length).toBeGreaterThan(400_000);
    expect(Buffer.from(spooled.stdout).equals(Buffer.from(piped.stdout))).toBe(true);
    expect(readdirSync(spoolDir)).toEqual([]);
  });

  test("regression (a listing doubled under descriptor starvation): a spawn that fails after its child started leaves that child's output out of the answer", async () => {
    await using tmp = tmpDir("git-spool-");
    runGit(tmp.path, ["init", "-q"]);
    for (let i = 0; i < 50; i++) writeFileSync(join(tmp.path, `f${i}.txt`), `${i}\n`);
    runGit(tmp.path, ["add", "-A"]);
    const args = ["ls-files", "-s", "-v", "-z"];
    const piped = await git(args, { cwd: tmp.path });
    // Out of descriptors, the runtime can start the child and then fail to watch it (EMFILE): the child runs on
    // and writes all its output where it was told. The first spawn here does just that; the retry then succeeds.
    const spawn = Bun.spawn;
    const orphans: Bun.Subprocess[] = [];
    let calls = 0;
    (Bun as { spawn: unknown }).spawn = (...a: Parameters<typeof Bun.spawn>) => {
      const child = spawn(...a);
      if (calls++ > 0) return child;
      orphans.push(child);
      throw Object.assign(new Error("EMFILE: too many open files, spawn"), { code: "EMFILE" });
    };
    let spooled;
    try {
      spooled = await git(args, { cwd: tmp.path, spool: join(tmp.path, ".git", "listing") });
    } finally {
      (Bun as { spawn: unknown }).spawn = spawn;
    }
    await Promise.all(orphans.map((o) => o.exited));
    expect(calls).toBe(2);
    expect(new TextDecoder().decode(spooled.stdout)).toBe(new TextDecoder().decode(piped.stdout));
  });

  test("where the file cannot be made (no such directory), the output comes through a pipe; failures are reported alike", async () => {
    await using tmp = tmpDir("git-spool-");
    runGit(tmp.path, ["init", "-q"]);
    writeFileSync(join(tmp.path, "a"), "a\n");
    runGit(tmp.path, ["add", "a"]);
    const r = await git(["ls-files", "-z"], { cwd: tmp.path, spool: join(tmp.path, "missing", "listing") });
    expect(new TextDecoder().decode(r.stdout)).toBe("a\0");
    await expect(git(["rev-parse", "--verify", "no-such-rev"], { cwd: tmp.path, spool: join(tmp.path, "listing") })).rejects.toThrow(/git rev-parse failed/);
    expect(readdirSync(tmp.path).sort()).toEqual([".git", "a"]);
  });
});

describe("objects git cannot give", () => {
  const g = (cwd: string, ...args: string[]) => void runGit(cwd, args);

  test("regression (INTERNAL, exit 70): a partial clone whose remote is gone is NOT_FOUND naming the object, never the remote's path", async () => {
    await using dir = tmpDir();
    const origin = join(dir.path, "origin");
    mkdirSync(origin);
    g(origin, "init", "-q");
    for (let i = 1; i <= 3; i++) {
      writeFileSync(join(origin, "f.txt"), `v${i}\n`);
      g(origin, "add", ".");
      g(origin, "commit", "-qm", `c${i}`);
    }
    g(origin, "config", "uploadpack.allowFilter", "true");
    g(dir.path, "clone", "-q", "--filter=blob:none", `file://${origin}`, "clone");
    const clone = join(dir.path, "clone");
    // checked out, the tree is served as any other
    expect(cli(["snapshot", "create", "--root", clone]).code).toBe(0);
    renameSync(origin, `${origin}.gone`);
    const r = cli(["snapshot", "diff", "HEAD~2", "HEAD", "--root", clone, "--json"]);
    expect(r.code).toBe(1);
    const err = JSON.parse(r.stdout).error;
    expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_object_unavailable" } });
    expect(err.message).toMatch(/could not fetch [0-9a-f]{40} from promisor remote/);
    expect(err.message).toContain("partial clone");
    expect(r.stdout).not.toContain(origin);
  });

  test("a damaged object store (HEAD's commit gone) is NOT_FOUND saying so; other failures stay INTERNAL", async () => {
    await using dir = tmpDir();
    g(dir.path, "init", "-q");
    writeFileSync(join(dir.path, "a.txt"), "a\n");
    g(dir.path, "add", ".");
    g(dir.path, "commit", "-qm", "x");
    const head = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: dir.path }).stdout.toString().trim();
    rmSync(join(dir.path, ".git", "objects", head.slice(0, 2), head.slice(2)));
    const r = cli(["snapshot", "create", "--root", dir.path, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_object_unavailable" } });
    expect(JSON.parse(r.stdout).error.message).toContain("fatal: bad object HEAD");
    expect(gitFailed(["status"], "fatal: unable to write new index file", 128).code).toBe("INTERNAL");
  });

  test("regression (INTERNAL for a damaged index): an index git cannot read is NOT_FOUND saying so and how git rebuilds it, on every call", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit("x");
    // empty (a write cut short), and bytes of something else (a sync tool's conflict copy put in its place)
    for (const damaged of [new Uint8Array(0), new TextEncoder().encode("PK\x03\x04 this is no index file ".repeat(4))]) {
      writeFileSync(join(repo.root, ".git", "index"), damaged);
      for (const args of [["snapshot", "create"], ["snapshot", "changes", "HEAD", "worktree"]]) {
        const r = cli([...args, "--root", repo.root, "--json"]);
        expect(r.code).toBe(1);
        const err = JSON.parse(r.stdout).error;
        expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "git_index_unreadable" } });
        expect(err.message).toContain("git reset");
        expect(r.stdout).not.toContain(repo.root);
      }
    }
    expect(gitFailed(["status"], "error: bad signature 0x00000000\nfatal: index file corrupt", 128).details.reason).toBe("git_index_unreadable");
  });
});
