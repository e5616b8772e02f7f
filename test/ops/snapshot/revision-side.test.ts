import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../../src/core/errors";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotChanges } from "../../../src/ops/snapshot/changes";
import { snapshotDiff } from "../../../src/ops/snapshot/diff";
import { readFile } from "../../../src/ops/snapshot/file";
import { IndexedBlobs } from "../../../src/ops/snapshot/revision-side";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

/** `git diff --name-status` as {path: letter}, renames off (worksnap detects none). */
function gitNameStatus(repo: TmpRepo, ...sides: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of repo.git("diff", "--no-renames", "--name-status", ...sides).split("\n").filter(Boolean)) {
    const [status, path] = l.split("\t") as [string, string];
    out[path] = status;
  }
  return out;
}

/** `git diff --numstat` as {path: "added removed"}. */
function gitNumstat(repo: TmpRepo, ...sides: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of repo.git("diff", "--no-renames", "--numstat", ...sides).split("\n").filter(Boolean)) {
    const [a, d, path] = l.split("\t") as [string, string, string];
    out[path] = `${a} ${d}`;
  }
  return out;
}

/** The same counts from worksnap's own diff text. */
function numstatOf(diff: string): Record<string, string> {
  const out: Record<string, string> = {};
  let path = "";
  for (const l of diff.split("\n")) {
    const m = /^diff --git a\/(.*) b\/(.*)$/.exec(l);
    if (m) {
      path = m[2] as string;
      out[path] = "0 0";
      continue;
    }
    if (l.startsWith("+++ ") || l.startsWith("--- ")) continue;
    const [a, d] = (out[path] ?? "0 0").split(" ").map(Number) as [number, number];
    if (l.startsWith("+")) out[path] = `${a + 1} ${d}`;
    else if (l.startsWith("-")) out[path] = `${a} ${d + 1}`;
  }
  return out;
}

const LETTER: Record<string, string> = { added: "A", modified: "M", deleted: "D", mode_changed: "M" };

function seed(repo: TmpRepo): void {
  repo.write("keep.txt", "same\n");
  repo.write("edit.txt", "one\ntwo\nthree\n");
  repo.write("gone.txt", "bye\n");
  repo.write("run.sh", "#!/bin/sh\necho hi\n");
  repo.write("src/a.ts", "export const a = 1;\n");
  repo.symlink("link", "keep.txt");
}

