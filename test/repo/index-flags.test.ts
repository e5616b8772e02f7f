import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareUtf8 } from "../../src/core/byte-order";
import { type HiddenEntry, hiddenEntries as entriesOfBytes, hiddenEntriesOfFile, presentSkipWorktree, skipWorktreeMayBePresent } from "../../src/repo/index-flags";
import { indexIdentity } from "../../src/repo/index-identity";
import { openRoot } from "../../src/repo/root";
import { type TmpRepo, tmpDir, tmpRepo } from "../helpers/tmp-repo";

/** What git itself says: `ls-files -v --sparse` tags every entry (lower case: assume-unchanged; S: skip-worktree). */
function gitsHidden(repo: TmpRepo): string[] {
  const out: string[] = [];
  for (const line of repo.git("ls-files", "-v", "--sparse", "-z").split("\0")) {
    if (line === "" || line[0] === "H") continue;
    out.push(`${line[0] === "s" || line[0] === "h" ? "a" : "-"}${line[0] === "S" || line[0] === "s" ? "s" : "-"} ${line.slice(2)}`);
  }
  return out;
}

function ours(entries: HiddenEntry[] | null): string[] | null {
  return entries?.map((e) => `${e.assumeUnchanged ? "a" : "-"}${e.skipWorktree ? "s" : "-"} ${e.path}`) ?? null;
}

/** The flagged entries of the bytes, after checking the file's readers (a window of 1 MiB, and one of 40 bytes, smaller than any entry) give the same. */
function hiddenEntries(bytes: Buffer): HiddenEntry[] | null {
  const fromBytes = entriesOfBytes(bytes);
  const file = join(tmpdir(), `index-flags-${process.pid}`);
  writeFileSync(file, bytes);
  try {
    expect(hiddenEntriesOfFile(file)).toEqual(fromBytes);
    expect(hiddenEntriesOfFile(file, 40)).toEqual(fromBytes);
  } finally {
    rmSync(file, { force: true });
  }
  return fromBytes;
}

function indexBytes(repo: TmpRepo): Buffer {
  return readFileSync(join(repo.root, ".git", "index"));
}

