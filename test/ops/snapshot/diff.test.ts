import { describe, expect, test } from "bun:test";
import { chmodSync, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotDiff, type DiffResult } from "../../../src/ops/snapshot/diff";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { tmpDir, tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

/** A small deterministic PRNG so every run generates the same edits. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ["alpha", "beta", "gamma", "δέλτα", "日本語", "emoji 😀", "  indented", "\ttabbed", "", "x = 1;", "}", "naïve café"];

function genText(r: () => number, lines: number, crlf: boolean, finalNewline: boolean): string {
  const eol = crlf ? "\r\n" : "\n";
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`${WORDS[Math.floor(r() * WORDS.length)]} ${i}`);
  const body = out.join(eol);
  return lines === 0 ? "" : finalNewline ? body + eol : body;
}

/** Rewrites a text file with one of many edit kinds. */
function editText(r: () => number, text: string, kind: number): string {
  const lines = text.split("\n");
  switch (kind) {
    case 0: // insert at start
      return `inserted first line\n${text}`;
    case 1: // insert at end (after a missing final newline too)
      return text.endsWith("\n") || text === "" ? `${text}appended\n` : `${text}\nappended`;
    case 2: // delete everything
      return "";
    case 3: // drop the final newline
      return text.replace(/\r?\n$/, "");
    case 4: // add a final newline
      return text.endsWith("\n") ? text : `${text}\n`;
    case 5: {
      // scattered replacements
      for (let i = 0; i < lines.length; i += 1 + Math.floor(r() * 9)) lines[i] = `changed ${i} ✓`;
      return lines.join("\n");
    }
    case 6: {
      // delete a block in the middle
      const at = Math.floor(r() * lines.length);
      lines.splice(at, 1 + Math.floor(r() * 5));
      return lines.join("\n");
    }
    case 7: // CRLF -> LF on every line
      return text.replace(/\r\n/g, "\n");
    default: {
      // insert a block in the middle
      const at = Math.floor(r() * lines.length);
      lines.splice(at, 0, "new a", "new b", "новый c");
      return lines.join("\n");
    }
  }
}

function listTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const p = rel ? `${rel}/${name}` : name;
      if (p === ".git" || p === ".mcp") continue;
      const st = lstatSync(join(root, p));
      if (st.isDirectory()) walk(p);
      else if (st.isSymbolicLink()) out.set(p, `link:${readlinkSync(join(root, p))}`);
      else out.set(p, `${st.mode & 0o111 ? "x" : "-"}:${readFileSync(join(root, p)).toString("base64")}`);
    }
  };
  walk("");
  return out;
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) if (name !== ".git" && name !== ".mcp") cpSync(join(from, name), join(to, name), { recursive: true, verbatimSymlinks: true });
}

