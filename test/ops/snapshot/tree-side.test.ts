/**
 * A commit compared with a sparse checkout (tree-side.ts, repo/sparse-entries.ts): the files the checkout leaves
 * out are what the index holds, as git's status and `git diff` take them, and no blob outside the checkout is
 * read or fetched to say so; a comparison scoped to a directory reads the commit's blobs there only.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshotChanges } from "../../../src/ops/snapshot/changes";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotDiff } from "../../../src/ops/snapshot/diff";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { cli } from "../../helpers/binary";
import { INDEX_BUSY, answersWhileStaging } from "../../helpers/index-toggler";
import { runGit, tmpDir } from "../../helpers/tmp-repo";

const LETTER: Record<string, string> = { added: "A", modified: "M", deleted: "D", mode_changed: "M" };

/** An origin of three directories of 20 files each, two commits (the second edits b/ and c/), filters allowed. */
function origin(dir: string): string {
  const at = join(dir, "origin");
  mkdirSync(at);
  runGit(at, ["init", "-q", "-b", "main"]);
  for (const d of ["a", "b", "c"]) {
    mkdirSync(join(at, d));
    for (let i = 0; i < 20; i++) writeFileSync(join(at, d, `f${i}.txt`), `${d} ${i}\n`);
  }
  runGit(at, ["add", "-A"]);
  runGit(at, ["commit", "-qm", "first"]);
  writeFileSync(join(at, "b", "f1.txt"), "b one, edited\n");
  writeFileSync(join(at, "c", "new.txt"), "c new\n");
  runGit(at, ["add", "-A"]);
  runGit(at, ["commit", "-qm", "second"]);
  runGit(at, ["config", "uploadpack.allowFilter", "true"]);
  return at;
}

/** `git diff --name-status <args>` as {path: letter}. */
function gitNameStatus(cwd: string, ...args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of runGit(cwd, ["diff", "--no-renames", "--name-status", ...args]).split("\n").filter(Boolean)) {
    const [status, path] = l.split("\t") as [string, string];
    out[path] = status;
  }
  return out;
}

async function changesOf(ws: Workspace, from: string, to: string, paths?: string[]): Promise<Record<string, string>> {
  const r = await snapshotChanges(ws, { from, to, ...(paths ? { paths } : {}) });
  return Object.fromEntries(r.changes.map((c) => [c.path, LETTER[c.status] as string]));
}

function withWorkspace<T>(root: string, run: (ws: Workspace) => Promise<T>): Promise<T> {
  const ws = openWorkspace(root);
  return run(ws).finally(() => closeWorkspace(ws));
}

