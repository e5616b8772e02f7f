import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../src/core/hash";
import { readLiveTree } from "../../src/ops/live/live-tree";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { readFile } from "../../src/ops/snapshot/file";
import { openWorkspace, type Workspace } from "../../src/ops/workspace";
import { captureEntries } from "../../src/repo/capture";
import { contentConversionPossible, directoriesOf, dirOf, listsAttributesFile } from "../../src/repo/content-conversion";
import { runGit, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

/**
 * Files written by a test are seconds old at most, so a real status start
 * never trusts them; a comparison time in the future makes every file count
 * as unchanged since, which is what exercises the trusted path.
 */
const FUTURE = () => Date.now() + 60_000;

async function captureBytes(ws: Workspace, gitComparedAt?: number): Promise<Map<string, string>> {
  const tree = await readLiveTree(ws);
  const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, { gitComparedAt });
  const out = new Map<string, string>();
  for (const e of captured.entries) out.set(e.path, new TextDecoder().decode(await ws.blobs.read(e.blob)));
  return out;
}

function freshStore(repo: TmpRepo): Workspace {
  rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
  return openWorkspace(repo.root);
}

describe("clean tracked files taken as their index blobs", () => {
  test("trusted and verified captures give the same entries, and the blob map learns every clean file", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`d${i % 4}/f${i}.txt`, `file ${i}\n`.repeat(i + 1));
    repo.write("run.sh", "#!/bin/sh\n", 0o755);
    repo.commit();
    const verified = await captureEntries(freshStore(repo).repo, openWorkspace(repo.root).blobs, (await readLiveTree(openWorkspace(repo.root))).entries);
    const ws = freshStore(repo);
    const trusted = await captureEntries(ws.repo, ws.blobs, (await readLiveTree(ws)).entries, { gitComparedAt: FUTURE() });
    expect(trusted.entries).toEqual(verified.entries);
    const oid = runGit(repo.root, ["rev-parse", "HEAD:d1/f1.txt"]).trim();
    expect(openWorkspace(repo.root).blobs.gitMap.get(oid)?.size).toBe("file 1\n".length * 2);
  });

  test("a file above the streaming threshold is trusted too, and reads back exactly", async () => {
    await using repo = await tmpRepo();
    const big = "0123456789abcdef".repeat(600_000); // 9.6 MB
    repo.write("big.txt", big);
    repo.commit();
    const ws = freshStore(repo);
    expect((await captureBytes(ws, FUTURE())).get("big.txt")).toBe(big);
  });

  test("eol conversion by attributes: the work tree's CRLF bytes are captured, not the LF index blob", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitattributes", "*.txt text eol=crlf\n");
    repo.write("crlf.txt", "one\ntwo\n");
    repo.commit();
    rmSync(join(repo.root, "crlf.txt"));
    runGit(repo.root, ["checkout", "--", "crlf.txt"]);
    expect(runGit(repo.root, ["status", "--porcelain"])).toBe("");
    expect((await captureBytes(freshStore(repo), FUTURE())).get("crlf.txt")).toBe("one\r\ntwo\r\n");
  });

  test("core.autocrlf without any attributes file: the work tree's bytes are captured", async () => {
    await using repo = await tmpRepo();
    runGit(repo.root, ["config", "core.autocrlf", "true"]);
    repo.write("a.txt", "one\r\ntwo\r\n");
    repo.commit();
    expect(runGit(repo.root, ["cat-file", "-p", "HEAD:a.txt"])).toBe("one\ntwo\n");
    rmSync(join(repo.root, "a.txt"));
    runGit(repo.root, ["checkout", "--", "a.txt"]);
    expect(runGit(repo.root, ["status", "--porcelain"])).toBe("");
    expect((await captureBytes(freshStore(repo), FUTURE())).get("a.txt")).toBe("one\r\ntwo\r\n");
  });

  test("assume-unchanged and skip-worktree files are read as they are on disk, never taken from the index", async () => {
    await using repo = await tmpRepo();
    repo.write("assumed.txt", "old!\n");
    repo.write("skipped.txt", "old!\n");
    repo.commit();
    runGit(repo.root, ["update-index", "--assume-unchanged", "assumed.txt"]);
    runGit(repo.root, ["update-index", "--skip-worktree", "skipped.txt"]);
    repo.write("assumed.txt", "new!\n");
    repo.write("skipped.txt", "new!\n");
    expect(runGit(repo.root, ["status", "--porcelain"])).toBe("");
    for (const at of [undefined, FUTURE()]) {
      const got = await captureBytes(freshStore(repo), at);
      expect(got.get("assumed.txt")).toBe("new!\n");
      expect(got.get("skipped.txt")).toBe("new!\n");
    }
    const snap = await createSnapshot(freshStore(repo), { paths: ["."] });
    const f = await readFile(openWorkspace(repo.root), { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "assumed.txt" });
    expect(f.content).toBe("new!\n");
  });

  test("a file changed after the comparison time is verified with git's hash, and its new bytes are captured", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "before\n");
    repo.commit();
    const ws = freshStore(repo);
    const tree = await readLiveTree(ws);
    // Changed after git status looked, with the comparison time in the past: never trusted.
    writeFileSync(join(repo.root, "a.txt"), "after!\n");
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, { gitComparedAt: Date.now() - 60_000 });
    const entry = captured.entries.find((e) => e.path === "a.txt");
    expect(new TextDecoder().decode(await ws.blobs.read(entry?.blob as never))).toBe("after!\n");
    const oid = runGit(repo.root, ["rev-parse", "HEAD:a.txt"]).trim();
    expect(ws.blobs.gitMap.get(oid)).toBeUndefined();
  });

  test("a cold snapshot reads ahead of git status and still takes modified files as they are", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, `v1 ${i}\n`);
    repo.commit();
    repo.write("f3.txt", "v2 3, longer\n");
    repo.write("new.txt", "untracked\n");
    const ws = freshStore(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    for (const [path, want] of [["f3.txt", "v2 3, longer\n"], ["f4.txt", "v1 4\n"], ["new.txt", "untracked\n"]]) {
      expect((await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: path as string })).content).toBe(want as string);
    }
    // The blob map was emptied but the state is known: the read ahead is cancelled and the answer is the same.
    rmSync(join(repo.root, ".mcp", "cache", "gitblobs.bin"));
    expect((await createSnapshot(openWorkspace(repo.root), { paths: ["."] })).snapshot_id).toBe(snap.snapshot_id);
  });
});

