/**
 * A repository someone else owns, opened by a user who may read it but not
 * write it (a reviewer looking at an agent's checkout, a CI step under
 * another account): every answer is a clear refusal naming the reason, never
 * a different tree or a listing with readable files called unreadable.
 * Needs root to make that other user (the tests' unprivileged user, nobody).
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, cliUnprivileged, requireBinary, unprivileged } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

const asRoot = process.getuid?.() === 0;

/** The tree readable by everyone, owned by the user running the tests (root). */
function openToReaders(root: string): void {
  Bun.spawnSync(["chmod", "-R", "a+rX", root]);
  Bun.spawnSync(["chmod", "a+rx", join(root, "..")]);
}

describe.skipIf(!asRoot)("a repository another user owns", () => {
  test("regression: git's refusal (safe.directory) is passed on, not served as a plain directory", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write(".gitignore", "build/\n");
    repo.write("build/out.bin", "built\n");
    repo.commit();
    openToReaders(repo.root);
    for (const args of [["snapshot", "list"], ["snapshot", "create"], ["history", "status"], ["snapshot", "diff", "HEAD", "worktree"]]) {
      const r = cliUnprivileged([...args, "--root", repo.root, "--json"]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      const err = JSON.parse(r.stdout).error;
      expect(err.code).toBe("PERMISSION_DENIED");
      expect(err.details.reason).toBe("git_dubious_ownership");
      expect(err.message).toContain("owned by another user");
      expect(err.message).toContain("safe.directory");
    }
    // its owner is served as before
    expect(cli(["snapshot", "list", "--root", repo.root, "--json"]).json().entries.map((e: { path: string }) => e.path)).toEqual([".gitignore", "a.txt"]);
  });

  test("one the system's git configuration trusts (safe.directory in /etc/gitconfig, as images have it) is served as git serves it", async () => {
    // a name git quotes in its advice ('...'\''s repo ...')
    await using repo = await tmpRepo({ name: "ws-other's repo-" });
    repo.write("a.txt", "a\n");
    repo.write(".gitignore", "build/\n");
    repo.write("build/out.bin", "built\n");
    repo.commit();
    repo.write("a.txt", "changed\n");
    openToReaders(repo.root);
    await using etc = tmpDir("ws-etc-");
    const systemConfig = join(etc.path, "gitconfig");
    writeFileSync(systemConfig, `[safe]\n\tdirectory = ${repo.root}\n`);
    chmodSync(etc.path, 0o755);
    chmodSync(systemConfig, 0o644);
    // the system configuration replaced in a mount namespace of this command alone; .mcp left to the user
    const mcp = join(repo.root, ".mcp");
    mkdirSync(mcp);
    Bun.spawnSync(["chown", "65534:65534", mcp]);
    const inNamespace = (args: string[]) => {
      const script = `mount --bind "$0" /etc/gitconfig && exec "$@"`;
      const r = Bun.spawnSync(["unshare", "-m", "sh", "-c", script, systemConfig, ...unprivileged([requireBinary(), ...args])], {
        env: { ...process.env, HOME: "/tmp", NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
      return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    };
    const changes = inNamespace(["snapshot", "changes", "HEAD", "worktree", "--root", repo.root, "--json"]);
    expect(changes.stderr).toBe("");
    expect(changes.code).toBe(0);
    expect(JSON.parse(changes.stdout).changes.map((c: { path: string; status: string }) => [c.path, c.status])).toEqual([["a.txt", "modified"]]);
    const listed = inNamespace(["snapshot", "list", "--root", repo.root, "--json"]);
    expect(JSON.parse(listed.stdout).entries.map((e: { path: string }) => e.path)).toEqual([".gitignore", "a.txt"]); // its ignore rules apply
  });

  test("regression: a state directory this user may not write is an error naming it, never readable files called unreadable", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    repo.write("c.txt", "c\n");
    repo.write("sub/b.txt", "b\n");
    expect(cli(["snapshot", "create", "--root", repo.root]).code).toBe(0);
    // a store without the blobs directory yet: listing the work tree must write what it hashes
    rmSync(join(repo.root, ".mcp", "blobs"), { recursive: true, force: true });
    rmSync(join(repo.root, ".mcp", "cache"), { recursive: true, force: true });
    openToReaders(repo.root);
    for (const args of [["snapshot", "list"], ["snapshot", "create"]]) {
      const r = cliUnprivileged([...args, "--root", repo.root, "--json"]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      const err = JSON.parse(r.stdout).error;
      expect(err).toMatchObject({ code: "PERMISSION_DENIED", details: { reason: "state_dir_permission" } });
      expect(err.message).toContain("worksnap's state directory .mcp is not open to this user");
      expect(r.stdout).not.toContain("unreadable");
    }
    // without any .mcp, the same
    rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
    const none = cliUnprivileged(["snapshot", "list", "--root", repo.root, "--json"]);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error.details.reason).toBe("state_dir_permission");
  });
});
