/**
 * Binary files through the compiled binary: a patch `git diff --binary` made applies through
 * workspace_apply_patch and `worksnap apply`, recorded, and its reject restores the bytes; snapshot_diff
 * with `binary: true` (the CLI's `--binary`) gives a patch that git and worksnap both apply.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, historyEntries, mcpSession } from "../helpers/binary";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

function noise(seed: number, n: number): Uint8Array {
  let x = seed;
  return Uint8Array.from({ length: n }, () => ((x = (x * 1103515245 + 12345) >>> 0), x >>> 24));
}

/** A repository at commit A (the `before` tree) that also holds commit B (`after`), checked out at A. */
async function twoCommits(): Promise<{ repo: TmpRepo; a: string; b: string }> {
  const repo = await tmpRepo();
  const big = noise(1, 200_000);
  repo.write("img/logo.png", Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, ...noise(2, 500)]));
  repo.write("big.bin", big);
  repo.write("t.txt", "one\n");
  const a = repo.commit("a");
  const changed = Uint8Array.from(big);
  changed.set(new TextEncoder().encode("a few new bytes"), 70_000);
  repo.write("big.bin", changed);
  repo.write("img/logo.png", Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 1, 1, ...noise(3, 700)]));
  repo.write("new.bin", Uint8Array.from([0, 1, 2, 3, 255]));
  repo.write("t.txt", "two\n");
  const b = repo.commit("b");
  repo.git("checkout", "-q", a);
  return { repo, a, b };
}

/** The paths whose bytes in the work tree are not commit `rev`'s (missing, different, or not in it); "" when none. */
function differsFrom(repo: TmpRepo, rev: string): string {
  const want = repo.git("ls-tree", "-r", "--name-only", rev).split("\n").filter(Boolean);
  const have = repo.git("ls-files", "--cached", "--others", "--exclude", "/.mcp/").split("\n").filter(Boolean);
  const off = [...new Set([...want, ...have])].filter((p) => {
    if (!want.includes(p) || !existsSync(join(repo.root, p))) return true;
    const blob = Bun.spawnSync(["git", "show", `${rev}:${p}`], { cwd: repo.root }).stdout;
    return !Buffer.from(blob).equals(readFileSync(join(repo.root, p)));
  });
  return off.sort().join(" ");
}

describe("binary patches through the server and the CLI", () => {
  test("git diff --binary applies through workspace_apply_patch, recorded; rejecting the edits restores every byte", async () => {
    const { repo, a, b } = await twoCommits();
    await using _ = repo;
    const patch = repo.git("diff", "--binary", a, b);
    expect(patch).toContain("GIT binary patch");
    await using s = await mcpSession(repo.root);
    const r = await s.call("workspace_apply_patch", { patch });
    expect(r.changed.map((c: any) => [c.path, c.status])).toEqual([["big.bin", "modified"], ["img/logo.png", "modified"], ["new.bin", "created"], ["t.txt", "modified"]]);
    expect(differsFrom(repo, b)).toBe("");
    const ids = historyEntries(repo.root).map((e) => e.edit_id);
    expect(ids.length).toBe(4);
    const undo = cli(["history", "reject", ...ids, "--root", repo.root]);
    expect(undo.stderr).toBe("");
    expect(differsFrom(repo, a)).toBe("");
  });

  test("snapshot_diff with binary: true gives a patch git and worksnap apply; without it, a reject says how to get one", async () => {
    const { repo, a, b } = await twoCommits();
    await using _ = repo;
    await using s = await mcpSession(repo.root);
    const d = await s.call("snapshot_diff", { from: a, to: b, binary: true });
    expect(d.diff.match(/GIT binary patch/g)?.length).toBe(3);
    // git applies it
    const file = repo.beside(".diff");
    writeFileSync(file, d.diff);
    repo.git("apply", file);
    expect(differsFrom(repo, b)).toBe("");
    repo.git("checkout", "-q", "--", ".");
    repo.git("clean", "-qfd", "-e", ".mcp");
    // and so does worksnap
    await s.call("workspace_apply_patch", { patch: d.diff });
    expect(differsFrom(repo, b)).toBe("");
    repo.git("checkout", "-q", "--", ".");
    repo.git("clean", "-qfd", "-e", ".mcp");
    const plain = await s.call("snapshot_diff", { from: a, to: b });
    expect(plain.diff).toContain("Binary files a/big.bin and b/big.bin differ");
    const e = await s.call("workspace_apply_patch", { patch: plain.diff });
    expect(e.applied).toBe(false);
    expect(e.rejects.map((r: any) => [r.path, r.hunks[0].reason])).toEqual([
      ["big.bin", "binary_patch_unsupported"],
      ["img/logo.png", "binary_patch_unsupported"],
      ["new.bin", "binary_patch_unsupported"],
    ]);
    expect(e.rejects[0].hunks[0].message).toContain("--binary");
    expect(differsFrom(repo, a)).toBe("");
  });

  test("in a SHA-256 repository the binary patch carries 64-digit ids, and git applies it", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.git("init", "-q", "--object-format=sha256", "-b", "main");
    repo.write("img.bin", Uint8Array.from([0, 1, 2, 3]));
    const a = repo.commit("a");
    repo.write("img.bin", Uint8Array.from([0, 9, 9, 3, 4]));
    const b = repo.commit("b");
    repo.git("checkout", "-q", a);
    const d = cli(["snapshot", "diff", a, b, "--binary", "--root", repo.root]);
    expect(d.stderr).toBe("");
    expect(d.stdout).toMatch(/^index [0-9a-f]{64}\.\.[0-9a-f]{64} 100644$/m);
    const file = repo.beside(".diff");
    writeFileSync(file, d.stdout);
    repo.git("apply", file);
    expect(differsFrom(repo, b)).toBe("");
    repo.git("checkout", "-q", "--", ".");
    const r = cli(["apply", file, "--root", repo.root]);
    expect(r.stderr).toBe("");
    expect(differsFrom(repo, b)).toBe("");
  });

  test("the CLI: snapshot diff --binary piped to git apply, and worksnap apply of git's binary patch from standard input", async () => {
    const { repo, a, b } = await twoCommits();
    await using _ = repo;
    const d = cli(["snapshot", "diff", a, b, "--binary", "--root", repo.root]);
    expect(d.stderr).toBe("");
    const file = join(repo.beside(".diff"));
    writeFileSync(file, d.stdout);
    repo.git("apply", file);
    expect(differsFrom(repo, b)).toBe("");
    repo.git("checkout", "-q", "--", ".");
    repo.git("clean", "-qfd", "-e", ".mcp");
    const r = cli(["apply", "-", "--root", repo.root], { stdin: repo.git("diff", "--binary", a, b) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(differsFrom(repo, b)).toBe("");
  });
});