describe("a cold snapshot whose tree changed in runs after git's index was written", () => {
  test("every entry holds the bytes on disk: runs of modified files longer than the read ahead's look-ahead, symlinks, a file turned into a symlink, shared blobs, a changed neighbour, the first path of a shared blob modified long before", async () => {
    await using repo = await tmpRepo();
    // many paths per blob (the read ahead reads one and takes the others from git's index), and symlinks among them
    for (let i = 0; i < 120; i++) repo.write(`a/f${String(i).padStart(3, "0")}.txt`, `shared ${i % 7}\n`);
    for (let i = 0; i < 5; i++) repo.symlink(`a/l${i}`, `f00${i}.txt`);
    repo.write("b/tool.sh", "#!/bin/sh\necho hi\n", 0o755);
    // neighbours holding one blob, one of them changed later: taking a neighbour's read for a file would show
    for (let i = 0; i < 10; i++) repo.write(`c/g${i}.txt`, "same\n");
    repo.commit();
    // modified long before the capture (older than its cutoff): the first paths of two shared blobs, one of them
    // keeping its size; read ahead before the status is in, they must not lend those bytes to the other paths
    repo.write("a/f000.txt", "modified well before\n");
    repo.write("a/f001.txt", "SHARED 1\n");
    // old enough that the read ahead takes clean files as their index blobs
    await Bun.sleep(2100);
    // a run of 25 modified files in a row, another of 3, one turned into a symlink, one deleted
    for (let i = 30; i < 55; i++) repo.write(`a/f${String(i).padStart(3, "0")}.txt`, `changed ${i}\n`);
    for (let i = 80; i < 83; i++) repo.write(`a/f${String(i).padStart(3, "0")}.txt`, `shared ${(i + 1) % 7}\n`);
    rmSync(join(repo.root, "a/f100.txt"));
    repo.symlink("a/f100.txt", "f001.txt");
    rmSync(join(repo.root, "a/f101.txt"));
    repo.write("c/g5.txt", "same no more\n");
    const ws = freshStore(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const entries = ws.snapshots.load(snap.snapshot_id).entries;
    const onDisk = (path: string) => {
      const abs = join(repo.root, path);
      return lstatSync(abs).isSymbolicLink() ? readlinkSync(abs) : readFileSync(abs);
    };
    expect(entries.map((e) => e.path)).toEqual(
      [...Array.from({ length: 120 }, (_, i) => `a/f${String(i).padStart(3, "0")}.txt`).filter((p) => p !== "a/f101.txt"), ...Array.from({ length: 5 }, (_, i) => `a/l${i}`), "b/tool.sh", ...Array.from({ length: 10 }, (_, i) => `c/g${i}.txt`)].sort(),
    );
    for (const e of entries) expect([e.path, e.blob]).toEqual([e.path, blobIdOf(onDisk(e.path))]);
    expect(entries.find((e) => e.path === "a/f100.txt")?.mode).toBe("120000");
    expect(entries.find((e) => e.path === "b/tool.sh")?.mode).toBe("100755");
  });
});

describe("a cold snapshot's attributes check, made from the index listing it reads anyway", () => {
  test("a tracked attributes file deleted from the work tree still converts: the file's own bytes are captured, not its blob", async () => {
    await using repo = await tmpRepo();
    repo.write("sub/.gitattributes", "*.txt text eol=crlf\n");
    repo.write("sub/crlf.txt", "one\ntwo\n");
    for (let i = 0; i < 20; i++) repo.write(`plain/f${i}.txt`, `plain ${i}\n`);
    repo.commit();
    rmSync(join(repo.root, "sub/crlf.txt"));
    runGit(repo.root, ["checkout", "--", "sub/crlf.txt"]);
    // git still applies the attributes from the index; the work tree has no attributes file left to find
    rmSync(join(repo.root, "sub/.gitattributes"));
    expect(runGit(repo.root, ["status", "--porcelain"])).toBe(" D sub/.gitattributes\n");
    // older than the status's racy margin, so the read ahead would take every clean file as its index blob
    await Bun.sleep(2100);
    const ws = freshStore(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const read = async (path: string) => (await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path })).content;
    expect(await read("sub/crlf.txt")).toBe("one\r\ntwo\r\n");
    expect(await read("plain/f7.txt")).toBe("plain 7\n");
  });

  test("an attributes file is named by a listing exactly where git's pathspec finds one", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    const listing = () => spawnSync("git", ["ls-files", "-s", "-v", "-z"], { cwd: repo.root }).stdout as Buffer;
    const gitFinds = () => runGit(repo.root, ["ls-files", "-z", "--", ":(top,glob)**/.gitattributes"]) !== "";
    const cases: [string, string][] = [
      ["x.gitattributes", "not an attributes file"],
      [".gitattributes.bak", "nor this"],
      ["deep/.gitattributes/inside", "a directory of that name"],
      ["deep/er/.gitattributes", "*.c ident\n"],
      [".gitattributes", "* -text\n"],
    ];
    expect([listsAttributesFile(listing()), gitFinds()]).toEqual([false, false]);
    for (const [path, content] of cases) {
      repo.write(path, content);
      runGit(repo.root, ["add", "--", path]);
      expect([path, listsAttributesFile(listing())]).toEqual([path, gitFinds()]);
    }
    expect(listsAttributesFile(listing())).toBe(true);
    // out of the index again: neither finds one
    runGit(repo.root, ["rm", "-q", "--cached", "--", ".gitattributes", "deep/er/.gitattributes"]);
    expect([listsAttributesFile(listing()), gitFinds()]).toEqual([false, false]);
  });

  test("directoriesOf names each file's directory as dirOf does, once per run of files in one directory", () => {
    const names = ["a", "b", "ab", "a.b", "a-b", "é", "x"];
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let round = 0; round < 200; round++) {
      const files = Array.from({ length: next(40) }, () => ({
        path: Array.from({ length: 1 + next(4) }, () => names[next(names.length)]).join("/"),
      }));
      const want: string[] = [];
      for (const f of files) if (want.at(-1) !== dirOf(f.path) || want.length === 0) want.push(dirOf(f.path));
      expect(directoriesOf(files)).toEqual(want);
    }
  });
});

