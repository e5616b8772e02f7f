import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexEntries, indexEntriesOfFile } from "../../src/repo/index-entries";
import { type TmpRepo, tmpRepo } from "../helpers/tmp-repo";

/** git's own listing: "<mode> <path>" of every entry, in index order. */
function gitsModes(repo: TmpRepo): string[] {
  return repo
    .git("ls-files", "-s", "-z")
    .split("\0")
    .filter((l) => l !== "")
    .map((l) => `${l.slice(0, 6)} ${l.slice(l.indexOf("\t") + 1)}`);
}

function ours(repo: TmpRepo, window?: number): string[] | null {
  const path = join(repo.root, ".git", "index");
  const all = () => true;
  const entries = window === undefined ? indexEntries(readFileSync(path), all) : indexEntriesOfFile(path, all, window);
  return entries?.map((e) => `${e.mode.toString(8)} ${e.path}`) ?? null;
}

describe("an index's entries, read from the index file", () => {
  test("every entry's mode and path as git lists them, each index version, through windows of any size; a pick decodes only its own", async () => {
    await using repo = await tmpRepo();
    for (const p of ["a.txt", "bin/run.sh", "ünï/çødé.txt", `${"d".repeat(200)}/${"e".repeat(200)}`]) repo.write(p, `${p}\n`, p.endsWith(".sh") ? 0o755 : 0o644);
    repo.symlink("link", "a.txt");
    repo.commit();
    // a submodule entry (160000) and a name too long for the length field
    const oid = repo.git("rev-parse", "HEAD").trim();
    repo.git("update-index", "--add", "--cacheinfo", `160000,${oid},sub`);
    const blob = repo.git("hash-object", "-w", "--stdin").trim();
    repo.git("update-index", "--add", "--cacheinfo", `100755,${blob},long/${"n".repeat(4200)}`);
    for (const version of ["2", "3", "4"]) {
      repo.git("update-index", "--index-version", version);
      const want = gitsModes(repo);
      expect(want.length).toBe(7);
      expect(ours(repo)).toEqual(want);
      expect(ours(repo, 40)).toEqual(want);
      const exec = indexEntriesOfFile(join(repo.root, ".git", "index"), (_f, _e, mode) => mode === 0o100755);
      expect(exec?.map((e) => e.path)).toEqual(["bin/run.sh", `long/${"n".repeat(4200)}`]);
    }
  });

  test("bytes that are not an index this reader understands give null", () => {
    const file = join(tmpdir(), `index-entries-${process.pid}`);
    try {
      for (const bytes of [Buffer.from("DIRC"), Buffer.from("not an index at all"), Buffer.concat([Buffer.from("DIRC"), Buffer.from([0, 0, 0, 9, 0, 0, 0, 0])])]) {
        writeFileSync(file, bytes);
        expect(indexEntriesOfFile(file, () => true)).toBeNull();
        expect(indexEntries(bytes, () => true)).toBeNull();
      }
      expect(indexEntriesOfFile(join(tmpdir(), "no-such-index"), () => true)).toBeNull();
    } finally {
      rmSync(file, { force: true });
    }
  });
});