describe("a commit against a sparse checkout", () => {
  test("HEAD -> worktree lists what `git diff HEAD` lists: the checkout's own edits, and entries outside it as the index holds them", async () => {
    await using dir = tmpDir("ws-sparse-");
    const from = origin(dir.path);
    const clone = join(dir.path, "clone");
    runGit(dir.path, ["clone", "-q", "--sparse", from, clone]);
    runGit(clone, ["sparse-checkout", "set", "a"]);
    writeFileSync(join(clone, "a", "f0.txt"), "a zero, edited\n");
    writeFileSync(join(clone, "a", "untracked.txt"), "new\n");
    // outside the checkout: a staged change to a file, and a file only the index holds, both kept skip-worktree
    const oid = runGit(clone, ["rev-parse", "HEAD:b/f2.txt"]).trim();
    const staged = Bun.spawnSync(["git", "hash-object", "-w", "--stdin"], { cwd: clone, stdin: new Blob(["staged outside\n"]) }).stdout.toString().trim();
    runGit(clone, ["update-index", "--cacheinfo", `100644,${staged},b/f3.txt`]);
    runGit(clone, ["update-index", "--skip-worktree", "b/f3.txt"]);
    runGit(clone, ["update-index", "--add", "--cacheinfo", `100644,${oid},c/only-in-index.txt`]);
    runGit(clone, ["update-index", "--skip-worktree", "c/only-in-index.txt"]);

    const expected: Record<string, string> = { ...gitNameStatus(clone, "HEAD"), "a/untracked.txt": "A" };
    expect(expected).toEqual({ "a/f0.txt": "M", "a/untracked.txt": "A", "b/f3.txt": "M", "c/only-in-index.txt": "A" });
    await withWorkspace(clone, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual(expected);
      // reversed: the same paths, added and deleted swapped
      expect(await changesOf(ws, "worktree", "HEAD")).toEqual({ ...expected, "a/untracked.txt": "D", "c/only-in-index.txt": "D" });
      // a snapshot of the checkout is compared the same way
      const snap = await createSnapshot(ws, { paths: ["."] });
      expect(await changesOf(ws, "HEAD", snap.snapshot_id)).toEqual(expected);
      // the text: the index's content for the staged file, nothing for the 57 files outside the checkout
      const diff = await snapshotDiff(ws, { from: "HEAD", to: "worktree" });
      expect(diff.diff).toContain("-b 3\n+staged outside\n");
      expect(diff.diff).not.toContain("deleted file");
      // an older commit: what changed outside the checkout since is told as git tells it
      expect(await changesOf(ws, "HEAD~1", "worktree")).toEqual({ ...gitNameStatus(clone, "HEAD~1"), "a/untracked.txt": "A" });
    });
  });

  test("a partial clone whose remote is gone: HEAD -> worktree answers from the checkout alone (it needed every blob outside it)", async () => {
    await using dir = tmpDir("ws-sparse-partial-");
    const from = origin(dir.path);
    const clone = join(dir.path, "clone");
    runGit(dir.path, ["clone", "-q", "--filter=blob:none", "--sparse", `file://${from}`, clone]);
    runGit(clone, ["sparse-checkout", "set", "a"]);
    renameSync(from, `${from}.gone`);
    writeFileSync(join(clone, "a", "f5.txt"), "a five, edited\n");
    await withWorkspace(clone, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "a/f5.txt": "M" });
      const diff = await snapshotDiff(ws, { from: "HEAD", to: "worktree" });
      expect(diff.counts).toMatchObject({ total: 1, modified: 1 });
      // scoped to the checkout, an older commit needs no blob outside it either (b/ and c/ changed since)
      expect(await changesOf(ws, "HEAD~1", "HEAD", ["a"])).toEqual({});
    });
    // and through the binary
    const r = cli(["snapshot", "changes", "HEAD", "worktree", "--root", clone, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json().changes).toEqual([{ path: "a/f5.txt", status: "modified" }]);
  });

  test("without a sparse checkout nothing changes: a deleted tracked file is deleted, a skip-worktree file present on disk is compared as it is", async () => {
    await using dir = tmpDir("ws-sparse-none-");
    const from = origin(dir.path);
    const clone = join(dir.path, "clone");
    runGit(dir.path, ["clone", "-q", from, clone]);
    Bun.spawnSync(["rm", join(clone, "b", "f4.txt")]);
    // flagged by hand but still on disk, and edited: read like any file git does not vouch for
    runGit(clone, ["update-index", "--skip-worktree", "c/f6.txt"]);
    writeFileSync(join(clone, "c", "f6.txt"), "c six, edited behind the flag\n");
    await withWorkspace(clone, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "b/f4.txt": "D", "c/f6.txt": "M" });
      // an index of version 4 (feature.manyFiles) without the flag: the same
      runGit(clone, ["update-index", "--no-skip-worktree", "c/f6.txt"]);
      runGit(clone, ["update-index", "--index-version", "4"]);
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "b/f4.txt": "D", "c/f6.txt": "M" });
    });
  });
});