function gitApply(dir: string, patch: string): void {
  const r = Bun.spawnSync(["git", "apply", "--whitespace=nowarn", "-"], { cwd: dir, stdin: new Blob([patch]), stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git apply failed: ${r.stderr.toString()}\n--- patch ---\n${patch.slice(0, 4000)}`);
}

async function snap(ws: Workspace): Promise<string> {
  return (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
}

/** Builds a repo, snapshots it, applies generated edits, snapshots again; `applyDir` holds a copy of the first tree. */
async function generated(repo: TmpRepo, seed: number, applyDir: string): Promise<{ ws: Workspace; a: string; b: string }> {
  const r = rng(seed);
  const names: string[] = [];
  for (let i = 0; i < 40; i++) {
    const name = `${["src", "lib/deep", "日本", "docs"][i % 4]}/file ${i}.txt`;
    names.push(name);
    repo.write(name, genText(r, Math.floor(r() * 60), r() < 0.25, r() < 0.8));
  }
  repo.write("tool.sh", "#!/bin/sh\necho 1\n", 0o755);
  repo.write("to-delete.txt", "one\ntwo\n");
  repo.write("empty-to-delete", "");
  repo.symlink("link-old", "src/file 0.txt");
  repo.commit();
  const ws = openWorkspace(repo.root);
  const a = await snap(ws);
  copyTree(repo.root, applyDir);
  names.forEach((name, i) => {
    const path = join(repo.root, name);
    let text = readFileSync(path, "utf8");
    const edits = 1 + (i % 3);
    for (let k = 0; k < edits; k++) text = editText(r, text, (i + k * 7) % 9);
    repo.write(name, text);
  });
  chmodSync(join(repo.root, "tool.sh"), 0o644);
  chmodSync(join(repo.root, "src/file 4.txt"), 0o755);
  rmSync(join(repo.root, "to-delete.txt"));
  rmSync(join(repo.root, "empty-to-delete"));
  rmSync(join(repo.root, "link-old"));
  symlinkSync("docs/file 3.txt", join(repo.root, "link-new"));
  repo.write("added/new file.md", "brand\nnew\n");
  repo.write("added/empty", "");
  repo.write("added/no-eol", "no final newline");
  const b = await snap(ws);
  return { ws, a, b };
}

describe("snapshot_diff", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    test(`git apply of the diff reproduces the target (generated edits, seed ${seed})`, async () => {
      await using repo = await tmpRepo();
      await using scratch = tmpDir("ws-apply-");
      const { ws, a, b } = await generated(repo, seed, scratch.path);
      const r = await snapshotDiff(ws, { from: a, to: b, maxChars: Number.POSITIVE_INFINITY });
      expect(r.truncated).toBe(false);
      expect(r.cache_hint).toBe("immutable");
      expect(r.files.length).toBe(r.counts.total);
      expect(r.diff).toContain("new file mode 120000");
      expect(r.diff).toContain("old mode 100755\nnew mode 100644");
      expect(r.diff).toContain("\\ No newline at end of file");
      gitApply(scratch.path, r.diff);
      expect(listTree(scratch.path)).toEqual(listTree(repo.root));
      closeWorkspace(ws);
    });
  }

  test("paged with a small budget: applying the pages in order reproduces the target, files split at hunks", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir("ws-apply-");
    // One long file with many separate hunks, to be paged inside the file.
    const long = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    repo.write("zz/long.txt", long);
    const target = join(scratch.path, "first");
    const { ws, a } = await generated(repo, 7, target);
    repo.write("zz/long.txt", long.split("\n").map((l, i) => (i % 40 === 0 ? `${l} edited` : l)).join("\n"));
    const b2 = await snap(ws);
    const pages: DiffResult[] = [];
    let cursor: string | undefined;
    do {
      const r = await snapshotDiff(ws, { from: a, to: b2, maxChars: 1500, cursor });
      pages.push(r);
      gitApply(target, r.diff);
      cursor = r.cursor;
    } while (cursor);
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.some((p) => p.files.some((f) => f.partial))).toBe(true);
    for (const p of pages) expect(JSON.stringify(p.diff).length).toBeLessThanOrEqual(1500);
    expect(listTree(target)).toEqual(listTree(repo.root));
    // The pages hold the same files, in order, as one complete diff.
    const whole = await snapshotDiff(ws, { from: a, to: b2, maxChars: Number.POSITIVE_INFINITY });
    const seen = pages.flatMap((p) => p.files.map((f) => f.path)).filter((p, i, xs) => xs.indexOf(p) === i);
    expect(seen).toEqual(whole.files.map((f) => f.path));
    expect(seen.length).toBeGreaterThan(40);
    closeWorkspace(ws);
  });

  test("binary files: `Binary files … differ`; context_lines widens hunks", async () => {
    await using repo = await tmpRepo();
    repo.write("img.bin", new Uint8Array([0, 1, 2, 3]));
    repo.write("t.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    repo.write("img.bin", new Uint8Array([0, 1, 2, 4]));
    repo.write("t.txt", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n");
    const b = await snap(ws);
    const r = await snapshotDiff(ws, { from: a, to: b });
    expect(r.diff).toContain("diff --git a/img.bin b/img.bin\nBinary files a/img.bin and b/img.bin differ\n");
    expect(r.diff).toContain("@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
    const wide = await snapshotDiff(ws, { from: a, to: b, context_lines: 10 });
    expect(wide.diff).toContain("@@ -1,9 +1,9 @@");
    const none = await snapshotDiff(ws, { from: a, to: b, context_lines: 0 });
    expect(none.diff).toContain("@@ -5 +5 @@\n-5\n+five\n");
    expect((await snapshotDiff(ws, { from: a, to: b, context_lines: -1 }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    closeWorkspace(ws);
  });

  test("files over the size limit, and hunks too large for any answer, are listed in omitted", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a-small.txt", "1\n");
    repo.write("b-huge.txt", "x\n");
    repo.write("c-small.txt", "1\n");
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    repo.write("a-small.txt", "2\n");
    repo.write("b-huge.txt", "y".repeat(50) + "\n".repeat(1) + "z\n".repeat(60_000));
    repo.write("c-small.txt", "2\n");
    const b = await snap(ws);
    const r = await snapshotDiff(ws, { from: a, to: b });
    expect(r.files.map((f) => f.path)).toEqual(["a-small.txt"]);
    expect(r.truncated).toBe(true);
    const r2 = await snapshotDiff(ws, { from: a, to: b, cursor: r.cursor });
    expect(r2.omitted).toEqual([{ path: "b-huge.txt", status: "modified", reason: "too_large", bytes: expect.any(Number) }]);
    expect(r2.files.map((f) => f.path)).toEqual(["c-small.txt"]);
    expect(r2.truncated).toBe(false);
    const limited = await snapshotDiff(ws, { from: a, to: b, maxFileBytes: 10 });
    expect(limited.omitted.map((o) => o.path)).toEqual(["b-huge.txt"]);
    expect(limited.omitted[0]!.bytes).toBe(120_051);
    closeWorkspace(ws);
  });

  test("many small file diffs: the files list counts toward the page, so the whole answer stays under the response cap", async () => {
    await using repo = await tmpRepo({ git: false });
    for (let i = 0; i < 1500; i++) repo.write(`some/longer/directory/name/file-${String(i).padStart(4, "0")}.sh`, "echo\n");
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    for (let i = 0; i < 1500; i++) chmodSync(join(repo.root, `some/longer/directory/name/file-${String(i).padStart(4, "0")}.sh`), 0o755);
    const b = await snap(ws);
    let cursor: string | undefined;
    let files = 0;
    do {
      const r = await snapshotDiff(ws, { from: a, to: b, cursor });
      expect(JSON.stringify(r).length).toBeLessThan(70_000);
      files += r.files.length;
      cursor = r.cursor;
    } while (cursor);
    expect(files).toBe(1500);
    closeWorkspace(ws);
  });

  test("against the work tree: worktree branch, the lease touched exactly the diffed paths", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("c.txt", "c\n");
    repo.commit();
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    repo.write("b.txt", "B\n");
    rmSync(join(repo.root, "c.txt"));
    const r = await snapshotDiff(ws, { from: a, to: "worktree" });
    if (r.cache_hint !== "until_dirty") throw new Error("expected the worktree branch");
    expect(r.diff).toBe(
      "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n" +
        "diff --git a/c.txt b/c.txt\ndeleted file mode 100644\n--- a/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-c\n",
    );
    const touched = ws.leases.get(r.lease_id).touched;
    expect([...touched.keys()]).toEqual(["b.txt", "c.txt"]);
    expect(touched.get("c.txt")).toBeNull();
    closeWorkspace(ws);
  });

  test("from == to gives an empty diff; bad ids, paths and cursors are errors", async () => {
    await using repo = await tmpRepo({ git: false });
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, `${i}\n`.repeat(50));
    const ws = openWorkspace(repo.root);
    const a = await snap(ws);
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, `${i + 1}\n`.repeat(50));
    const b = await snap(ws);
    const same = await snapshotDiff(ws, { from: a, to: a });
    expect(same).toMatchObject({ diff: "", files: [], truncated: false, counts: { total: 0 } });
    expect((await snapshotDiff(ws, { from: a, to: "ffffffff" }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect((await snapshotDiff(ws, { from: a, to: b, paths: ["../../etc/passwd"] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    const page = await snapshotDiff(ws, { from: a, to: b, maxChars: 2000 });
    expect(page.truncated).toBe(true);
    const other = await snapshotDiff(ws, { from: a, to: b, context_lines: 1, cursor: page.cursor }).catch((e) => e);
    expect(other.code).toBe("INVALID_ARGUMENT");
    expect(other.message).toContain("different query");
    closeWorkspace(ws);
  });
});