describe("contentConversionPossible", () => {
  async function possible(repo: TmpRepo, dirs = [""]): Promise<boolean> {
    return contentConversionPossible(openWorkspace(repo.root).repo, dirs);
  }

  test("no attributes anywhere and core.autocrlf unset: no conversion", async () => {
    await using repo = await tmpRepo();
    repo.write("src/a.txt", "a\n");
    repo.commit();
    expect(await possible(repo, ["src"])).toBe(false);
  });

  test("each attribute source, and core.autocrlf, makes conversion possible", async () => {
    await using repo = await tmpRepo();
    repo.write("src/deep/a.txt", "a\n");
    repo.commit();
    // A work tree .gitattributes in a parent of a file's directory, never committed.
    repo.write("src/.gitattributes", "*.txt text\n");
    expect(await possible(repo, ["src/deep"])).toBe(true);
    expect(await possible(repo, ["other"])).toBe(false);
    rmSync(join(repo.root, "src/.gitattributes"));
    // A committed one, even when deleted from the work tree.
    repo.write("lib/.gitattributes", "*.bin -text\n");
    repo.commit();
    rmSync(join(repo.root, "lib/.gitattributes"));
    expect(await possible(repo, ["src"])).toBe(true);
    runGit(repo.root, ["rm", "-q", "--cached", "lib/.gitattributes"]);
    expect(await possible(repo, ["src"])).toBe(false);
    // info/attributes; a comment-only file does not count.
    mkdirSync(join(repo.root, ".git", "info"), { recursive: true });
    writeFileSync(join(repo.root, ".git", "info", "attributes"), "# nothing\n\n");
    expect(await possible(repo, ["src"])).toBe(false);
    writeFileSync(join(repo.root, ".git", "info", "attributes"), "* filter=lfs\n");
    expect(await possible(repo, ["src"])).toBe(true);
    rmSync(join(repo.root, ".git", "info", "attributes"));
    // A global attributes file named by core.attributesFile.
    writeFileSync(join(repo.root, ".git", "global-attrs"), "*.c ident\n");
    runGit(repo.root, ["config", "core.attributesFile", join(repo.root, ".git", "global-attrs")]);
    expect(await possible(repo, ["src"])).toBe(true);
    runGit(repo.root, ["config", "--unset", "core.attributesFile"]);
    expect(await possible(repo, ["src"])).toBe(false);
    runGit(repo.root, ["config", "core.autocrlf", "input"]);
    expect(await possible(repo, ["src"])).toBe(true);
    runGit(repo.root, ["config", "core.autocrlf", "false"]);
    expect(await possible(repo, ["src"])).toBe(false);
  });
});