describe("a commit a shallow clone does not hold", () => {
  test("HEAD~1 in a clone of depth 1 (a CI checkout's default) is NOT_FOUND saying the clone is shallow and how to fetch more; a name that is no commit anywhere is told as before", async () => {
    await using dir = tmpDir("ws-shallow-");
    const from = origin(dir.path);
    const clone = join(dir.path, "clone");
    runGit(dir.path, ["clone", "-q", "--depth", "1", `file://${from}`, clone]);
    await withWorkspace(clone, async (ws) => {
      const err = await snapshotChanges(ws, { from: "HEAD~1", to: "worktree" }).catch((e) => e);
      expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "shallow_clone", side: "HEAD~1" } });
      expect(err.message).toContain("git fetch --deepen=N");
      const other = await snapshotChanges(ws, { from: "no-such-branch", to: "worktree" }).catch((e) => e);
      expect(other.code).toBe("NOT_FOUND");
      expect(other.details.reason).toBeUndefined();
      runGit(clone, ["fetch", "-q", "--deepen=1"]);
      expect(await changesOf(ws, "HEAD~1", "HEAD")).toEqual({ "b/f1.txt": "M", "c/new.txt": "A" });
    });
  });
});

describe("a commit's directory that is a file in the work tree", () => {
  test("regression (INTERNAL: ENOTDIR for d/.gitattributes): HEAD -> worktree where a directory became a file and a file a directory is what git tells, with the new files added", async () => {
    await using dir = tmpDir("ws-dir-to-file-");
    const root = join(dir.path, "repo");
    mkdirSync(join(root, "d"), { recursive: true });
    runGit(root, ["init", "-q", "-b", "main"]);
    writeFileSync(join(root, "d", "x"), "in\n");
    writeFileSync(join(root, "a"), "file\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "first"]);
    Bun.spawnSync(["rm", "-r", join(root, "d"), join(root, "a")]);
    writeFileSync(join(root, "d"), "now a file\n");
    mkdirSync(join(root, "a"));
    writeFileSync(join(root, "a", "b"), "nested\n");
    await withWorkspace(root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ a: "D", "a/b": "A", d: "A", "d/x": "D" });
      const diff = await snapshotDiff(ws, { from: "HEAD", to: "worktree" });
      expect(diff.counts).toMatchObject({ added: 2, deleted: 2, total: 4 });
    });
  });
});

