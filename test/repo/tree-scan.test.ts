import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, type RepoPath } from "../../src/core/repo-path";
import fc from "fast-check";
import { compareUtf8 } from "../../src/core/byte-order";
import { readLiveTree } from "../../src/ops/live/live-tree";
import { mergeSorted, plainIndexFilePieces, plainIndexFiles, splitIndexRecords, type TreeEntry } from "../../src/repo/tree-scan";
import { nativeModule } from "../../src/repo/native";
import { isReservedPath } from "../../src/core/repo-path";
import { openWorkspace } from "../../src/ops/workspace";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

const paths = (t: { entries: { path: string }[] }) => t.entries.map((e) => e.path);

describe("candidate walk", () => {
  for (const git of [true, false]) {
    const kind = git ? "git" : "plain dir";
    test(`${kind}: a.txt sorts before a/b (full-path byte order), ignore rules apply`, async () => {
      await using repo = await tmpRepo({ git });
      repo.write("a/b", "1");
      repo.write("a.txt", "2");
      repo.write("a-z", "3");
      repo.write("ignored/x.log", "4");
      repo.write("keep.log", "5");
      repo.write(".gitignore", "ignored/\n*.log\n!keep.log\n");
      repo.write("sub/.gitignore", "secret\n");
      repo.write("sub/secret", "s");
      repo.write("sub/open", "o");
      if (git) repo.commit();
      const t = await readLiveTree(openWorkspace(repo.root));
      expect(paths(t)).toEqual([".gitignore", "a-z", "a.txt", "a/b", "keep.log", "sub/.gitignore", "sub/open"]);
    });

    test(`${kind}: names beyond the BMP sort after U+FFFF (UTF-8 byte order, not UTF-16's), tracked and untracked, in a server kept listing too`, async () => {
      await using repo = await tmpRepo({ git });
      for (const n of ["\u{10000}.txt", "\uffff.txt", "\ue000.txt", "a.txt", "é.txt", "d/\u{1F600}", "d/\uff01"]) repo.write(n, n);
      if (git) repo.commit();
      repo.write("\u{10001}.new", "untracked");
      repo.write("\ufffe.new", "untracked");
      const want = ["a.txt", "d/\uff01", "d/\u{1F600}", "é.txt", "\ue000.txt", "\ufffe.new", "\uffff.txt", "\u{10000}.txt", "\u{10001}.new"];
      expect(paths(await readLiveTree(openWorkspace(repo.root)))).toEqual(want);
      const server = openWorkspace(repo.root, { longLived: true, index: { diskBudget: 0 } });
      expect(paths(await readLiveTree(server))).toEqual(want);
      expect(paths(await readLiveTree(server))).toEqual(want); // the kept listing and tracked entries
    });

    test(`${kind}: symlinks are recorded, not followed; .mcp and .git never appear`, async () => {
      await using repo = await tmpRepo({ git });
      repo.write("dir/f", "f");
      repo.symlink("link-to-dir", "dir");
      repo.symlink("link-out", "/etc");
      if (git) repo.commit();
      const ws = openWorkspace(repo.root);
      const t = await readLiveTree(ws);
      expect(paths(t)).toEqual(["dir/f", "link-out", "link-to-dir"]);
    });

    test(`${kind}: a file named with a newline and Unicode names are candidates`, async () => {
      await using repo = await tmpRepo({ git, name: "ws repo ☃ " });
      repo.write("line\nbreak.txt", "x");
      repo.write("naïve/日本.txt", "y");
      if (git) repo.commit();
      const t = await readLiveTree(openWorkspace(repo.root));
      expect(paths(t)).toEqual(["line\nbreak.txt", "naïve/日本.txt"]);
    });
  }

  test("git: tracked files missing on disk are not candidates; untracked dirs are expanded", async () => {
    await using repo = await tmpRepo();
    repo.write("gone.txt", "g");
    repo.write("kept.txt", "k");
    repo.commit();
    runGit(repo.root, ["rm", "-q", "--cached", "kept.txt"]);
    Bun.spawnSync(["rm", join(repo.root, "gone.txt")]);
    repo.write("newdir/deep/x.txt", "x");
    const t = await readLiveTree(openWorkspace(repo.root));
    expect(paths(t)).toEqual(["kept.txt", "newdir/deep/x.txt"]);
  });

  test("git: non-UTF-8 names are skipped and counted", async () => {
    await using repo = await tmpRepo();
    repo.write("ok.txt", "o");
    writeFileSync(Buffer.concat([Buffer.from(`${repo.root}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from(".txt")]), "b");
    const t = await readLiveTree(openWorkspace(repo.root));
    expect(paths(t)).toEqual(["ok.txt"]);
    expect(t.skipped.non_utf8).toBe(1);
  });

  test("git: submodules and nested repositories are not descended into, and are counted", async () => {
    await using inner = await tmpRepo();
    inner.write("inside.txt", "i");
    inner.commit();
    await using repo = await tmpRepo();
    repo.write("top.txt", "t");
    repo.commit();
    runGit(repo.root, ["-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.root, "sub"]);
    repo.commit("add submodule");
    mkdirSync(join(repo.root, "nested"));
    runGit(join(repo.root, "nested"), ["init", "-q"]);
    writeFileSync(join(repo.root, "nested", "n.txt"), "n");
    const t = await readLiveTree(openWorkspace(repo.root));
    expect(paths(t)).toEqual([".gitmodules", "top.txt"]);
    expect(t.skipped.submodules).toBe(2);
  });

  test("scope limits the walk to the named paths", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "a");
    repo.write("srcx/b.ts", "b");
    repo.write("docs/c.md", "c");
    repo.commit();
    const t = await readLiveTree(openWorkspace(repo.root), ["src" as RepoPath]);
    expect(paths(t)).toEqual(["src/a.ts"]);
    const all = await readLiveTree(openWorkspace(repo.root), [ROOT]);
    expect(paths(all)).toHaveLength(3);
  });
});

describe("a directory where a tracked file was", () => {
  test("regression (untracked files missed): git's status names no untracked directory standing where a tracked file was deleted; its files are candidates all the same, at any depth, ignore rules kept", async () => {
    await using repo = await tmpRepo();
    repo.write("a", "file\n");
    repo.write("deep/b", "file\n");
    repo.write(".gitignore", "*.log\n");
    repo.commit();
    Bun.spawnSync(["rm", join(repo.root, "a"), join(repo.root, "deep", "b")]);
    repo.write("a/new.txt", "in a directory now\n");
    repo.write("a/sub/more.txt", "deeper\n");
    repo.write("a/skip.log", "ignored\n");
    repo.write("deep/b/c/d.txt", "nested\n");
    // git's own status, untracked files "normal", says nothing of them (-uall does)
    expect(runGit(repo.root, ["status", "--porcelain", "--untracked-files=normal"])).toBe(" D a\n D deep/b\n");
    const want = [".gitignore", "a/new.txt", "a/sub/more.txt", "deep/b/c/d.txt"];
    expect(paths(await readLiveTree(openWorkspace(repo.root)))).toEqual(want);
    expect(paths(await readLiveTree(openWorkspace(repo.root), ["a" as RepoPath]))).toEqual(["a/new.txt", "a/sub/more.txt"]);
    const server = openWorkspace(repo.root, { longLived: true, index: { diskBudget: 0 } });
    expect(paths(await readLiveTree(server))).toEqual(want);
    repo.write("a/later.txt", "added after\n");
    expect(paths(await readLiveTree(server))).toEqual([".gitignore", "a/later.txt", "a/new.txt", "a/sub/more.txt", "deep/b/c/d.txt"]);
  });
});

describe("mergeSorted", () => {
  test("tracked and untracked entries merge into byte order, a path in both keeping the tracked entry: the walk and the binary-search placement agree with a sort (property)", () => {
    const name = fc.constantFrom("a", "b", "a/b", "a.txt", "é", "\uffff", "\u{10000}", "z", "d/e", "d/\ue000");
    const sortedUnique = (n: number) => fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 3 }).map((p) => p.join("/")), { maxLength: n }).map((a) => a.sort(compareUtf8));
    fc.assert(
      fc.property(sortedUnique(200), sortedUnique(12), (tracked, untracked) => {
        const a: TreeEntry[] = tracked.map((path) => ({ path, mode: "100644" as const }));
        const b: TreeEntry[] = untracked.map((path) => ({ path, mode: "" as const }));
        const byPath = new Map<string, TreeEntry>();
        for (const e of [...b, ...a]) byPath.set(e.path, e); // a's entry wins
        const want = [...byPath.values()].sort((x, y) => compareUtf8(x.path, y.path));
        const got = mergeSorted(a, b);
        expect(got.map((e) => [e.path, e.mode])).toEqual(want.map((e) => [e.path, e.mode]));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("the index listing's records", () => {
  test("plain files of a listing are the records a naive parse finds, reserved paths left out however the paths before them share their directories (property)", () => {
    const segment = fc.constantFrom("a", "b", "src", ".git", ".GIT", ".mcp", ".Mcp", "git~1", ".g\u200cit", "x.git", ".github", "é", "日本", "a b");
    const record = fc.record({
      tag: fc.constantFrom("H", "H", "H", "h", "S", "M", "?"),
      mode: fc.constantFrom("100644", "100755", "120000", "160000"),
      oid: fc.oneof(fc.stringMatching(/^[0-9a-f]{40}$/), fc.stringMatching(/^[0-9a-f]{64}$/)),
      stage: fc.constantFrom("0", "0", "0", "1", "2"),
      path: fc.array(segment, { minLength: 1, maxLength: 5 }).map((p) => p.join("/")),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 60 }), fc.boolean(), (raw, sorted) => {
        const records = sorted ? [...raw].sort((x, y) => compareUtf8(x.path, y.path)) : raw;
        const listing = Buffer.from(records.map((r) => `${r.tag} ${r.mode} ${r.oid} ${r.stage}\t${r.path}\0`).join(""));
        const want = records
          .filter((r) => r.tag === "H" && r.stage === "0" && (r.mode === "100644" || r.mode === "100755") && !isReservedPath(r.path))
          .map((r) => ({ path: r.path, mode: r.mode as TreeEntry["mode"], gitOid: r.oid }));
        expect(plainIndexFiles(new Uint8Array(listing))).toEqual(want);
      }),
      { numRuns: 3000 },
    );
  });

  test.skipIf(nativeModule() === null)("the native split gives the records the one pass here gives: fields, names, reserved and wide flags, over bent records and hostile names (property)", () => {
    const enc = (s: string) => new Uint8Array(Buffer.from(s));
    // names that fold to reserved ones and names that only look like them, in any segment, in any case
    const segment = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("a", "src", "main.ts", "generated", "models", ".github", ".gitx", "x.git", "git", "mcp", "g", "m", ".", "..", "") },
      { weight: 3, arbitrary: fc.constantFrom(".git", ".GIT", ".Git", ".mcp", ".MCP", "git~1", "GIT~1", "mcp~1", "Mcp~1", "git^1", "mcp^1", ".git.", ".git ", ".git::$INDEX_ALLOCATION", "\x0egit") },
      { weight: 2, arbitrary: fc.constantFrom(".g\u200cit", "\ufeff.git", ".GİT", "é", "日本", "\u{1f600}", "a b", "a\tb", "q\"uote", "back\\slash") },
    );
    const name = fc.oneof(
      { weight: 8, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((p) => enc(p.join("/"))) },
      { weight: 1, arbitrary: fc.constantFrom(Uint8Array.of(0x61, 0xff, 0x62), Uint8Array.of(0xc3, 0x28), Uint8Array.of(0x2e, 0x67, 0x69, 0x74, 0x2f, 0xe9)) },
    );
    const record = fc.record({
      tag: fc.constantFrom("H", "H", "H", "h", "S", "M", "?", "HH", ""),
      mode: fc.constantFrom("100644", "100755", "120000", "160000", "644"),
      oid: fc.oneof(fc.stringMatching(/^[0-9a-f]{40}$/), fc.stringMatching(/^[0-9a-f]{64}$/), fc.constantFrom("abc", "")),
      stage: fc.constantFrom("0", "0", "0", "1", "2", "00"),
      name,
      bent: fc.option(fc.constantFrom("no tab", "two spaces", "no fields", "no NUL at the end", "tab first"), { freq: 6 }),
    });
    const bytesOf = (r: { tag: string; mode: string; oid: string; stage: string; name: Uint8Array; bent: string | null }, last: boolean): Uint8Array => {
      const head = r.bent === "no fields" ? "garbage" : r.bent === "two spaces" ? `${r.tag}  ${r.mode} ${r.oid} ${r.stage}` : r.bent === "tab first" ? `\t${r.tag} ${r.mode}` : `${r.tag} ${r.mode} ${r.oid} ${r.stage}`;
      const end = r.bent === "no NUL at the end" && last ? [] : [0];
      return Buffer.concat([enc(head), enc(r.bent === "no tab" ? " " : "\t"), r.name, Uint8Array.from(end)]);
    };
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), (records) => {
        const listing = new Uint8Array(Buffer.concat(records.map((r, i) => bytesOf(r, i === records.length - 1))));
        expect(splitIndexRecords(listing, true)).toEqual(splitIndexRecords(listing, false));
      }),
      { numRuns: 3000 },
    );
    // and the bench's kind of listing, a real one: many records, shared directories
    const big = new Uint8Array(Buffer.from(Array.from({ length: 3000 }, (_, i) => `H 100644 ${(i % 97).toString(16).padStart(40, "0")} 0\tdir${i % 13}/${i % 7 === 0 ? ".git" : "sub"}/f${i}.ts\0`).join("")));
    const records = splitIndexRecords(big, true);
    expect(records).toEqual(splitIndexRecords(big, false));
    expect(records.filter((r) => r.reserved)).toHaveLength(429);
  });

  test("the listing's plain files in pieces are the whole listing's, in order, wherever the pieces are cut (property); a listing parsed already comes whole", () => {
    const record = fc.record({
      tag: fc.constantFrom("H", "H", "S"),
      oid: fc.stringMatching(/^[0-9a-f]{40}$/),
      path: fc.array(fc.constantFrom("a", "bb", ".git", "é", "日本"), { minLength: 1, maxLength: 4 }).map((p) => p.join("/")),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), fc.integer({ min: 1, max: 400 }), (records, pieceBytes) => {
        const listing = new Uint8Array(Buffer.from(records.map((r) => `${r.tag} 100644 ${r.oid} 0\t${r.path}\0`).join("")));
        const pieces = [...plainIndexFilePieces(listing, pieceBytes)];
        expect(pieces.flat()).toEqual(plainIndexFiles(new Uint8Array(listing)));
        expect([...plainIndexFilePieces(listing, 1)]).toHaveLength(records.length); // a record a piece
      }),
      { numRuns: 1000 },
    );
    const listing = new Uint8Array(Buffer.from("H 100644 " + "1".repeat(40) + " 0\ta\0H 100644 " + "2".repeat(40) + " 0\tb\0"));
    expect([...plainIndexFilePieces(listing, 10)]).toHaveLength(2);
    plainIndexFiles(listing);
    expect([...plainIndexFilePieces(listing, 10)]).toEqual([plainIndexFiles(listing)]);
  });
});