describe("git revisions as sides", () => {
  test("HEAD -> worktree lists what `git diff HEAD` lists (untracked files as added), with the same line counts", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit("first");
    repo.write("edit.txt", "one\n2\nthree\nfour\n");
    rmSync(join(repo.root, "gone.txt"));
    chmodSync(join(repo.root, "run.sh"), 0o755);
    repo.write("staged.ts", "new\n");
    repo.git("add", "staged.ts");
    repo.write("untracked.md", "notes\n");
    unlinkSync(join(repo.root, "link"));
    symlinkSync("src/a.ts", join(repo.root, "link"));
    using ws = wsOf(repo);

    const r = await snapshotChanges(ws, { from: "HEAD", to: "worktree" });
    expect(r.cache_hint).toBe("until_dirty");
    expect(r.from).toBe(repo.git("rev-parse", "HEAD").trim());
    const ours = Object.fromEntries(r.changes.map((c) => [c.path, LETTER[c.status]]));
    expect(ours).toEqual({ ...gitNameStatus(repo, "HEAD"), "untracked.md": "A" });
    expect(r.changes.find((c) => c.path === "run.sh")).toEqual({ path: "run.sh", status: "mode_changed", old_mode: "100644", new_mode: "100755" });

    const d = await snapshotDiff(ws, { from: "HEAD", to: "worktree" });
    const counted = numstatOf(d.diff);
    delete counted["untracked.md"];
    expect(counted).toEqual(gitNumstat(repo, "HEAD"));
  });

  test("two revisions (HEAD~1, a branch, a tag, a 12-hex commit prefix) give git's answer, immutable, nothing checked out", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const first = repo.commit("first");
    repo.git("tag", "v1");
    repo.git("branch", "old");
    repo.write("edit.txt", "one\nTWO\nthree\n");
    repo.write("src/b.ts", "export const b = 2;\n");
    rmSync(join(repo.root, "gone.txt"));
    repo.commit("second");
    repo.write("edit.txt", "uncommitted\n");
    const before = readFileSync(join(repo.root, "edit.txt"), "utf8");
    using ws = wsOf(repo);

    const expected = gitNameStatus(repo, "HEAD~1", "HEAD");
    for (const from of ["HEAD~1", "old", "v1", first.slice(0, 12)]) {
      const r = await snapshotChanges(ws, { from, to: "HEAD" });
      expect(r.cache_hint).toBe("immutable");
      expect(r.from).toBe(first);
      expect(Object.fromEntries(r.changes.map((c) => [c.path, LETTER[c.status]]))).toEqual(expected);
    }
    const d = await snapshotDiff(ws, { from: "v1", to: "main" });
    expect(numstatOf(d.diff)).toEqual(gitNumstat(repo, "v1", "main"));
    expect(readFileSync(join(repo.root, "edit.txt"), "utf8")).toBe(before);
    expect(repo.git("status", "--porcelain")).toBe(" M edit.txt\n");
    await expect(snapshotChanges(ws, { from: "HEAD~1", to: "HEAD", lease_id: "lease_0123456789ab" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  test("a revision side takes no lock: it works while the user holds .git/index.lock, and leaves it in place", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit("first");
    repo.write("edit.txt", "changed\n");
    repo.commit("second");
    writeFileSync(join(repo.root, ".git", "index.lock"), "");
    using ws = wsOf(repo);
    const r = await snapshotChanges(ws, { from: "HEAD~1", to: "HEAD" });
    expect(r.changes).toEqual([{ path: "edit.txt", status: "modified" }]);
    expect(existsSync(join(repo.root, ".git", "index.lock"))).toBe(true);
  });

  test("a gitlink in a commit is not descended into, as on every other side", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const first = repo.commit("first");
    repo.git("update-index", "--add", "--cacheinfo", `160000,${first},vendor/sub`);
    repo.git("commit", "-q", "-m", "submodule");
    using ws = wsOf(repo);
    const r = await snapshotChanges(ws, { from: "HEAD~1", to: "HEAD" });
    expect(r.changes).toEqual([]);
  });

  test("pages of a revision comparison follow one another with the cursor", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 5; i++) repo.write(`f${i}.txt`, `${i}\n`);
    repo.commit("first");
    for (let i = 0; i < 5; i++) repo.write(`f${i}.txt`, `${i}!\n`);
    repo.commit("second");
    using ws = wsOf(repo);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await snapshotChanges(ws, { from: "HEAD~1", to: "HEAD", limit: 2, cursor });
      seen.push(...r.changes.map((c) => c.path));
      cursor = r.cursor;
    } while (cursor);
    expect(seen).toEqual(["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
  });

  test("a hex name that is both a snapshot prefix and a commit is refused, and each can be named on its own", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit("first");
    using ws = wsOf(repo);
    const snap = (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
    const prefix = snap.slice(7, 19);
    repo.write("edit.txt", "changed\n");
    repo.commit("second");
    repo.git("branch", prefix, "HEAD~1");

    const both = await snapshotChanges(ws, { from: prefix, to: "HEAD" }).catch((e) => e);
    expect(both).toBeInstanceOf(WorksnapError);
    expect(both.code).toBe("INVALID_ARGUMENT");
    expect(both.message).toContain(`"sha256:${prefix}"`);
    expect((await snapshotChanges(ws, { from: `sha256:${prefix}`, to: "HEAD" })).from).toBe(snap);
    expect((await snapshotChanges(ws, { from: `${prefix}^{commit}`, to: "HEAD" })).from).toBe(repo.git("rev-parse", "HEAD~1").trim());
  });

  test("names that are no snapshot and no commit are NOT_FOUND; an option-like name is never passed to git as an option", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit("first");
    using ws = wsOf(repo);
    for (const from of ["no-such-branch", "HEAD~5", "deadbeefdeadbeef", "--output=/tmp/x", "-h"]) {
      await expect(snapshotChanges(ws, { from, to: "worktree" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    await expect(snapshotChanges(ws, { from: "sha256:deadbeefdeadbeef", to: "worktree" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  test("outside git a revision is NOT_FOUND and says why", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    using ws = wsOf(repo);
    const err = await snapshotChanges(ws, { from: "HEAD", to: "worktree" }).catch((e) => e);
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toContain("not a git repository");
  });

  test("regression: where git converts content (core.autocrlf), a revision holds git's bytes and does not teach a capture the wrong content; against the work tree the file is unchanged, as git compares it", async () => {
    await using repo = await tmpRepo();
    repo.git("config", "core.autocrlf", "true");
    repo.write("crlf.txt", "a\nb\n");
    repo.commit("first");
    rmSync(join(repo.root, "crlf.txt"));
    repo.git("checkout", "--", "crlf.txt");
    expect(readFileSync(join(repo.root, "crlf.txt"), "utf8")).toBe("a\r\nb\r\n");
    using ws = wsOf(repo);

    const r = await snapshotChanges(ws, { from: "HEAD", to: "worktree" });
    expect(r.changes).toEqual([]);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const read = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "crlf.txt" });
    expect(read.content).toBe("a\r\nb\r\n");
    // a snapshot holds bytes, which git's verdict on the work tree says nothing of: compared with the commit by them
    expect((await snapshotChanges(ws, { from: "HEAD", to: snap.snapshot_id })).changes).toEqual([{ path: "crlf.txt", status: "modified" }]);
  });
});

describe("IndexedBlobs: the work tree capture's blobs looked up by path and git blob id", () => {
  const entry = (path: string, gitOid?: string) => ({ path, mode: "100644" as const, ...(gitOid ? { gitOid } : {}) });
  const side = (path: string, n: number) => ({ path, mode: "100644" as const, blob: `sha256:${String(n).padStart(64, "0")}` as const });

  test("answers the same in any order of asking, only where the capture took the index blob that is asked for", () => {
    const candidates = [entry("a", "oa"), entry("b/c", "ob"), entry("b/d"), entry("e", "oe"), entry("\u{1F600}", "of")];
    // "b/d" is named by git's status (no blob id), "e" was read and found to differ from its index blob
    const captured = candidates.map((c, i) => side(c.path, i));
    const told = (order: [string, string][]) => {
      const indexed = new IndexedBlobs(candidates, captured, new Set(["e"]));
      return Object.fromEntries(order.map(([p, o]) => [`${p} ${o}`, indexed.blobOf(p, o) ?? null]));
    };
    const asks: [string, string][] = [
      ["a", "oa"],
      ["a", "other"],
      ["b/c", "ob"],
      ["b/d", "od"],
      ["e", "oe"],
      ["missing", "om"],
      ["\u{1F600}", "of"],
    ];
    const expected = {
      "a oa": side("a", 0).blob,
      "a other": null,
      "b/c ob": side("b/c", 1).blob,
      "b/d od": null,
      "e oe": null,
      "missing om": null,
      "\u{1F600} of": side("\u{1F600}", 4).blob,
    };
    expect(told(asks)).toEqual(expected);
    expect(told([...asks].reverse())).toEqual(expected);
    expect(told([asks[6], asks[0], asks[2], asks[1], asks[5]] as [string, string][])).toEqual({
      "\u{1F600} of": expected["\u{1F600} of"],
      "a oa": expected["a oa"],
      "b/c ob": expected["b/c ob"],
      "a other": null,
      "missing om": null,
    });
  });

  test("where some candidates vanished (fewer captured entries than candidates), each path still gets its own blob", () => {
    const candidates = [entry("a", "oa"), entry("gone", "og"), entry("z", "oz")];
    const captured = [side("a", 0), side("z", 2)];
    const indexed = new IndexedBlobs(candidates, captured, new Set());
    expect(indexed.blobOf("z", "oz")).toBe(side("z", 2).blob);
    expect(indexed.blobOf("gone", "og")).toBeUndefined();
    expect(indexed.blobOf("a", "oa")).toBe(side("a", 0).blob);
  });
});
