/**
 * A patch of many files has its files read in one call (TreeHandles.readEntries: with the native module, one call
 * that reads them on a few threads) instead of one lstat and one read each. Every file's answer must be the one a
 * single read gives: the bytes, the mode, a symlink's text, a missing file, and the refusals (a directory, a FIFO),
 * with nothing written when one is refused.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { nativeModule, type NativeModule } from "../../../src/repo/native";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { linkOf, permOf, treeText, wsOf } from "../../helpers/workspace";

const FILES = 40;
const name = (k: number) => (k % 3 === 0 ? `src/deep/er/f${k}.txt` : k % 3 === 1 ? `lib/f${k}.txt` : `f${k}-é.txt`);
const body = (k: number) => Array.from({ length: 12 + (k % 5) }, (_, i) => `file ${k} line ${i}\n`).join("");
const hunk = (k: number) => `--- a/${name(k)}\n+++ b/${name(k)}\n@@ -2,3 +2,3 @@\n file ${k} line 1\n-file ${k} line 2\n+FILE ${k} LINE 2\n file ${k} line 3\n`;

function manyFiles(repo: TmpRepo): void {
  for (let k = 0; k < FILES; k++) repo.write(name(k), body(k), k === 7 ? 0o755 : undefined);
  repo.write("big.txt", `${"x".repeat(300_000)}\nlast\n`);
  repo.write("empty.txt", "");
  repo.symlink("link", "f2-é.txt");
}

/** Every call of the native batch read, counted (the batch must be what reads the files). */
function countBatches(): { calls: number } & Disposable {
  const m = nativeModule() as (NativeModule & Record<string, unknown>) | null;
  const counter = { calls: 0, [Symbol.dispose]() {} };
  if (!m) return counter;
  const original = m.readManyAt;
  m.readManyAt = (...args: Parameters<NativeModule["readManyAt"]>) => {
    counter.calls++;
    return original(...args);
  };
  counter[Symbol.dispose] = () => {
    m.readManyAt = original;
  };
  return counter;
}


describe("a patch of many files: read together, each file as one read gives it", () => {
  test("bytes, modes, a large file, an empty file and a symlink's text are read as single reads read them; the result is the patch applied", async () => {
    await using repo = await tmpRepo();
    manyFiles(repo);
    repo.commit();
    using ws = wsOf(repo);
    const patch = [
      ...Array.from({ length: FILES }, (_, k) => hunk(k)),
      "--- a/big.txt\n+++ b/big.txt\n@@ -2 +2 @@\n-last\n+LAST\n",
      "--- a/empty.txt\n+++ b/empty.txt\n@@ -0,0 +1 @@\n+now one line\n",
      "diff --git a/link b/link\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-f2-é.txt\n\\ No newline at end of file\n+f5-é.txt\n\\ No newline at end of file\n",
    ].join("");
    using batches = countBatches();
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.changed.length).toBe(FILES + 3);
    if (nativeModule()) expect(batches.calls).toBe(1);
    for (let k = 0; k < FILES; k++) {
      expect(readFileSync(join(repo.root, name(k)), "utf8")).toBe(body(k).replace(`file ${k} line 2\n`, `FILE ${k} LINE 2\n`));
    }
    expect(permOf(repo.root, name(7))).toBe(0o755);
    expect(readFileSync(join(repo.root, "big.txt"), "utf8")).toBe(`${"x".repeat(300_000)}\nLAST\n`);
    expect(readFileSync(join(repo.root, "empty.txt"), "utf8")).toBe("now one line\n");
    expect(linkOf(repo.root, "link")).toBe("f5-é.txt");
    // git agrees: what it sees changed is exactly what the patch changed
    const changed = repo.git("diff", "--name-only", "-z").split("\0").filter(Boolean).sort();
    expect(changed).toEqual(r.changed.map((c) => c.path).sort());
  });

  for (const bad of ["directory", "fifo"] as const) {
    test(`a path that is a ${bad === "fifo" ? "FIFO" : "directory"} among many refuses the whole patch as it does alone, without waiting, and writes nothing`, async () => {
      const answers: unknown[] = [];
      for (const files of [FILES, 2]) {
        await using repo = await tmpRepo();
        manyFiles(repo);
        repo.commit();
        const before = treeText(repo.root); // (taken before the FIFO is made: reading it would wait)
        if (bad === "directory") mkdirSync(join(repo.root, "odd"));
        else Bun.spawnSync(["mkfifo", join(repo.root, "odd")]);
        using ws = wsOf(repo);
        const patch = [...Array.from({ length: files }, (_, k) => hunk(k)), "--- a/odd\n+++ b/odd\n@@ -1 +1 @@\n-a\n+b\n"].join("");
        const err = await applyPatchOp(ws, { mode: "worktree", patch }).then(
          () => null,
          (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
        );
        expect(err).not.toBeNull();
        rmSync(join(repo.root, "odd"), { recursive: true });
        expect(treeText(repo.root)).toEqual(before);
        answers.push(err);
      }
      // many files (read together) and two (read one by one) give the same refusal
      expect(answers[0]).toEqual(answers[1]);
      expect((answers[0] as { code: string }).code).toBe("INVALID_ARGUMENT");
      expect((answers[0] as { message: string }).message).toContain("odd");
    });
  }

  test("a missing file among many is the same reject as alone; a new file among them is created", async () => {
    await using repo = await tmpRepo();
    manyFiles(repo);
    repo.commit();
    using ws = wsOf(repo);
    const gone = "--- a/lib/gone.txt\n+++ b/lib/gone.txt\n@@ -1 +1 @@\n-a\n+b\n";
    const many = await applyPatchOp(ws, { mode: "worktree", patch: [...Array.from({ length: FILES }, (_, k) => hunk(k)), gone].join("") });
    const alone = await applyPatchOp(ws, { mode: "worktree", patch: gone });
    expect(many.applied).toBe(false);
    expect(many.rejects).toEqual(alone.rejects);
    const created = await applyPatchOp(ws, {
      mode: "worktree",
      patch: [...Array.from({ length: FILES }, (_, k) => hunk(k)), "--- /dev/null\n+++ b/lib/new.txt\n@@ -0,0 +1 @@\n+new\n"].join(""),
    });
    expect(created.applied).toBe(true);
    expect(readFileSync(join(repo.root, "lib/new.txt"), "utf8")).toBe("new\n");
    expect(statSync(join(repo.root, "lib/new.txt")).isFile()).toBe(true);
  });
});
