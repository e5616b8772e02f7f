import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { globFilter, snapshotGrep, type GrepAnswer, type GrepArgs } from "../../../src/ops/snapshot/grep";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write(".gitignore", "ignored/\n*.log\n");
  repo.write("src/a.ts", "const foo = 1;\nfoo(bar);\n");
  repo.write("src/b.js", "no match here\n");
  repo.write("src/deep/c.ts", "FOO upper\nfoo lower\n");
  repo.write("docs/readme.md", "about foo\n");
  repo.write("img.png", new Uint8Array([0x89, 0x50, 0, 0x66, 0x6f, 0x6f, 10]));
  repo.write("ignored/x.ts", "foo ignored\n");
  repo.write("debug.log", "foo log\n");
  repo.symlink("link.ts", "src/a.ts");
}

const where = (r: GrepAnswer) => r.matches.map((m) => `${m.path}:${m.line}:${m.col}`);

async function all(ws: Workspace, args: GrepArgs): Promise<{ matches: string[]; pages: GrepAnswer[] }> {
  const pages: GrepAnswer[] = [];
  let cursor: string | undefined;
  do {
    const r = await snapshotGrep(ws, { ...args, cursor });
    pages.push(r);
    cursor = r.cursor;
  } while (cursor);
  return { matches: pages.flatMap(where), pages };
}

