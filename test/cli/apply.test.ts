/**
 * `worksnap apply`: the patch tool from the command line, through the binary.
 * Byte for byte as git applies the same patch, all or nothing, recorded; the
 * detached step after the answer removes what the write replaced and leaves
 * spares that the next write is staged in.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, historyEntries } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";
import { temps } from "../helpers/workspace";
import { POOL_PREFIX } from "../../src/repo/tmp-reserve";

/**
 * Waits until the detached step is done: only pools left in `.mcp/tmp`, and
 * at least one (the test times out otherwise). Between removing what the
 * write replaced and making its spares the step leaves `.mcp/tmp` empty for
 * a moment, which is not done (regression: the wait ended there, 1 run in 3).
 */
async function handOffDone(root: string): Promise<string[]> {
  for (;;) {
    const left = temps(root);
    if (left.length > 0 && left.every((n) => n.startsWith(POOL_PREFIX))) return left;
    await Bun.sleep(10);
  }
}

/** A repository of `n` committed files and a patch (git's own diff) changing each, with the tree git apply makes of it. */
function fixture(repo: TmpRepo, n: number): { patch: string; expected: Record<string, Buffer> } {
  for (let i = 0; i < n; i++) repo.write(`src/d${i % 3}/f${i}.txt`, `line 1\nline 2 of ${i}\nline 3\n`);
  repo.write("crlf.txt", "a\r\nb\r\n");
  repo.commit();
  for (let i = 0; i < n; i++) repo.write(`src/d${i % 3}/f${i}.txt`, `line 1\nline 2 of ${i}, changed\nline 3\n`);
  repo.write("crlf.txt", "a\r\nB\r\n");
  repo.write("added/new.txt", "no final newline");
  repo.git("add", "-A");
  const patch = repo.git("diff", "--cached", "--binary");
  const expected: Record<string, Buffer> = {};
  for (const p of [...Array.from({ length: n }, (_, i) => `src/d${i % 3}/f${i}.txt`), "crlf.txt", "added/new.txt"]) expected[p] = readFileSync(join(repo.root, p));
  repo.git("reset", "-q", "--hard");
  return { patch, expected };
}

