/**
 * Writes on a file system that folds case (macOS's default; here a real exFAT mount): `Foo.txt` and
 * `foo.txt` name one file. A write through another spelling keeps the name the directory holds, a
 * session's pins find the file whatever spelling read or writes it, a move or a patch that changes
 * only the case of a name renames the file (and never removes it), and a change set naming one file
 * under two spellings is refused whole. Each scenario is driven through the compiled binary as an
 * agent (the MCP SDK's client) or a person (the CLI) would, and checked against the disk and git.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BINARY, cli, historyEntries, mcpSession } from "../../helpers/binary";
import { caseFoldingFsForTests } from "../../helpers/case-folding-fs";
import { runGit } from "../../helpers/tmp-repo";
import { nativeModule } from "../../../src/repo/native";

const fs = caseFoldingFsForTests();

/** A committed repository on the mount holding `files`. */
function repoOn(name: string, files: Record<string, string>): string {
  expect(fs.failure).toBe("");
  expect(fs.mounted).toBe(true);
  const root = fs.dir(name);
  runGit(root, ["init", "-q", "-b", "main"]);
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
  runGit(root, ["add", "-A"]);
  runGit(root, ["commit", "-qm", "start"]);
  return root;
}

const names = (dir: string) => readdirSync(dir).filter((n) => n !== ".git" && n !== ".mcp").sort();
const status = (root: string) => runGit(root, ["status", "--porcelain"]);