describe("a commit against a work tree git converts", () => {
  async function converted(setup: (root: string) => void): Promise<{ root: string } & AsyncDisposable> {
    const dir = tmpDir("ws-convert-");
    const root = join(dir.path, "repo");
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    setup(root);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "first"]);
    // checked out again: the work tree holds what git's conversion makes of the blobs
    runGit(root, ["rm", "-q", "--cached", "-r", "."]);
    for (const f of runGit(root, ["ls-tree", "-r", "--name-only", "HEAD"]).split("\n").filter(Boolean)) Bun.spawnSync(["rm", join(root, f)]);
    runGit(root, ["reset", "-q", "--hard"]);
    return { root, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() };
  }

  test("eol attributes and core.autocrlf: files git holds unchanged are no change, an edited one is; both directions; what git diff names", async () => {
    await using repo = await converted((root) => {
      writeFileSync(join(root, ".gitattributes"), "*.bat text eol=crlf\n");
      writeFileSync(join(root, "run.bat"), "@echo off\necho hi\n");
      writeFileSync(join(root, "tool.bat"), "@echo off\necho tool\n");
      writeFileSync(join(root, "plain.txt"), "plain\n");
    });
    expect(Bun.file(join(repo.root, "run.bat")).size).toBe(20); // CRLF in the work tree, LF in the blob
    await withWorkspace(repo.root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({});
      writeFileSync(join(repo.root, "tool.bat"), "@echo off\r\necho changed\r\n");
      writeFileSync(join(repo.root, "new.bat"), "new\r\n");
      const want = { "new.bat": "A", "tool.bat": "M" };
      expect({ ...gitNameStatus(repo.root, "HEAD"), "new.bat": "A" }).toEqual(want);
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual(want);
      expect(await changesOf(ws, "worktree", "HEAD")).toEqual({ "new.bat": "D", "tool.bat": "M" });
    });
    runGit(repo.root, ["config", "core.autocrlf", "true"]);
    runGit(repo.root, ["checkout", "--", "tool.bat"]);
    Bun.spawnSync(["rm", join(repo.root, "plain.txt"), join(repo.root, "new.bat")]);
    runGit(repo.root, ["checkout", "--", "plain.txt"]);
    expect(Bun.file(join(repo.root, "plain.txt")).size).toBe(7); // "plain\r\n"
    await withWorkspace(repo.root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({});
    });
  });

  test("core.autocrlf over more files than are looked into one by one: git is asked once about the whole tree; the edited ones are the changes", async () => {
    await using repo = await converted((root) => {
      runGit(root, ["config", "core.autocrlf", "true"]);
      for (let i = 0; i < 300; i++) writeFileSync(join(root, `f${String(i).padStart(3, "0")}.txt`), `line ${i}\nmore\n`);
    });
    expect(readFileSync(join(repo.root, "f000.txt"), "utf8")).toBe("line 0\r\nmore\r\n");
    await withWorkspace(repo.root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({});
      writeFileSync(join(repo.root, "f007.txt"), "edited\r\n");
      writeFileSync(join(repo.root, "f250.txt"), "edited without a CR\n");
      expect(gitNameStatus(repo.root, "HEAD")).toEqual({ "f007.txt": "M", "f250.txt": "M" });
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "f007.txt": "M", "f250.txt": "M" });
    });
  });

  test("a clean filter (as Git LFS's): a file the filter turns into the blob is no change; an edited one is", async () => {
    await using repo = await converted((root) => {
      runGit(root, ["config", "filter.flip.clean", "rev"]);
      runGit(root, ["config", "filter.flip.smudge", "rev"]);
      writeFileSync(join(root, ".gitattributes"), "*.dat filter=flip\n");
      writeFileSync(join(root, "a.dat"), "abc\ndef\n");
      writeFileSync(join(root, "b.dat"), "ghi\n");
    });
    expect(readFileSync(join(repo.root, "a.dat"), "utf8")).toBe("abc\ndef\n");
    expect(runGit(repo.root, ["cat-file", "-p", "HEAD:a.dat"])).toBe("cba\nfed\n");
    await withWorkspace(repo.root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({});
      writeFileSync(join(repo.root, "b.dat"), "xyz\n");
      expect(gitNameStatus(repo.root, "HEAD")).toEqual({ "b.dat": "M" });
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "b.dat": "M" });
    });
  });
});

