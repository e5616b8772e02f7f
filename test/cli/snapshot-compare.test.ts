import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write("a.txt", "hello foo\nbar\n");
  repo.write("src/b.ts", "x\nfoo y\nz\n");
  repo.write("gone.txt", "bye\n");
  repo.commit();
}

function edit(repo: TmpRepo): void {
  repo.write("a.txt", "hello foo\nBAR\n");
  repo.write("c.txt", "new foo\n");
  rmSync(join(repo.root, "gone.txt"));
}

function create(root: string): string {
  const r = cli(["snapshot", "create", "--root", root]);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

describe("worksnap snapshot grep|changes|diff|export|import", () => {
  test("changes: `status path` lines; TO defaults to the work tree; --json is the tool's object", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const a = create(repo.root);
    edit(repo);
    const r = cli(["snapshot", "changes", a.slice(0, 15), "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("modified     a.txt\nadded        c.txt\ndeleted      gone.txt\n");
    const b = create(repo.root);
    const json = cli(["snapshot", "changes", a, b, "--root", repo.root, "--json"]).json();
    expect(json).toMatchObject({ cache_hint: "immutable", from: a, to: b, counts: { added: 1, modified: 1, deleted: 1, mode_changed: 0, total: 3 } });
    const scoped = cli(["snapshot", "changes", a, b, "c.txt", "--root", repo.root]);
    expect(scoped.stdout).toBe("added        c.txt\n");
    const paged = cli(["snapshot", "changes", a, b, "--limit", "1", "--root", repo.root, "--json"]).json();
    expect(paged.truncated).toBe(true);
    const next = cli(["snapshot", "changes", a, b, "--limit", "1", "--cursor", paged.cursor, "--root", repo.root, "--json"]).json();
    expect(next.changes).toEqual([{ path: "c.txt", status: "added" }]);
  });

  test("diff: text that git apply accepts; -U sets the context; unknown ids exit 1", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const a = create(repo.root);
    edit(repo);
    const r = cli(["snapshot", "diff", a, "worktree", "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello foo\n-bar\n+BAR\n");
    expect(r.stdout).toContain("deleted file mode 100644\n");
    const zero = cli(["snapshot", "diff", a, "worktree", "a.txt", "-U", "0", "--root", repo.root]);
    expect(zero.stdout).toBe("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-bar\n+BAR\n");
    repo.git("stash", "-u", "-q");
    const check = Bun.spawnSync(["git", "apply", "--check", "-"], { cwd: repo.root, stdin: new Blob([r.stdout]) });
    expect(check.exitCode).toBe(0);
    const unknown = cli(["snapshot", "diff", "deadbeefdeadbeef", "--root", repo.root]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("NOT_FOUND");
    expect(cli(["snapshot", "diff", "--root", repo.root]).code).toBe(2);
  });

  test("grep: path:line:col:text with context lines; -F, -i and --include; bad patterns exit 1", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const r = cli(["snapshot", "grep", "foo", "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("a.txt:1:7:hello foo\nsrc/b.ts:2:1:foo y\n");
    const ctx = cli(["snapshot", "grep", "-C", "1", "foo", "src", "--root", repo.root]);
    expect(ctx.stdout).toBe("src/b.ts-1-x\nsrc/b.ts:2:1:foo y\nsrc/b.ts-3-z\n");
    expect(cli(["snapshot", "grep", "-i", "-F", "FOO", "--include", "*.ts", "--root", repo.root]).stdout).toBe("src/b.ts:2:1:foo y\n");
    const json = cli(["snapshot", "grep", "foo", "--json", "--root", repo.root]).json();
    expect(json).toMatchObject({ cache_hint: "until_dirty", files_searched: 3, files_matched: 2, truncated: false });
    const bad = cli(["snapshot", "grep", "(", "--root", repo.root]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("INVALID_ARGUMENT");
    expect(cli(["snapshot", "grep", "--root", repo.root]).code).toBe(2);
    const id = create(repo.root);
    repo.write("a.txt", "changed\n");
    expect(cli(["snapshot", "grep", "hello", "--snapshot", id, "--root", repo.root]).stdout).toBe("a.txt:1:1:hello foo\n");
  });

  test("export -o FILE is byte-identical across runs; import in another directory verifies and stores it under the same id", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const id = create(repo.root);
    await using dir = tmpDir("ws-cli-export-");
    const one = cli(["snapshot", "export", id, "-o", "one.tar", "--root", repo.root], { cwd: dir.path });
    expect(one.code).toBe(0);
    const two = cli(["snapshot", "export", id, "-o", join(dir.path, "two.tar"), "--root", repo.root]);
    const sha = (f: string) => createHash("sha256").update(readFileSync(join(dir.path, f))).digest("hex");
    expect(sha("one.tar")).toBe(sha("two.tar"));
    expect(one.stdout).toBe(`${sha("one.tar")}  ${join(dir.path, "one.tar")}\n`);
    expect(two.stdout.split("  ")[0]).toBe(sha("one.tar"));

    const other = join(dir.path, "elsewhere");
    Bun.spawnSync(["mkdir", other]);
    const imp = cli(["snapshot", "import", join(dir.path, "one.tar"), "--root", other]);
    expect(imp.code).toBe(0);
    expect(imp.stdout).toBe(`${id}\n`);
    expect(cli(["snapshot", "file", "src/b.ts", "--snapshot", id, "--root", other]).stdout).toBe("x\nfoo y\nz\n");

    const wt = cli(["snapshot", "export", "--worktree", "src", "--json", "--root", repo.root]).json();
    expect(wt).toMatchObject({ cache_hint: "until_dirty", files: 1 });
    expect(existsSync(join(repo.root, wt.path))).toBe(true);
    expect(cli(["snapshot", "export", "--root", repo.root]).code).toBe(2);
  });

  test("import refuses a tampered bundle (exit 1, the entry named) and stores nothing", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const id = create(repo.root);
    await using dir = tmpDir("ws-cli-import-");
    const file = join(dir.path, "b.tar");
    cli(["snapshot", "export", id, "-o", file, "--root", repo.root]);
    const bytes = readFileSync(file);
    const at = bytes.indexOf("hello foo");
    bytes[at] = "j".charCodeAt(0);
    await Bun.write(file, bytes);
    const other = join(dir.path, "elsewhere");
    Bun.spawnSync(["mkdir", other]);
    const r = cli(["snapshot", "import", file, "--root", other]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("files/a.txt");
    expect(cli(["snapshot", "log", "--root", other]).stdout).toBe("");
    const json = cli(["snapshot", "import", file, "--root", other, "--json"]).json();
    expect(json.error).toMatchObject({ code: "INVALID_ARGUMENT", details: { entry: "files/a.txt" } });
  });
});
