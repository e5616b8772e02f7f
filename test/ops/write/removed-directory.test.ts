/**
 * A write that empties a directory removes it (as git does), and the directories it changed are flushed after.
 * Some file systems fail an fstat or fsync of a directory already removed: FUSE ones, as exFAT and NTFS drives are
 * mounted on Linux, and sshfs. Here on a real exFAT mount through exfat-fuse.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, historyEntries, mcpSession } from "../../helpers/binary";
import { caseFoldingFsForTests } from "../../helpers/case-folding-fs";
import { runGit } from "../../helpers/tmp-repo";

const fuse = caseFoldingFsForTests();

describe.skipIf(!fuse.canMount)("a write that removes a directory, on a FUSE drive", () => {
  test("regression: deleting a directory's last file, or rejecting the files an agent made in new directories, failed (NOT_FOUND, fstat)", async () => {
    expect(fuse.failure).toBe("");
    const root = fuse.dir("prune");
    runGit(root, ["init", "-q", "-b", "main"]);
    mkdirSync(join(root, "old/deep"), { recursive: true });
    writeFileSync(join(root, "old/deep/only.txt"), "x\n");
    writeFileSync(join(root, "keep.txt"), "k\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "start"]);
    await using s = await mcpSession(root);
    const d = await s.call("workspace_delete", { path: "old/deep/only.txt" });
    expect(d.changed).toEqual([expect.objectContaining({ path: "old/deep/only.txt", status: "deleted" })]);
    expect(existsSync(join(root, "old"))).toBe(false);
    await s.call("workspace_write_file", { path: "new/a/b.txt", content: "b\n" });
    await s.call("workspace_write_file", { path: "new/c.txt", content: "c\n" });
    const r = cli(["history", "reject", ...historyEntries(root).map((e) => e.edit_id), "--root", root]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readdirSync(root).sort()).toEqual([".git", ".mcp", "keep.txt", "old"]);
    expect(runGit(root, ["status", "--porcelain"])).toBe("");
  });
});