describe("worksnap apply", () => {
  test("applies a patch byte for byte as git does, from a file or standard input, and records it", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir();
    const { patch, expected } = fixture(repo, 12);
    const file = join(scratch.path, "change.diff");
    writeFileSync(file, patch);
    const r = cli(["apply", file, "--root", repo.root, "--conv", "c-cli"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("modified crlf.txt\n");
    expect(r.stdout).toContain("created added/new.txt\n");
    expect(r.stdout).toContain("recorded under conversation c-cli\n");
    for (const [p, bytes] of Object.entries(expected)) expect(readFileSync(join(repo.root, p)).equals(bytes)).toBe(true);
    expect(historyEntries(repo.root).filter((e) => e.conversation_id === "c-cli").length).toBe(14);

    repo.git("reset", "-q", "--hard");
    repo.git("clean", "-fdq", "-e", ".mcp");
    const json = cli(["apply", "--root", repo.root, "--json"], { stdin: patch }).json();
    expect([json.applied, json.changed_total]).toEqual([true, 14]);
    expect(json.mcp_conversation_id).toMatch(/^conv_/);
    // --json is the tool's answer, lease and fingerprint included (the text leaves them out: no lease outlives the process)
    expect(json.lease_id).toMatch(/^lease_/);
    expect(json.fingerprint.status_hash).toMatch(/^[0-9a-f]{64}$/);
    for (const [p, bytes] of Object.entries(expected)) expect(readFileSync(join(repo.root, p)).equals(bytes)).toBe(true);
  });

  test("--check says what the patch would change, or its rejects, as git apply --check decides, and writes nothing", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir();
    const { patch, expected } = fixture(repo, 6);
    const file = join(scratch.path, "change.diff");
    writeFileSync(file, patch);
    const before = new Map(Object.keys(expected).filter((p) => p !== "added/new.txt").map((p) => [p, readFileSync(join(repo.root, p)).toString("base64")]));
    const r = cli(["apply", "--check", file, "--root", repo.root]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("would be modified crlf.txt\n");
    expect(r.stdout).toContain("would be created added/new.txt\n");
    expect(r.stdout.endsWith("checked: nothing was written\n")).toBe(true);
    const json = cli(["apply", "--check", file, "--root", repo.root, "--json"]).json();
    expect([json.applied, json.checked, json.changed_total]).toEqual([true, true, 8]);
    expect(json.diff).toContain("+line 2 of 0, changed");
    expect(json.mcp_conversation_id).toBeUndefined();
    // nothing written, nothing recorded, nothing left in .mcp/tmp but spares
    for (const [p, bytes] of before) expect(readFileSync(join(repo.root, p)).toString("base64")).toBe(bytes);
    expect(statSync(join(repo.root, "added"), { throwIfNoEntry: false })).toBeUndefined();
    expect(historyEntries(repo.root)).toEqual([]);
    expect(temps(repo.root).every((n) => n.startsWith(POOL_PREFIX))).toBe(true);
    expect(repo.git("status", "--porcelain")).toBe("");
    // the verdict is git's: a patch git apply --check refuses is refused, exit 1, with the reject
    repo.write("crlf.txt", "a\r\nX\r\n");
    const gitVerdict = Bun.spawnSync(["git", "apply", "--check", file], { cwd: repo.root }).exitCode;
    const refused = cli(["apply", "--check", file, "--root", repo.root]);
    expect([gitVerdict, refused.code]).toEqual([1, 1]);
    expect(refused.stdout).toContain("rejected crlf.txt hunk 0: context_mismatch");
    expect(refused.stdout.endsWith("nothing was written\n")).toBe(true);
    expect(cli(["apply", "--check", "--snapshot", "abcdef12", file, "--root", repo.root]).code).toBe(2);
  });

  test("a patch read from a named FIFO, through a symlink, or of more than 256 KiB (read into memory of its own) applies as from a plain file", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir();
    const { patch: changes, expected } = fixture(repo, 12);
    // and a new file of 10,000 lines: a patch of about 330 KB
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i} of a large new file\n`);
    const patch = `${changes}diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,10000 @@\n${lines.map((l) => `+${l}`).join("")}`;
    expected["big.txt"] = Buffer.from(lines.join(""));
    expect(patch.length).toBeGreaterThan(256 << 10);
    const file = join(scratch.path, "change.diff");
    writeFileSync(file, patch);
    symlinkSync(file, join(scratch.path, "link.diff"));
    Bun.spawnSync(["mkfifo", join(scratch.path, "fifo.diff")]);
    const check = () => {
      for (const [p, bytes] of Object.entries(expected)) expect(readFileSync(join(repo.root, p)).equals(bytes)).toBe(true);
      repo.git("reset", "-q", "--hard");
      repo.git("clean", "-fdq", "-e", ".mcp");
    };
    for (const name of ["change.diff", "link.diff"]) {
      const r = cli(["apply", join(scratch.path, name), "--root", repo.root]);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      check();
    }
    // the writer opens the FIFO and writes once the apply is reading it
    const writer = Bun.spawn(["sh", "-c", `cat "${file}" > "${join(scratch.path, "fifo.diff")}"`]);
    const r = cli(["apply", join(scratch.path, "fifo.diff"), "--root", repo.root]);
    expect([r.code, r.stderr, await writer.exited]).toEqual([0, "", 0]);
    check();
  });

  test("a patch of a file that is not UTF-8 applies byte for byte, from a file or standard input, as git applies it (regression: the patch was decoded as UTF-8, its Latin-1 lines no longer matched)", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir();
    const latin1 = (s: string) => Buffer.from(s, "latin1");
    repo.write("legacy/menu.txt", latin1("caf\xe9\ncr\xe8me br\xfbl\xe9e\nna\xefve\n"));
    repo.commit();
    repo.write("legacy/menu.txt", latin1("caf\xe9 cr\xe8me\ncr\xe8me br\xfbl\xe9e\nna\xefve \xa9\n"));
    const patch = Bun.spawnSync(["git", "diff"], { cwd: repo.root }).stdout;
    const expected = readFileSync(join(repo.root, "legacy/menu.txt"));
    expect(patch.includes(0xe9)).toBe(true); // the patch carries the file's bytes, not UTF-8
    const file = join(scratch.path, "legacy.diff");
    writeFileSync(file, patch);
    for (const run of [() => cli(["apply", file, "--root", repo.root]), () => cli(["apply", "--root", repo.root], { stdin: patch })]) {
      repo.git("checkout", "-q", "--", ".");
      expect(Bun.spawnSync(["git", "apply", "--check", file], { cwd: repo.root }).exitCode).toBe(0);
      const r = run();
      expect([r.code, r.stdout.split("\n")[0], r.stderr]).toEqual([0, "modified legacy/menu.txt", ""]);
      expect(readFileSync(join(repo.root, "legacy/menu.txt")).equals(expected)).toBe(true);
    }
  });

  test("a patch naming a file by a name that is not UTF-8 is refused, not written under another name (regression: it created the name with U+FFFD)", async () => {
    await using repo = await tmpRepo();
    repo.write("base.txt", "x\n");
    repo.commit();
    const patch = ['diff --git "a/caf\\351.txt" "b/caf\\351.txt"', "new file mode 100644", "--- /dev/null", '+++ "b/caf\\351.txt"', "@@ -0,0 +1 @@", "+hello", ""].join("\n");
    const r = cli(["apply", "--root", repo.root], { stdin: patch });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("is not valid UTF-8");
    expect(r.stdout).toEndWith("nothing was written\n");
    expect(readdirSync(repo.root).filter((n) => n !== ".git" && n !== ".mcp")).toEqual(["base.txt"]);
  });

  test("a patch that does not apply writes nothing and exits 1, naming the hunk; a missing patch file is a user error", async () => {
    await using repo = await tmpRepo();
    const { patch } = fixture(repo, 3);
    repo.write("src/d1/f1.txt", "someone else's edit\n");
    const before = readFileSync(join(repo.root, "src/d0/f0.txt"));
    const r = cli(["apply", "-", "--root", repo.root], { stdin: patch });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("rejected src/d1/f1.txt hunk 0: context_mismatch");
    expect(r.stdout).toEndWith("nothing was written\n");
    expect(readFileSync(join(repo.root, "src/d0/f0.txt")).equals(before)).toBe(true);
    expect(temps(repo.root).filter((n) => !n.startsWith(POOL_PREFIX))).toEqual([]);
    const missing = cli(["apply", join(repo.root, "nope.diff"), "--root", repo.root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no patch file");
    expect(cli(["apply", "a", "b", "--root", repo.root]).code).toBe(2);
  });

  test("after it answers, its detached step removes the replaced files and leaves spares; the next apply is staged in them", async () => {
    await using repo = await tmpRepo();
    const { patch } = fixture(repo, 30);
    expect(cli(["apply", "--root", repo.root], { stdin: patch }).code).toBe(0);
    const left = await handOffDone(repo.root);
    expect(left.length).toBe(1);
    const pool = join(repo.root, ".mcp", "tmp", left[0]!);
    const spares = new Map(readdirSync(pool).map((n) => [statSync(join(pool, n)).ino, n]));
    expect(spares.size).toBeGreaterThanOrEqual(32);
    for (const n of spares.values()) expect([statSync(join(pool, n)).size, statSync(join(pool, n)).mode & 0o7777]).toEqual([0, 0o644]);
    // nothing but the patch's own new file shows in the tree
    expect(repo.git("status", "--porcelain", "--untracked-files=all").split("\n").filter((l) => l.startsWith("??"))).toEqual(["?? added/new.txt"]);

    repo.git("reset", "-q", "--hard");
    repo.git("clean", "-fdq", "-e", ".mcp");
    expect(cli(["apply", "--root", repo.root], { stdin: patch }).code).toBe(0);
    expect(spares.has(statSync(join(repo.root, "src/d0/f0.txt")).ino)).toBe(true);
    await handOffDone(repo.root);
  });
});
