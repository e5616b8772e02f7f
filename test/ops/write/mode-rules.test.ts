/**
 * Writes under git's rules for modes (repo/mode-rules.ts), as on FAT, exFAT and Windows drives under WSL:
 * - where git does not trust the executable bit (`core.fileMode false`: every file may read as executable, or
 *   none), the write path takes a file's mode as git does, from the index for a tracked file and 100644 for a
 *   new one, so answers, patches and the edit history speak of the modes git sees, and a file's bits on disk
 *   are left as they are;
 * - where git makes no symlinks (`core.symlinks false`), a symlink is written as a file holding its text, as
 *   `git apply` writes it.
 * Driven through the compiled binary (the MCP SDK's client, and the CLI as a second process), on the disk of the
 * tests and on a real exFAT mount.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cli, historyEntries, mcpSession } from "../../helpers/binary";
import { caseFoldingFsForTests } from "../../helpers/case-folding-fs";
import { runGit, tmpRepo } from "../../helpers/tmp-repo";

const exfat = caseFoldingFsForTests();

const indexLine = (from: string, to: string) =>
  `diff --git a/${from} b/${to}\nindex 0000000..1111111 100644\n--- a/${from}\n+++ b/${to}\n`;

describe("a repository where git does not trust the executable bit", () => {
  test("regression: every patch warned of a mode the file does not have, and answers called every file executable", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    repo.write("run.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    repo.git("config", "core.fileMode", "false");
    // the disk says the opposite of the index for both, as such a file system may
    chmodSync(join(repo.root, "a.txt"), 0o777);
    chmodSync(join(repo.root, "run.sh"), 0o644);
    await using s = await mcpSession(repo.root);
    const p = await s.call("workspace_apply_patch", { patch: `${indexLine("a.txt", "a.txt")}@@ -1 +1 @@\n-one\n+two\n` });
    expect(p.applied).toBe(true);
    expect(p.warnings).toEqual([]);
    expect(p.changed).toEqual([{ path: "a.txt", status: "modified", blob: expect.any(String) }]);
    expect(p.diff).not.toContain("mode");
    const w = await s.call("workspace_write_file", { path: "run.sh", content: "#!/bin/sh\necho hi\n" });
    expect(w.changed).toEqual([expect.objectContaining({ path: "run.sh", status: "modified", mode: "100755" })]);
    const n = await s.call("workspace_write_file", { path: "new.txt", content: "new\n" });
    expect(n.changed[0].mode).toBeUndefined();
    // the bits on disk are the file's own: a write changes content, not what git does not look at
    expect(statSync(join(repo.root, "a.txt")).mode & 0o777).toBe(0o777);
    expect(statSync(join(repo.root, "run.sh")).mode & 0o777).toBe(0o644);
    expect(repo.git("status", "--porcelain")).toBe(" M a.txt\n M run.sh\n?? new.txt\n");
    // the history speaks of git's modes: its diffs show no change of mode, and its undo puts the bytes back
    const edits = historyEntries(repo.root);
    const shown = edits.map((e) => cli(["history", "show", e.edit_id, "--root", repo.root]).stdout).join("");
    expect(shown).not.toMatch(/old mode|new mode|100755 =>|=> 100755/);
    expect(shown).toContain("new file mode 100644");
    const r = cli(["history", "reject", ...edits.map((e) => e.edit_id), "--root", repo.root]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("a second process takes the rule as the first found it, and again once the setting changes", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    repo.commit();
    repo.git("config", "core.fileMode", "false");
    chmodSync(join(repo.root, "a.txt"), 0o755);
    const patch = (from: string, to: string) => `${indexLine("a.txt", "a.txt")}@@ -1 +1 @@\n-${from}\n+${to}\n`;
    for (const [from, to] of [["one", "two"], ["two", "three"]]) {
      const r = cli(["apply", "-", "--json", "--root", repo.root], { stdin: patch(from!, to!) });
      expect(r.code).toBe(0);
      expect(r.json().warnings).toEqual([]);
      expect(r.json().changed[0].mode).toBeUndefined();
    }
    // trusted again: the bit on disk is the mode (git status now shows the change of mode too)
    repo.git("config", "core.fileMode", "true");
    const r = cli(["apply", "-", "--json", "--root", repo.root], { stdin: patch("three", "four") });
    expect(r.code).toBe(0);
    expect(r.json().warnings).toEqual(["a.txt: the patch expects mode 100644 but the file has mode 100755"]);
    expect(r.json().changed[0].mode).toBe("100755");
    expect(repo.git("diff", "--summary")).toContain("mode change 100644 => 100755 a.txt");
  });
});

describe.skipIf(!exfat.canMount)("on an exFAT drive (every file reads as executable)", () => {
  test("modes are git's: a patch and a write keep them, a script stays executable, a new file is not", async () => {
    expect(exfat.failure).toBe("");
    const root = exfat.dir("exec");
    runGit(root, ["init", "-q", "-b", "main"]);
    writeFileSync(join(root, "a.txt"), "one\n");
    writeFileSync(join(root, "Run.sh"), "#!/bin/sh\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["update-index", "--chmod=+x", "Run.sh"]);
    runGit(root, ["commit", "-qm", "start"]);
    expect(runGit(root, ["config", "--bool", "core.fileMode"]).trim()).toBe("false");
    expect(statSync(join(root, "a.txt")).mode & 0o111).not.toBe(0);
    await using s = await mcpSession(root);
    const p = await s.call("workspace_apply_patch", { patch: `${indexLine("a.txt", "a.txt")}@@ -1 +1 @@\n-one\n+two\n` });
    expect(p.warnings).toEqual([]);
    expect(p.changed[0].mode).toBeUndefined();
    // through another spelling of the name, too (the index spells it Run.sh)
    const w = await s.call("workspace_write_file", { path: "run.SH", content: "#!/bin/sh\necho hi\n" });
    expect(w.changed).toEqual([expect.objectContaining({ path: "Run.sh", mode: "100755" })]);
    expect((await s.call("workspace_write_file", { path: "new.txt", content: "n\n" })).changed[0].mode).toBeUndefined();
    expect(readFileSync(join(root, "Run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(runGit(root, ["status", "--porcelain"])).toBe(" M Run.sh\n M a.txt\n?? new.txt\n");
    const changes = await s.call("snapshot_changes", { from: "HEAD", to: "worktree" });
    expect(changes.counts.mode_changed).toBe(0);
  });
});

describe.skipIf(!exfat.canMount)("on a drive without symlinks", () => {
  test("regression: a patch creating a symlink failed with INTERNAL; it is a file holding the link's text, as git apply writes it", async () => {
    expect(exfat.failure).toBe("");
    const root = exfat.dir("links");
    runGit(root, ["init", "-q", "-b", "main"]);
    writeFileSync(join(root, "a.txt"), "a\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "start"]);
    expect(runGit(root, ["config", "--bool", "core.symlinks"]).trim()).toBe("false");
    const link = "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n";
    await using s = await mcpSession(root);
    const p = await s.call("workspace_apply_patch", { patch: link });
    expect(p.applied).toBe(true);
    expect(readFileSync(join(root, "link"), "utf8")).toBe("a.txt");
    // git's own apply writes the same
    const theirs = exfat.dir("links-git");
    runGit(theirs, ["init", "-q", "-b", "main"]);
    const patchFile = join(theirs, "..", "link.patch");
    writeFileSync(patchFile, link);
    runGit(theirs, ["apply", patchFile]);
    expect(readFileSync(join(theirs, "link"), "utf8")).toBe("a.txt");
    // and its undo removes it
    expect(cli(["history", "reject", ...historyEntries(root).map((e) => e.edit_id), "--root", root]).code).toBe(0);
    expect(runGit(root, ["status", "--porcelain"])).toBe("");
    // where git is told this drive makes symlinks, the refusal says what the drive lacks, and nothing is written
    runGit(root, ["config", "core.symlinks", "true"]);
    const e = await s.callError("workspace_apply_patch", { patch: link });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("cannot hold symbolic links");
    expect(runGit(root, ["status", "--porcelain"])).toBe("");
  });
});

describe.skipIf(!exfat.canMount)("a directory outside git on an exFAT drive", () => {
  test("regression: every file read as executable (a snapshot all 100755, unlike the same tree elsewhere), and accepting an edit rewrote its file", async () => {
    expect(exfat.failure).toBe("");
    const files = { "a.txt": "a\n", "src/main.ts": "export {};\n" };
    const root = exfat.dir("plain");
    await using elsewhere = await tmpRepo({ git: false });
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), c);
      elsewhere.write(p, c);
    }
    expect(statSync(join(root, "a.txt")).mode & 0o111).not.toBe(0);
    // the same tree, the same files and modes: the drive keeps no executable bit, so no file is executable
    const manifest = (dir: string) => {
      const id = cli(["snapshot", "create", "--root", dir]).stdout.trim();
      return cli(["snapshot", "list", "--recursive", "--snapshot", id, "--json", "--root", dir]).json().entries;
    };
    const here = manifest(root);
    expect(here.map((e: { path: string }) => e.path)).toEqual(["a.txt", "src", "src/main.ts"]);
    expect(here).toEqual(manifest(elsewhere.root));
    await using s = await mcpSession(root);
    const w = await s.call("workspace_write_file", { path: "new.txt", content: "n\n" });
    expect(w.changed[0].mode).toBeUndefined();
    const e = await s.call("workspace_write_file", { path: "a.txt", content: "a2\n" });
    expect(e.changed[0].mode).toBeUndefined();
    // accepting changes statuses only: the files are as the history says
    const accepted = cli(["history", "accept", ...historyEntries(root).map((x) => x.edit_id), "--json", "--root", root]);
    expect(accepted.code).toBe(0);
    expect(accepted.json().files).toEqual([]);
    // a symlink is a file holding its text, as git writes it where it makes none
    const link = "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n";
    expect((await s.call("workspace_apply_patch", { patch: link })).applied).toBe(true);
    expect(readFileSync(join(root, "link"), "utf8")).toBe("a.txt");
  });
});