describe.skipIf(!fs.canMount)("a file system that folds case", () => {
  test("git sees it as one (core.ignoreCase), and the repository is served as one", () => {
    const root = repoOn("probe", { "Foo.txt": "x\n" });
    expect(runGit(root, ["config", "--bool", "core.ignoreCase"]).trim()).toBe("true");
    expect(readFileSync(join(root, "FOO.TXT"), "utf8")).toBe("x\n");
  });

  test("a write through another spelling keeps the name the directory holds, and says which file it wrote", async () => {
    const root = repoOn("spelling", { "Foo.txt": "one\n", "README.md": "readme\n" });
    await using s = await mcpSession(root);
    const w = await s.call("workspace_write_file", { path: "foo.txt", content: "two\n" });
    expect(w.changed).toEqual([expect.objectContaining({ path: "Foo.txt", status: "modified", requested_path: "foo.txt" })]);
    expect(names(root)).toEqual(["Foo.txt", "README.md"]);
    expect(readFileSync(join(root, "Foo.txt"), "utf8")).toBe("two\n");
    // git sees a modified Foo.txt, nothing renamed or new
    expect(status(root)).toBe(" M Foo.txt\n");
    // create_only through another spelling of an existing file is refused, naming the file it would replace
    const e = await s.callError("workspace_write_file", { path: "readme.MD", content: "x\n", create_only: true });
    expect(e.code).toBe("REPO_CHANGED");
    expect(e.details.path).toBe("README.md");
    // a new file in a directory named in another spelling goes into that directory
    runGit(root, ["commit", "-qam", "two"]);
    writeFileSync(join(root, "README.md"), "readme\n");
    await s.call("workspace_write_file", { path: "Docs/a.md", content: "a\n" });
    await s.call("workspace_write_file", { path: "docs/B.md", content: "b\n" });
    expect(names(root)).toEqual(["Docs", "Foo.txt", "README.md"]);
    expect(names(join(root, "Docs"))).toEqual(["B.md", "a.md"]);
    const paths = historyEntries(root).map((e) => e.file_path);
    expect(paths).toEqual(["Foo.txt", "Docs/a.md", "Docs/B.md"]);
  });

  test("a stale read is never blessed by writing the file under another spelling", async () => {
    const root = repoOn("pins", { "Foo.txt": "one\ntwo\n" });
    let n = 0;
    for (const [read, tool, args] of [
      ["Foo.txt", "workspace_write_file", { path: "foo.txt", content: "mine\n" }],
      ["Foo.txt", "workspace_write_file", { path: "FOO.TXT", content: "mine\n" }],
      ["foo.txt", "workspace_write_file", { path: "Foo.txt", content: "mine\n" }],
      ["FOO.txt", "workspace_delete", { path: "foo.TXT" }],
      ["Foo.txt", "workspace_move", { from: "fOO.txt", to: "bar.txt" }],
    ] as const) {
      await using s = await mcpSession(root);
      await s.call("snapshot_file", { path: read });
      const changed = `changed by someone ${++n}\n`;
      writeFileSync(join(root, "Foo.txt"), changed);
      const e = await s.callError(tool, args);
      expect(e.code).toBe("REPO_CHANGED");
      expect(e.details.reason).toBe("stale_read");
      expect(e.details.files[0].path).toBe("Foo.txt");
      expect(readFileSync(join(root, "Foo.txt"), "utf8")).toBe(changed);
    }
    expect(names(root)).toEqual(["Foo.txt"]);
    expect(historyEntries(root)).toEqual([]);
  });

  test("a move to another spelling of the name renames the file, overwrite or not, and its reject names it back", async () => {
    const root = repoOn("move", { "Foo.txt": "one\n", "Bar.txt": "bar\n", "src/a.ts": "a\n" });
    await using s = await mcpSession(root);
    const m = await s.call("workspace_move", { from: "Foo.txt", to: "FOO.txt" });
    expect(m.changed).toEqual([expect.objectContaining({ path: "FOO.txt", status: "renamed", from: "Foo.txt" })]);
    expect(names(root)).toEqual(["Bar.txt", "FOO.txt", "src"]);
    expect(readFileSync(join(root, "FOO.txt"), "utf8")).toBe("one\n");
    // overwrite: true is no reason to remove the one file
    await s.call("workspace_move", { from: "bar.txt", to: "bAR.txt", overwrite: true });
    expect(names(root)).toEqual(["FOO.txt", "bAR.txt", "src"]);
    expect(readFileSync(join(root, "bAR.txt"), "utf8")).toBe("bar\n");
    // already so named: nothing to do
    expect((await s.callError("workspace_move", { from: "foo.txt", to: "FOO.txt" })).message).toContain("onto itself");
    // a directory is not renamed by case here; said so, nothing moved
    const d = await s.callError("workspace_move", { from: "src", to: "Src" });
    expect(d.code).toBe("INVALID_ARGUMENT");
    expect(d.message).toContain("ignore case");
    expect(names(root)).toEqual(["FOO.txt", "bAR.txt", "src"]);
    // the history holds both renames; rejecting them names the files back, content whole
    const edits = historyEntries(root);
    expect(edits.map((e) => e.file_path)).toEqual(["FOO.txt", "bAR.txt"]);
    const r = cli(["history", "reject", ...edits.map((e) => e.edit_id), "--root", root]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(names(root)).toEqual(["Bar.txt", "Foo.txt", "src"]);
    expect(readFileSync(join(root, "Foo.txt"), "utf8")).toBe("one\n");
    expect(readFileSync(join(root, "Bar.txt"), "utf8")).toBe("bar\n");
    expect(status(root)).toBe("");
  });

  test("a patch that renames a file to another spelling of its name renames it, with or without edits", async () => {
    const root = repoOn("patch", { "Bar.txt": "bar\n", "Baz.txt": "one\ntwo\n" });
    await using s = await mcpSession(root);
    const pure = "diff --git a/Bar.txt b/BAR.txt\nsimilarity index 100%\nrename from Bar.txt\nrename to BAR.txt\n";
    const a = await s.call("workspace_apply_patch", { patch: pure });
    expect(a.applied).toBe(true);
    expect(a.changed).toEqual([expect.objectContaining({ path: "BAR.txt", status: "renamed", from: "Bar.txt" })]);
    const edited =
      "diff --git a/Baz.txt b/baz.txt\nsimilarity index 50%\nrename from Baz.txt\nrename to baz.txt\n--- a/Baz.txt\n+++ b/baz.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
    const b = await s.call("workspace_apply_patch", { patch: edited });
    expect(b.applied).toBe(true);
    expect(names(root)).toEqual(["BAR.txt", "baz.txt"]);
    expect(readFileSync(join(root, "BAR.txt"), "utf8")).toBe("bar\n");
    expect(readFileSync(join(root, "baz.txt"), "utf8")).toBe("one\nTWO\n");
    // a patch that edits a file through another spelling edits it in place
    const c = await s.call("workspace_apply_patch", { patch: "--- a/BAZ.TXT\n+++ b/BAZ.TXT\n@@ -1,2 +1,2 @@\n-one\n+ONE\n TWO\n" });
    expect(c.changed).toEqual([expect.objectContaining({ path: "baz.txt", status: "modified" })]);
    expect(names(root)).toEqual(["BAR.txt", "baz.txt"]);
    expect(readFileSync(join(root, "baz.txt"), "utf8")).toBe("ONE\nTWO\n");
    // a delete and a create of two spellings (a diff without renames) name one file: refused, and told how
    const split = "--- a/BAR.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bar\n--- /dev/null\n+++ b/Bar.txt\n@@ -0,0 +1 @@\n+bar\n";
    const sp = await s.call("workspace_apply_patch", { patch: split });
    expect(sp.applied).toBe(false);
    expect(sp.rejects[0].hunks[0].reason).toBe("file_exists");
    expect(sp.rejects[0].hunks[0].message).toContain("rename from/rename to");
    expect(names(root)).toEqual(["BAR.txt", "baz.txt"]);
    // and a rename onto another existing file is still refused
    writeFileSync(join(root, "Other.txt"), "other\n");
    const d = await s.call("workspace_apply_patch", { patch: "diff --git a/BAR.txt b/other.txt\nsimilarity index 100%\nrename from BAR.txt\nrename to other.txt\n" });
    expect(d.applied).toBe(false);
    expect(d.rejects[0].hunks[0].reason).toBe("file_exists");
    expect(readFileSync(join(root, "Other.txt"), "utf8")).toBe("other\n");
    // undone, each file is back under its name with its bytes
    const edits = historyEntries(root);
    expect(edits.map((e) => e.file_path)).toEqual(["BAR.txt", "baz.txt", "baz.txt"]);
    const r = cli(["history", "reject", ...edits.map((e) => e.edit_id), "--root", root]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(names(root)).toEqual(["Bar.txt", "Baz.txt", "Other.txt"]);
    expect(readFileSync(join(root, "Baz.txt"), "utf8")).toBe("one\ntwo\n");
  });

  test("a new directory named in two spellings in one change set is one directory, under the first", async () => {
    const root = repoOn("newdir", { "keep.txt": "k\n" });
    await using s = await mcpSession(root);
    const patch =
      "diff --git a/New/a.txt b/New/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/New/a.txt\n@@ -0,0 +1 @@\n+a\n" +
      "diff --git a/NEW/sub/b.txt b/NEW/sub/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NEW/sub/b.txt\n@@ -0,0 +1 @@\n+b\n";
    const a = await s.call("workspace_apply_patch", { patch });
    expect(a.changed.map((c: { path: string; requested_path?: string }) => [c.path, c.requested_path])).toEqual([
      ["New/a.txt", undefined],
      ["New/sub/b.txt", "NEW/sub/b.txt"],
    ]);
    expect(names(root)).toEqual(["New", "keep.txt"]);
    expect(names(join(root, "New"))).toEqual(["a.txt", "sub"]);
    expect(historyEntries(root).map((e) => e.file_path).sort()).toEqual(["New/a.txt", "New/sub/b.txt"]);
    // the same through write_file, which follows links: the directory as the tree holds it now
    await s.call("workspace_write_file", { path: "NEW/c.txt", content: "c\n" });
    expect(names(join(root, "New"))).toEqual(["a.txt", "c.txt", "sub"]);
    const r = cli(["history", "reject", ...historyEntries(root).map((e) => e.edit_id), "--root", root]);
    expect(r.stderr).toBe("");
    expect(names(root)).toEqual(["keep.txt"]);
  });

  test("two conversations whose ids differ only in case would share their history's files: the second is refused", async () => {
    const root = repoOn("conv", { "a.txt": "a\n" });
    await using s = await mcpSession(root);
    await s.call("workspace_write_file", { path: "a.txt", content: "one\n", mcp_conversation_id: "Fix-Login" });
    const e = await s.callError("workspace_write_file", { path: "a.txt", content: "two\n", mcp_conversation_id: "fix-login" });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.details.conversation_id).toBe("Fix-Login");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
    // its own id goes on; so does the CLI's, and it refuses the other spelling too
    await s.call("workspace_write_file", { path: "a.txt", content: "three\n", mcp_conversation_id: "Fix-Login" });
    const r = cli(["apply", "-", "--conv", "FIX-LOGIN", "--root", root], { stdin: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-three\n+four\n" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("only in case");
    expect(historyEntries(root).map((x) => x.conversation_id)).toEqual(["Fix-Login", "Fix-Login"]);
  });

  test.skipIf(nativeModule() === null)("regression (the old bytes left under the new name): killed between a case-only rename and its new bytes, the next command writes them and records the edit", async () => {
    const root = repoOn("between", { "Name.txt": "one\ntwo\n" });
    const patchFile = join(fs.path, "between.patch");
    writeFileSync(patchFile, "diff --git a/Name.txt b/NAME.txt\nsimilarity index 50%\nrename from Name.txt\nrename to NAME.txt\n--- a/Name.txt\n+++ b/NAME.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    // the write-crash worker dies after the publish's first file operation: the rename to the new spelling
    const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "..", "fixtures", "write-crash-worker.ts"), root, patchFile, "renamed", "1"], { stdout: "pipe", stderr: "pipe" });
    expect(r.signalCode ?? `exit ${r.exitCode}: ${r.stderr.toString()}`).toBe("SIGKILL");
    expect(names(root)).toEqual(["NAME.txt"]);
    expect(readFileSync(join(root, "NAME.txt"), "utf8")).toBe("one\ntwo\n");
    const after = cli(["history", "status", "--root", root]);
    expect({ code: after.code, error: after.stderr.includes("worksnap:") ? after.stderr : "" }).toEqual({ code: 0, error: "" });
    expect(names(root)).toEqual(["NAME.txt"]);
    expect(readFileSync(join(root, "NAME.txt"), "utf8")).toBe("one\nTWO\n");
    const pending = historyEntries(root).filter((e) => e.status === "pending");
    expect(pending.map((e) => e.file_path)).toEqual(["NAME.txt"]);
    // and its undo gives back the old name and bytes
    const undo = cli(["history", "reject", pending[0]!.edit_id, "--root", root]);
    expect({ code: undo.code, error: undo.stderr.includes("worksnap:") ? undo.stderr : "" }).toEqual({ code: 0, error: "" });
    expect(names(root)).toEqual(["Name.txt"]);
    expect(readFileSync(join(root, "Name.txt"), "utf8")).toBe("one\ntwo\n");
  });

  test("kill -9 at any moment of a rename that changes only case: the file is there, old name and bytes or new, and the history says which", async () => {
    const root = repoOn("crash", { "Name.txt": "one\ntwo\n" });
    const patchFile = join(fs.path, "crash-rename.patch");
    writeFileSync(patchFile, "diff --git a/Name.txt b/NAME.txt\nsimilarity index 50%\nrename from Name.txt\nrename to NAME.txt\n--- a/Name.txt\n+++ b/NAME.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    for (let round = 0; round < 16; round++) {
      const child = Bun.spawn([BINARY, "apply", patchFile, "--root", root], { stdout: "ignore", stderr: "ignore", env: { ...process.env, NO_COLOR: "1" } });
      await Bun.sleep(10 + ((round * 61) % 400));
      child.kill(9);
      await child.exited;
      // the next command takes the lock and completes or undoes what the killed one left
      // (it may say on stderr that it completed an interrupted write; an error is what must not be there)
      const after = cli(["history", "status", "--root", root]);
      expect({ code: after.code, error: after.stderr.includes("worksnap:") ? after.stderr : "" }).toEqual({ code: 0, error: "" });
      const held = names(root);
      const state = `${held.join(",")}=${readFileSync(join(root, held[0]!), "utf8")}`;
      expect(["Name.txt=one\ntwo\n", "NAME.txt=one\nTWO\n"]).toContain(state);
      const pending = historyEntries(root).filter((e) => e.status === "pending");
      if (state.startsWith("NAME")) {
        // recorded, and its undo restores the old name and bytes
        expect(pending.length).toBe(1);
        const undo = cli(["history", "reject", pending[0]!.edit_id, "--root", root]);
        expect({ code: undo.code, error: undo.stderr.includes("worksnap:") ? undo.stderr : "" }).toEqual({ code: 0, error: "" });
      } else expect(pending).toEqual([]);
      expect(names(root)).toEqual(["Name.txt"]);
      expect(readFileSync(join(root, "Name.txt"), "utf8")).toBe("one\ntwo\n");
      expect(status(root)).toBe("");
    }
  }, 120_000);

  test("a change set that names one file under two spellings is refused whole", async () => {
    const root = repoOn("twice", { "keep.txt": "k\n" });
    await using s = await mcpSession(root);
    const both =
      "diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+lower\n" +
      "diff --git a/X.txt b/X.txt\nnew file mode 100644\n--- /dev/null\n+++ b/X.txt\n@@ -0,0 +1 @@\n+upper\n";
    const e = await s.callError("workspace_apply_patch", { patch: both });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("X.txt");
    expect(e.message).toContain("x.txt");
    expect(names(root)).toEqual(["keep.txt"]);
    expect(historyEntries(root)).toEqual([]);
    // the CLI's apply the same
    const patchFile = join(fs.path, "both.patch");
    writeFileSync(patchFile, both);
    const r = cli(["apply", patchFile, "--root", root]);
    expect(r.code).toBe(1);
    expect(names(root)).toEqual(["keep.txt"]);
  });
});