describe("a file git converts, compared in the form git checks it out here", () => {
  test("regression (every line of an edited CRLF file shown changed): the diff shows the edited line, applies to the work tree, and its reverse gives back git's checkout; a smudge filter never runs", async () => {
    await using dir = tmpDir("ws-checkout-form-");
    const root = join(dir.path, "repo");
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    writeFileSync(join(root, ".gitattributes"), "*.bat text eol=crlf\n*.dat filter=flip\n");
    runGit(root, ["config", "filter.flip.clean", "rev"]);
    runGit(root, ["config", "filter.flip.smudge", "rev"]);
    writeFileSync(join(root, "run.bat"), "@echo off\necho one\necho two\necho three\n");
    writeFileSync(join(root, "a.dat"), "abc\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "first"]);
    Bun.spawnSync(["rm", join(root, "run.bat")]);
    runGit(root, ["checkout", "--", "run.bat"]);
    const checkedOut = readFileSync(join(root, "run.bat"));
    expect(checkedOut.toString()).toBe("@echo off\r\necho one\r\necho two\r\necho three\r\n");
    // from now on a smudge would leave a mark: nothing here may run it
    const mark = join(dir.path, "smudged");
    runGit(root, ["config", "filter.flip.smudge", `sh -c 'touch ${mark}; rev'`]);
    writeFileSync(join(root, "run.bat"), "@echo off\r\necho one\r\necho TWO\r\necho three\r\n");
    writeFileSync(join(root, "a.dat"), "xyz\n");
    expect(gitNameStatus(root, "HEAD")).toEqual({ "a.dat": "M", "run.bat": "M" });
    const patch = join(dir.path, "back.patch");
    await withWorkspace(root, async (ws) => {
      expect(await changesOf(ws, "HEAD", "worktree")).toEqual({ "a.dat": "M", "run.bat": "M" });
      const diff = (await snapshotDiff(ws, { from: "HEAD", to: "worktree", paths: ["run.bat"] })).diff;
      expect(diff).toContain(" echo one\r\n-echo two\r\n+echo TWO\r\n echo three\r\n");
      expect(diff).not.toContain("-@echo off");
      // git's own diff shows the same edit (in its stored form, without the CRs)
      expect(runGit(root, ["diff", "HEAD", "--", "run.bat"])).toContain(" echo one\n-echo two\n+echo TWO\n echo three\n");
      writeFileSync(patch, (await snapshotDiff(ws, { from: "worktree", to: "HEAD", paths: ["run.bat"] })).diff);
    });
    const applied = cli(["apply", patch, "--root", root]);
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(root, "run.bat"))).toEqual(checkedOut);
    expect(gitNameStatus(root, "HEAD")).toEqual({ "a.dat": "M" });
    expect(Bun.spawnSync(["test", "-e", mark]).exitCode).toBe(1);
  });

  test("core.autocrlf=true: an edited file's diff is its edited lines, in both directions", async () => {
    await using dir = tmpDir("ws-checkout-form-");
    const root = join(dir.path, "repo");
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    runGit(root, ["config", "core.autocrlf", "true"]);
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    writeFileSync(join(root, "notes.txt"), `${lines.join("\n")}\n`);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "first"]);
    Bun.spawnSync(["rm", join(root, "notes.txt")]);
    runGit(root, ["checkout", "--", "notes.txt"]);
    lines[20] = "line twenty, edited";
    writeFileSync(join(root, "notes.txt"), `${lines.join("\r\n")}\r\n`);
    await withWorkspace(root, async (ws) => {
      for (const [from, to, sign] of [["HEAD", "worktree", "+"], ["worktree", "HEAD", "-"]] as const) {
        const diff = (await snapshotDiff(ws, { from, to })).diff;
        const changed = diff.split("\n").filter((l) => /^[-+][^-+]/.test(l));
        expect(changed).toEqual(sign === "+" ? ["-line 20\r", "+line twenty, edited\r"] : ["-line twenty, edited\r", "+line 20\r"]);
      }
    });
  });
});