describe("snapshot_grep", () => {
  test("worktree: ignore rules applied, binary and symlinks not searched, byte order; every searched file touched with its blob", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const r = await snapshotGrep(ws, { mode: "worktree", pattern: "foo" });
    if (r.cache_hint !== "until_dirty") throw new Error("expected the worktree branch");
    expect(where(r)).toEqual(["docs/readme.md:1:7", "src/a.ts:1:7", "src/a.ts:2:1", "src/deep/c.ts:2:1"]);
    expect(r).toMatchObject({ files_searched: 5, files_matched: 3, binary_skipped: 1, truncated: false, candidates: 6 });
    const touched = ws.leases.get(r.lease_id).touched;
    expect([...touched.keys()]).toEqual([".gitignore", "docs/readme.md", "src/a.ts", "src/b.js", "src/deep/c.ts"]);
    for (const [p, blob] of touched) expect(blob).toBe(blobIdOf(readFileSync(join(repo.root, p))));
    closeWorkspace(ws);
  });

  test("worktree: untracked and modified files are read live and their blobs recorded", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    await createSnapshot(ws, { paths: ["."] }); // teaches the store the clean files' sha256
    repo.write("src/a.ts", "changed foo\n");
    repo.write("new.txt", "foo new\n");
    const r = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", paths: ["src/a.ts", "new.txt", "docs"] });
    if (r.cache_hint !== "until_dirty") throw new Error("expected the worktree branch");
    expect(where(r)).toEqual(["docs/readme.md:1:7", "new.txt:1:1", "src/a.ts:1:9"]);
    const touched = ws.leases.get(r.lease_id).touched;
    for (const p of ["docs/readme.md", "new.txt", "src/a.ts"]) expect(touched.get(p)).toBe(blobIdOf(readFileSync(join(repo.root, p))));
    closeWorkspace(ws);
  });

  test("snapshot mode reads the captured blobs, not the live files", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
    repo.write("src/a.ts", "gone\n");
    const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: id.slice(7, 19), pattern: "foo", case_insensitive: true });
    expect(r.cache_hint).toBe("immutable");
    expect(where(r)).toEqual(["docs/readme.md:1:7", "src/a.ts:1:7", "src/a.ts:2:1", "src/deep/c.ts:1:1", "src/deep/c.ts:2:1"]);
    expect(r.matches[0]!.text).toBe("about foo");
    closeWorkspace(ws);
  });

  test("include/exclude globs: a name glob matches at any depth, a path glob the whole path; no match is an empty answer", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const ts = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", include: ["*.ts"] });
    expect(where(ts)).toEqual(["src/a.ts:1:7", "src/a.ts:2:1", "src/deep/c.ts:2:1"]);
    const deep = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", include: ["src/**/*.ts"], exclude: ["src/deep/**"] });
    expect(where(deep)).toEqual(["src/a.ts:1:7", "src/a.ts:2:1"]);
    const none = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", include: ["*.rs"] });
    expect(none).toMatchObject({ matches: [], candidates: 0, files_searched: 0, files_matched: 0, truncated: false });
    const f = globFilter(["*.md"], ["docs/skip.md"]);
    expect([f("a.md"), f("docs/b.md"), f("docs/skip.md"), f("a.ts")]).toEqual([true, true, false, false]);
    const onlyInclude = globFilter(["*.md", "src/**"], undefined);
    expect([onlyInclude("a.md"), onlyInclude("src/x/y.ts"), onlyInclude("a.ts")]).toEqual([true, true, false]);
    const onlyExclude = globFilter(undefined, ["*.md"]);
    expect([onlyExclude("docs/a.md"), onlyExclude("a.ts")]).toEqual([false, true]);
    const neither = globFilter(undefined, undefined);
    expect([neither("a.md"), neither("any/path")]).toEqual([true, true]);
    closeWorkspace(ws);
  });

  test("paging by max_matches and max_files gives the matches of one large call; max_files touches only what was searched", async () => {
    await using repo = await tmpRepo({ git: false });
    for (let i = 0; i < 30; i++) repo.write(`d/f${String(i).padStart(2, "0")}.txt`, "x foo\n".repeat(i % 4));
    const ws = openWorkspace(repo.root);
    const one = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", max_matches: 1000 });
    expect(one.truncated).toBe(false);
    const byMatches = await all(ws, { mode: "worktree", pattern: "foo", max_matches: 7 });
    expect(byMatches.matches).toEqual(where(one));
    const byFiles = await all(ws, { mode: "worktree", pattern: "foo", max_files: 4 });
    expect(byFiles.matches).toEqual(where(one));
    const first = byFiles.pages[0]!;
    if (first.cache_hint !== "until_dirty") throw new Error("expected the worktree branch");
    expect(first.files_searched).toBe(4);
    expect([...ws.leases.get(first.lease_id).touched.keys()]).toEqual(["d/f00.txt", "d/f01.txt", "d/f02.txt", "d/f03.txt"]);
    closeWorkspace(ws);
  });

  test("bad input: empty pattern, invalid regex, paths outside the root, unknown ids, missing paths, foreign cursors", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
    repo.write("extra.txt", "foo\n");
    const id2 = (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
    const code = async (args: GrepArgs) => ((await snapshotGrep(ws, args).catch((e) => e)) as { code: string }).code;
    expect(await code({ mode: "worktree", pattern: "" })).toBe("INVALID_ARGUMENT");
    const bad = await snapshotGrep(ws, { mode: "worktree", pattern: "fo(o" }).catch((e) => e);
    expect(bad.code).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "worktree", pattern: "foo", paths: ["../outside"] })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "worktree", pattern: "foo", paths: ["/etc"] })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "worktree", pattern: "foo", paths: [".mcp"] })).toBe("PERMISSION_DENIED");
    expect(await code({ mode: "worktree", pattern: "foo", paths: ["no/such/dir"] })).toBe("NOT_FOUND");
    expect(await code({ mode: "snapshot", snapshot_id: `sha256:${"1".repeat(64)}`, pattern: "foo" })).toBe("NOT_FOUND");
    expect(await code({ mode: "snapshot", pattern: "foo" })).toBe("INVALID_ARGUMENT");
    // Snapshot mode: an uncaptured path is an empty answer, like snapshot_list.
    expect((await snapshotGrep(ws, { mode: "snapshot", snapshot_id: id, pattern: "foo", paths: ["nope"] })).matches).toEqual([]);

    const page = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: id, pattern: "foo", max_matches: 1 });
    expect(page.cursor).toBeDefined();
    const cursor = page.cursor;
    expect(await code({ mode: "snapshot", snapshot_id: id2, pattern: "foo", max_matches: 1, cursor })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "snapshot", snapshot_id: id, pattern: "fo", max_matches: 1, cursor })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "snapshot", snapshot_id: id, pattern: "foo", include: ["*.ts"], cursor })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "snapshot", snapshot_id: id, pattern: "foo", paths: ["src"], cursor })).toBe("INVALID_ARGUMENT");
    expect(await code({ mode: "worktree", pattern: "foo", cursor })).toBe("INVALID_ARGUMENT");
    const next = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: id, pattern: "foo", max_matches: 50, cursor });
    expect(next.matches.length).toBeGreaterThan(0);
    closeWorkspace(ws);
  });
});

describe("snapshot_grep agrees with ripgrep", () => {
  const WORDS = ["foo", "bar", "Foo", "FOOBAR", "fooo", "baz", "a.b", "axb", "qux", "föo", "x", "bar_foo", "  ", "\t", "foo-bar"];

  function generate(repo: TmpRepo): void {
    let s = 12345;
    const r = () => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s / 2 ** 32;
    };
    repo.write(".gitignore", "build/\n*.tmp\n");
    for (let i = 0; i < 150; i++) {
      const dir = ["src", "src/lib", "docs", "build", "test/unit", ".hidden"][i % 6];
      const ext = ["ts", "md", "tmp", "txt"][i % 4];
      const lines: string[] = [];
      const n = Math.floor(r() * 40);
      for (let l = 0; l < n; l++) {
        const words = Array.from({ length: 1 + Math.floor(r() * 8) }, () => WORDS[Math.floor(r() * WORDS.length)]);
        lines.push(words.join(r() < 0.5 ? " " : ""));
      }
      const crlf = i % 7 === 0;
      repo.write(`${dir}/file${i}.${ext}`, lines.join(crlf ? "\r\n" : "\n") + (i % 5 === 0 ? "" : "\n"));
    }
    repo.write("bin/blob.dat", new Uint8Array([0, 102, 111, 111, 10, 102, 111, 111]));
    repo.symlink("src/link.ts", "file0.ts");
  }

  function rg(root: string, args: string[]): string[] {
    const r = Bun.spawnSync(["rg", "-n", "--no-heading", "-H", "--hidden", "-g", "!.git", "-g", "!.mcp", ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`rg failed: ${r.stderr.toString()}`);
    return r.stdout
      .toString()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(":").slice(0, 2).join(":"));
  }

  const CASES: { name: string; args: Partial<GrepArgs>; rg: string[] }[] = [
    { name: "literal", args: { pattern: "foo", fixed_strings: true }, rg: ["-F", "foo"] },
    { name: "literal with regex characters", args: { pattern: "a.b", fixed_strings: true }, rg: ["-F", "a.b"] },
    { name: "regex", args: { pattern: "fo+(bar|_)?" }, rg: ["fo+(bar|_)?"] },
    { name: "anchored regex", args: { pattern: "^foo|bar$" }, rg: ["^foo|bar$"] },
    { name: "word boundary", args: { pattern: "\\bbar\\b" }, rg: ["\\bbar\\b"] },
    { name: "case-insensitive literal", args: { pattern: "FOO", fixed_strings: true, case_insensitive: true }, rg: ["-F", "-i", "FOO"] },
    { name: "case-insensitive regex", args: { pattern: "f[o]+B", case_insensitive: true }, rg: ["-i", "f[o]+B"] },
  ];

  for (const c of CASES) {
    test(`${c.name}: the same (path, line) pairs as rg`, async () => {
      await using repo = await tmpRepo();
      generate(repo);
      repo.commit();
      const ws = openWorkspace(repo.root);
      const mine = await all(ws, { mode: "worktree", pattern: "", ...c.args, max_matches: 5000 } as GrepArgs);
      const pairs = [...new Set(mine.matches.map((m) => m.split(":").slice(0, 2).join(":")))].sort();
      const theirs = [...new Set(rg(repo.root, c.rg))].sort();
      expect(theirs.length).toBeGreaterThan(0);
      expect(pairs).toEqual(theirs);
      closeWorkspace(ws);
    });
  }
});
