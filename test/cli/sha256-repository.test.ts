/**
 * A SHA-256 repository (`git init --object-format=sha256`, git 3's default) served whole, through the
 * compiled CLI: its snapshots read back after git has dropped the blobs, compare with revisions, grep,
 * export and import, patches and their reject; and a private object store an earlier version made in the
 * SHA-1 format for such a repository (its SHA-256 packs unreadable to git) is mended when next used.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, historyEntries } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

function ok(args: string[], root: string, stdin?: string) {
  const r = cli([...args, "--root", root], stdin === undefined ? {} : { stdin });
  expect({ args: args.join(" "), code: r.code, stderr: r.stderr }).toEqual({ args: args.join(" "), code: 0, stderr: "" });
  return r.stdout;
}

describe("a SHA-256 repository", () => {
  test("snapshots read back after git drops the blobs; revisions compare; grep, export and import, patches and rejects work (regression: every clean file of a snapshot was NOT_FOUND, the store being SHA-1)", async () => {
    await using repo = await tmpRepo({ git: false });
    const root = repo.root;
    repo.git("init", "-q", "--object-format=sha256", "-b", "main");
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.write("README.md", "# readme\n");
    repo.commit("one");
    const id = ok(["snapshot", "create"], root).trim();
    repo.write("src/a.ts", "export const a = 2;\n");
    repo.commit("two");
    expect(ok(["snapshot", "diff", "HEAD~1", "HEAD"], root)).toBe("diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n");
    expect(ok(["snapshot", "changes", id, "HEAD"], root)).toBe("modified     src/a.ts\n");
    // the first version's blob leaves git's store; the snapshot keeps it
    repo.git("checkout", "-q", "--orphan", "fresh");
    repo.git("commit", "-qm", "fresh");
    repo.git("branch", "-D", "main");
    repo.git("reflog", "expire", "--expire=now", "--all");
    repo.git("gc", "-q", "--prune=now");
    expect(ok(["snapshot", "file", "src/a.ts", "--snapshot", id], root)).toBe("export const a = 1;\n");
    expect(ok(["snapshot", "grep", "a = 1", "--snapshot", id], root)).toBe("src/a.ts:1:14:export const a = 1;\n");
    const bundle = repo.beside(".tar");
    ok(["snapshot", "export", id, "-o", bundle], root);
    await using other = await tmpRepo({ git: false });
    other.git("init", "-q", "--object-format=sha256");
    expect(ok(["snapshot", "import", bundle], other.root)).toContain(id);
    expect(ok(["snapshot", "file", "src/a.ts", "--snapshot", id], other.root)).toBe("export const a = 1;\n");
    ok(["apply", "-"], root, "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const a = 2;\n+export const a = 3;\n");
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("export const a = 3;\n");
    ok(["history", "reject", ...historyEntries(root).map((e) => e.edit_id)], root);
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("export const a = 2;\n");
  });

  test("a private store an earlier version made in the SHA-1 format for it is mended when next used, and its snapshots read", async () => {
    await using repo = await tmpRepo({ git: false });
    const root = repo.root;
    repo.git("init", "-q", "--object-format=sha256", "-b", "main");
    repo.write("a.txt", "hello\n");
    repo.commit("one");
    const id = ok(["snapshot", "create"], root).trim();
    // as the earlier version left it: the store declared SHA-1, its packs holding SHA-256 objects
    const config = join(root, ".mcp/git/store/config");
    writeFileSync(config, readFileSync(config, "utf8").replace(/\n\s*objectformat\s*=\s*sha256/i, "").replace("repositoryformatversion = 1", "repositoryformatversion = 0"));
    expect(readFileSync(config, "utf8")).not.toContain("sha256");
    expect(ok(["snapshot", "file", "a.txt", "--snapshot", id], root)).toBe("hello\n");
    expect(readFileSync(config, "utf8")).toMatch(/objectformat = sha256/);
  });
});