/** Adds index entries for paths that need not exist (`update-index --cacheinfo`), all with one blob. */
function addEntries(repo: TmpRepo, paths: string[]): void {
  const oid = repo.git("hash-object", "-w", "--stdin").trim();
  const info = paths.map((p) => `100644 ${oid}\t${p}\0`).join("");
  const r = Bun.spawnSync(["git", "update-index", "--add", "-z", "--index-info"], { cwd: repo.root, stdin: Buffer.from(info), stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
}

describe("the index's flagged entries, read from the index file", () => {
  test("each index version, flags set and cleared, names of any length and script: the entries git tags, in its order", async () => {
    await using repo = await tmpRepo();
    const paths = ["a.txt", "dir/b.txt", "dir/sub/c.txt", "ünï/çødé.txt", "名前/ファイル.ts", "x".repeat(100), `${"d".repeat(200)}/${"e".repeat(200)}`, "z/last"];
    for (const p of paths) repo.write(p, `${p}\n`);
    repo.commit();
    // names the 12-bit length field cannot hold (4095 bytes and more), present in the index only
    addEntries(repo, [`long/${"n".repeat(4090)}`, `long/${"m".repeat(5000)}`]);
    repo.git("update-index", "--assume-unchanged", "a.txt", "ünï/çødé.txt", `long/${"m".repeat(5000)}`);
    repo.git("update-index", "--skip-worktree", "dir/sub/c.txt", "名前/ファイル.ts", `long/${"n".repeat(4090)}`);
    repo.git("update-index", "--assume-unchanged", "dir/sub/c.txt"); // both flags on one entry
    for (const version of ["2", "3", "4"]) {
      if (version === "2") {
        // version 2 holds no extended flags: only assume-unchanged
        repo.git("update-index", "--no-skip-worktree", "dir/sub/c.txt", "名前/ファイル.ts", `long/${"n".repeat(4090)}`);
      }
      repo.git("update-index", "--index-version", version);
      expect(indexBytes(repo).readUInt32BE(4)).toBe(Number(version));
      const want = gitsHidden(repo);
      expect(want.length).toBe(version === "2" ? 4 : 6);
      expect(ours(hiddenEntries(indexBytes(repo)))).toEqual(want);
      if (version === "2") repo.git("update-index", "--skip-worktree", "dir/sub/c.txt", "名前/ファイル.ts", `long/${"n".repeat(4090)}`);
    }
    repo.git("update-index", "--no-assume-unchanged", "a.txt", "ünï/çødé.txt", `long/${"m".repeat(5000)}`, "dir/sub/c.txt");
    repo.git("update-index", "--no-skip-worktree", "dir/sub/c.txt", "名前/ファイル.ts", `long/${"n".repeat(4090)}`);
    expect(gitsHidden(repo)).toEqual([]);
    expect(hiddenEntries(indexBytes(repo))).toEqual([]);
  });

  test("random indexes: random names and flags, versions 2 to 4, the same as git's tags", async () => {
    await using repo = await tmpRepo();
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const alphabet = ["a", "b", "z", "-", ".", "_", "é", "ß", "中", "😀", " "];
    for (let round = 0; round < 6; round++) {
      const names = new Set<string>();
      while (names.size < 60) {
        const parts = Array.from({ length: 1 + rand(4) }, () => Array.from({ length: 1 + rand(12) }, () => alphabet[rand(alphabet.length)]).join("").trim() || "x");
        names.add(parts.join("/"));
      }
      const list = [...names].filter((n) => ![...names].some((o) => o.startsWith(`${n}/`))); // no file is also a directory
      repo.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", ".");
      addEntries(repo, list);
      const version = String(2 + (round % 3));
      repo.git("update-index", "--index-version", version);
      const assumed = list.filter(() => rand(3) === 0);
      const skipped = version === "2" ? [] : list.filter(() => rand(3) === 0);
      repo.git("update-index", "--assume-unchanged", "--", ...assumed);
      if (skipped.length > 0) repo.git("update-index", "--skip-worktree", "--", ...skipped);
      repo.git("update-index", "--index-version", version);
      const want = gitsHidden(repo);
      expect(want.length).toBeGreaterThan(5);
      expect(ours(hiddenEntries(indexBytes(repo)))).toEqual(want);
    }
  });

  test("a sparse index's directory entries and a SHA-256 repository", async () => {
    await using repo = await tmpRepo();
    repo.write("in/a.txt", "a\n");
    repo.write("out/b.txt", "b\n");
    repo.write("out/deep/c.txt", "c\n");
    repo.commit();
    repo.git("sparse-checkout", "set", "--cone", "--sparse-index", "in");
    expect(gitsHidden(repo)).toEqual(["-s out/"]);
    expect(ours(hiddenEntries(indexBytes(repo)))).toEqual(["-s out/"]);

    await using sha256 = await tmpRepo({ git: false });
    sha256.git("init", "-q", "--object-format=sha256");
    sha256.write("a.txt", "a\n");
    sha256.write("d/b.txt", "b\n");
    sha256.git("add", "-A");
    sha256.git("update-index", "--assume-unchanged", "d/b.txt");
    expect(ours(hiddenEntries(indexBytes(sha256)))).toEqual(["a- d/b.txt"]);
  });

  test("what it cannot read is null: a split index, other bytes, a torn index", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.commit();
    repo.git("update-index", "--assume-unchanged", "a.txt");
    const whole = indexBytes(repo);
    expect(ours(hiddenEntries(whole))).toEqual(["a- a.txt"]);
    for (let cut = 1; cut < whole.length; cut += 7) expect(hiddenEntries(whole.subarray(0, whole.length - cut))).toBeNull();
    expect(hiddenEntries(Buffer.from("not an index at all"))).toBeNull();
    repo.git("update-index", "--split-index");
    repo.write("c.txt", "c\n");
    repo.git("add", "c.txt");
    expect(indexBytes(repo).includes(Buffer.from("link"))).toBe(true);
    expect(hiddenEntries(indexBytes(repo))).toBeNull();
  });

  test("skip-worktree entries by presence: each absent one under the top-most absent path, found without looking at every entry", async () => {
    await using dir = tmpDir();
    const root = dir.path;
    // on disk: a/, a/b/, a/b/here.txt, c.txt (a file where a directory is named), d-x/
    mkdirSync(join(root, "a", "b"), { recursive: true });
    writeFileSync(join(root, "a", "b", "here.txt"), "h\n");
    writeFileSync(join(root, "c.txt"), "c\n");
    mkdirSync(join(root, "d-x"));
    const paths = ["a/b/gone.txt", "a/b/here.txt", "a/gone/x.txt", "a/gone/y/z.txt", "c.txt/under.txt", "d-x/f", "d.txt", "d/1", "d/2/3", "d/4", "d0", "e/only"];
    const entries = paths.map((path) => ({ path })).sort((x, y) => compareUtf8(x.path, y.path));
    const { present, absent } = presentSkipWorktree(root, entries);
    expect(present.map((e) => e.path)).toEqual(["a/b/here.txt"]);
    expect(absent).toEqual(["a/b/gone.txt", "a/gone", "c.txt", "d-x/f", "d.txt", "d", "d0", "e"]);
    // the same as looking at each entry: absent exactly when something on its way is missing or not a directory
    for (const e of entries) {
      const seen = existsSync(join(root, e.path));
      expect([e.path, seen]).toEqual([e.path, present.includes(e)]);
      if (!seen) expect(absent.some((a) => e.path === a || e.path.startsWith(`${a}/`))).toBe(true);
    }
  });

  test("whether a skip-worktree entry may be in the tree: never for an index of version 2, else where its entries are looked for", async () => {
    await using repo = await tmpRepo();
    repo.write("in/a.txt", "a\n");
    repo.write("out/b.txt", "b\n");
    repo.write("out/deep/c.txt", "c\n");
    repo.write("solo.txt", "s\n");
    repo.commit();
    const root = openRoot(repo.root);
    const identity = () => indexIdentity(join(repo.root, ".git", "index")) as string;
    expect(indexBytes(repo).readUInt32BE(4)).toBe(2);
    expect(skipWorktreeMayBePresent(root, identity())).toBe(false);
    repo.git("sparse-checkout", "set", "--no-cone", "/in/");
    expect(indexBytes(repo).readUInt32BE(4)).toBe(3);
    expect(skipWorktreeMayBePresent(root, identity())).toBe(false);
    // the places kept for the next process: the absent directory and the absent file, from the top
    const kept = JSON.parse(readFileSync(join(repo.root, ".mcp", "cache", "skip-worktree.json"), "utf8"));
    expect(kept).toEqual({ identity: identity(), marks: ["out", "solo.txt"] });
    mkdirSync(join(repo.root, "out"));
    expect(skipWorktreeMayBePresent(root, identity())).toBe(true); // something where a skipped entry lies
    rmSync(join(repo.root, "out"), { recursive: true });
    writeFileSync(join(repo.root, "solo.txt"), "by hand\n");
    expect(skipWorktreeMayBePresent(root, identity())).toBe(true);
    rmSync(join(repo.root, "solo.txt"));
    expect(skipWorktreeMayBePresent(root, identity())).toBe(false);
    // an identity the index does not have: it cannot tell
    expect(skipWorktreeMayBePresent(root, "0:0:0:0:0")).toBe(true);
  });
});