describe("a commit against the work tree, its files told from the index (revision-via-index.ts)", () => {
  /** What `snapshot_changes <rev> worktree` must say: git's diff of the commit with the work tree, and the untracked files. */
  function expectedOf(root: string, rev: string, untracked: string[], scope?: string): Record<string, string> {
    // a type change (a file become a symlink) is a change of mode here
    const out = Object.fromEntries(Object.entries(gitNameStatus(root, rev, ...(scope ? ["--", scope] : []))).map(([p, s]) => [p, s === "T" ? "M" : s]));
    for (const u of untracked) if (!scope || u.startsWith(`${scope}/`)) out[u] = "A";
    return out;
  }

  test("staged and unstaged edits, intent-to-add, a mode change, a file become a symlink, an unmerged merge: each commit as git diff tells it, again in one workspace as the index changes", async () => {
    await using dir = tmpDir("ws-via-index-");
    const root = join(dir.path, "repo");
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    const write = (path: string, text: string) => {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    for (let i = 0; i < 30; i++) write(`d${i % 3}/f${i}.txt`, `file ${i}\n`);
    write("shared.txt", "base\n");
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "one"]);
    write("d0/f0.txt", "two\n");
    write("d1/added-in-two.txt", "two\n");
    runGit(root, ["rm", "-q", "d2/f2.txt"]);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "two"]);
    runGit(root, ["checkout", "-q", "-b", "other"]);
    write("shared.txt", "other\n");
    runGit(root, ["commit", "-qam", "other"]);
    runGit(root, ["checkout", "-q", "main"]);
    write("shared.txt", "main\n");
    runGit(root, ["commit", "-qam", "three"]);
    expect(() => runGit(root, ["merge", "-q", "other"])).toThrow(/merge/);

    write("d0/f3.txt", "staged\n");
    runGit(root, ["add", "d0/f3.txt"]);
    write("d0/f3.txt", "staged, then edited again\n");
    write("d1/f4.txt", "unstaged\n");
    write("d1/ita.txt", "intent to add\n");
    runGit(root, ["add", "-N", "d1/ita.txt"]);
    runGit(root, ["update-index", "--chmod=+x", "d2/f5.txt"]);
    Bun.spawnSync(["rm", join(root, "d2/f8.txt")]);
    Bun.spawnSync(["ln", "-s", "f5.txt", join(root, "d2/f8.txt")]);
    write("d2/untracked.txt", "untracked\n");
    const untracked = ["d2/untracked.txt"];

    await withWorkspace(root, async (ws) => {
      for (const rev of ["HEAD", "HEAD~1", "HEAD~2", "other"]) {
        expect({ rev, changes: await changesOf(ws, rev, "worktree") }).toEqual({ rev, changes: expectedOf(root, rev, untracked) });
        expect({ rev, changes: await changesOf(ws, rev, "worktree", ["d0"]) }).toEqual({ rev, changes: expectedOf(root, rev, untracked, "d0") });
      }
      // the merge concluded and more staged: the same workspace (a server's) tells the new state
      write("shared.txt", "resolved\n");
      runGit(root, ["add", "shared.txt"]);
      runGit(root, ["commit", "-qm", "merged"]);
      runGit(root, ["add", "d1/f4.txt"]);
      runGit(root, ["rm", "-q", "d0/f6.txt"]);
      for (const rev of ["HEAD", "HEAD~1", "HEAD~3"]) {
        expect({ rev, changes: await changesOf(ws, rev, "worktree") }).toEqual({ rev, changes: expectedOf(root, rev, untracked) });
        expect({ rev, changes: await changesOf(ws, "worktree", rev, ["d1"]) }).toEqual({
          rev,
          changes: Object.fromEntries(Object.entries(expectedOf(root, rev, untracked, "d1")).map(([p, s]) => [p, s === "A" ? "D" : s === "D" ? "A" : s])),
        });
      }
    });
  });
});

describe("a commit against the work tree while the index changes", () => {
  test("staged and unstaged over and over beside the comparisons: every answer is the work tree's change, whichever index each read saw", async () => {
    await using dir = tmpDir("ws-index-race-");
    const root = join(dir.path, "repo");
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    for (let i = 0; i < 200; i++) writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-qm", "one"]);
    writeFileSync(join(root, "f7.txt"), "edited\n");
    await withWorkspace(root, async (ws) => {
      const right = JSON.stringify({ "f7.txt": "M" });
      const ask = async () => JSON.stringify(await changesOf(ws, "HEAD", "worktree"));
      // a second process stages and unstages the edit over and over: an index replaced during every read is
      // refused as BUSY (a refusal to retry), never answered wrong
      const seen = await answersWhileStaging(root, ["f7.txt"], ask);
      expect(seen.filter((s) => s !== right && s !== INDEX_BUSY)).toEqual([]);
      runGit(root, ["add", "f7.txt"]);
      expect(await ask()).toBe(right);
      runGit(root, ["reset", "-q", "f7.txt"]);
      expect(await ask()).toBe(right);
    });
  });
});
