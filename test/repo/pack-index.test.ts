import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GitObjectStore } from "../../src/repo/git-object-store";
import { missingFrom, packIndexesOf, type PackIndex } from "../../src/repo/pack-index";
import { openRoot } from "../../src/repo/root";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

/** Every object git finds in the repository. */
function objectsOf(root: string): string[] {
  return runGit(root, ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]).trim().split("\n");
}

/** Ids next to the held ones (one digit changed, first and last byte values) that the repository lacks. */
function absentNear(held: string[]): string[] {
  const set = new Set(held);
  const len = (held[0] as string).length;
  const near = held.flatMap((id) => [id.slice(0, -1) + (id.endsWith("0") ? "1" : "0"), (id[0] === "f" ? "e" : "f") + id.slice(1)]);
  return [...near, "0".repeat(len), "f".repeat(len)].filter((id) => !set.has(id));
}

describe("a pack's index", () => {
  for (const format of ["sha1", "sha256"] as const) {
    test(`answers as git does for every object it holds and for ids it lacks (${format})`, async () => {
      await using repo = await tmpRepo();
      if (format === "sha256") {
        rmSync(join(repo.root, ".git"), { recursive: true, force: true });
        repo.git("init", "-q", "--object-format=sha256", "-b", "main");
      }
      for (let i = 0; i < 700; i++) repo.write(`d${i % 7}/f${i}.txt`, `file ${i}\n`);
      repo.commit("many");
      repo.git("repack", "-a", "-d", "-q");
      repo.git("prune-packed");
      const held = objectsOf(repo.root);
      expect(held.length).toBeGreaterThan(700);
      const indexes = packIndexesOf(join(repo.root, ".git", "objects"), held[0]!.length / 2);
      if (!indexes) throw new Error("a packed repository's indexes are read");
      const len = held[0]!.length / 2;
      expect(missingFrom(indexes, held, len)).toEqual([]);
      const absent = absentNear(held);
      expect(absent.length).toBeGreaterThan(held.length);
      expect(missingFrom(indexes, absent, len)).toEqual(absent);
      // mixed, in their order
      const mixed = held.flatMap((id, i) => [id, absent[i] as string]);
      expect(missingFrom(indexes, mixed, len)).toEqual(absent.slice(0, held.length));
      // an id of another length, or not hex, is not looked up
      expect(missingFrom(indexes, [held[0]!, held[1]!.slice(0, -2)], len)).toBeNull();
      expect(missingFrom(indexes, [held[0]!, "z".repeat(2 * len)], len)).toBeNull();
    });
  }

  test("a loose object, an alternate object directory or an index that is cut short or of version 1, or indexes over the budget, leave the answer to git; an index without its pack holds nothing, as for git", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 50; i++) repo.write(`f${i}.txt`, `file ${i}\n`);
    repo.commit("some");
    repo.git("repack", "-a", "-d", "-q");
    repo.git("prune-packed");
    const objects = join(repo.root, ".git", "objects");
    expect(packIndexesOf(objects, 20)).not.toBeNull();
    // an empty fan-out directory holds nothing
    mkdirSync(join(objects, "ab"), { recursive: true });
    expect(packIndexesOf(objects, 20)).not.toBeNull();
    writeFileSync(join(repo.root, "loose.txt"), "a loose one\n");
    const loose = repo.git("hash-object", "-w", "loose.txt").trim();
    expect(packIndexesOf(objects, 20)).toBeNull();
    rmSync(join(objects, loose.slice(0, 2)), { recursive: true });
    expect(packIndexesOf(objects, 20)).not.toBeNull();
    writeFileSync(join(objects, "info", "alternates"), "/nowhere\n");
    expect(packIndexesOf(objects, 20)).toBeNull();
    rmSync(join(objects, "info", "alternates"));
    const packDir = join(objects, "pack");
    const idx = readdirSync(packDir).find((n) => n.endsWith(".idx")) as string;
    const pack = idx.replace(/\.idx$/, ".pack");
    // version 1 in the pack's own index: no magic, a table of offsets and ids
    runGit(packDir, ["index-pack", "--index-version=1", "-o", "v1.idx", pack]);
    renameSync(join(packDir, idx), join(repo.root, "v2.idx"));
    renameSync(join(packDir, "v1.idx"), join(packDir, idx));
    expect(packIndexesOf(objects, 20)).toBeNull();
    renameSync(join(repo.root, "v2.idx"), join(packDir, idx));
    expect(packIndexesOf(objects, 20)).not.toBeNull();
    // an index without a pack beside it is skipped
    runGit(packDir, ["index-pack", "--index-version=1", "-o", "orphan.idx", pack]);
    expect(packIndexesOf(objects, 20)).toHaveLength(1);
    rmSync(join(packDir, "orphan.idx"));
    // an index without its pack holds nothing, as for git
    const held = objectsOf(repo.root);
    renameSync(join(packDir, pack), join(repo.root, "aside.pack"));
    expect(missingFrom(packIndexesOf(objects, 20) as PackIndex[], held, 20)).toEqual(held);
    renameSync(join(repo.root, "aside.pack"), join(packDir, pack));
    expect(missingFrom(packIndexesOf(objects, 20) as PackIndex[], held, 20)).toEqual([]);
    // indexes larger than the budget the caller gives are left to git
    expect(packIndexesOf(objects, 20, 100)).toBeNull();
    // the wrong id length for its size, then cut short
    expect(packIndexesOf(objects, 32)).toBeNull();
    chmodSync(join(packDir, idx), 0o644); // git makes it read-only
    truncateSync(join(packDir, idx), 8 + 1024 + 10);
    expect(packIndexesOf(objects, 20)).toBeNull();
  });
});

describe("the private store's import", () => {
  test("objects the user's packs hold are linked and the loose ones packed: every blob reads back after the user's objects are gone", async () => {
    await using repo = await tmpRepo();
    // more blobs than the store links packs for, then some left loose
    for (let i = 0; i < 2100; i++) repo.write(`p/f${i}.txt`, `packed ${i}\n`);
    repo.commit("packed");
    repo.git("repack", "-a", "-d", "-q");
    repo.git("prune-packed");
    for (let i = 0; i < 60; i++) repo.write(`l/f${i}.txt`, `loose ${i}\n`);
    repo.commit("loose");
    const blobs = repo.git("ls-files", "-s").trim().split("\n").map((l) => l.split(" ")[1] as string);
    const root = openRoot(repo.root);
    const store = new GitObjectStore(root.stateDir);
    await store.importFrom(root, blobs);
    // a second import of the same and more finds them held
    await store.importFrom(root, blobs);
    const contents = new Map(repo.git("ls-files", "-s").trim().split("\n").map((l) => [l.split(" ")[1] as string, l.split("\t")[1] as string]));
    rmSync(join(repo.root, ".git", "objects"), { recursive: true });
    mkdirSync(join(repo.root, ".git", "objects"));
    try {
      for (const oid of blobs) {
        const path = contents.get(oid) as string;
        const want = path.startsWith("p/") ? `packed ${path.slice(3, -4)}\n` : `loose ${path.slice(3, -4)}\n`;
        expect(new TextDecoder().decode(await store.read(oid))).toBe(want);
      }
    } finally {
      store.close();
    }
  });
});
