import { describe, expect, test } from "bun:test";
import { APPLIED_DIFF_CHARS } from "../../../src/ops/mutate/applied-diff";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

const lines = (n: number, tag = "") => Array.from({ length: n }, (_, i) => `line ${i + 1}${tag}\n`).join("");

describe("a write's answer carries the change it made", () => {
  test("a patch answers with the diff git shows for it; a whole-file write with the diff against the old content", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", lines(20));
    repo.commit();
    using ws = wsOf(repo);
    const p = await applyPatchOp(ws, { mode: "worktree", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -10 +10 @@\n-line 10\n+line ten\n" });
    expect(p.diff).toBe(gitDiff(repo, "a.txt"));
    expect(p.diff_omitted).toBeUndefined();
    const w = await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: lines(20).replace("line 3\n", "line three\n").replace("line 10\n", "line ten\n") });
    expect(w.diff).toContain("-line 3\n+line three\n");
    expect(w.diff).not.toContain("line ten");
  });

  test("a large change is cut at hunk boundaries under the cap; the files left out are counted", async () => {
    await using repo = await tmpRepo();
    for (let f = 0; f < 30; f++) repo.write(`f${String(f).padStart(2, "0")}.txt`, lines(40));
    repo.commit();
    using ws = wsOf(repo);
    let patch = "";
    for (let f = 0; f < 30; f++) {
      const name = `f${String(f).padStart(2, "0")}.txt`;
      patch += `--- a/${name}\n+++ b/${name}\n`;
      for (let l = 5; l <= 35; l += 10) patch += `@@ -${l} +${l} @@\n-line ${l}\n+line ${l} changed in a longer way to make the diff grow\n`;
    }
    const r = await applyPatchOp(ws, { mode: "worktree", patch });
    expect(r.applied).toBe(true);
    expect(r.changed_total).toBe(30);
    expect(r.diff!.length).toBeLessThanOrEqual(APPLIED_DIFF_CHARS);
    const shownWhole = (r.diff!.match(/^diff --git /gm) ?? []).length;
    expect(r.diff_omitted).toBeGreaterThan(0);
    expect(shownWhole + r.diff_omitted!).toBeGreaterThanOrEqual(30);
    // What is shown is whole hunks: every hunk header's counts match its body.
    for (const hunk of r.diff!.split(/^(?=@@ )/m).slice(1)) {
      const [, oc, nc] = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(hunk)!;
      const body = hunk.split("\n").slice(1).filter((l) => l !== "" && !l.startsWith("diff --git") && !l.startsWith("---") && !l.startsWith("+++"));
      expect(body.filter((l) => !l.startsWith("+")).length).toBe(Number(oc ?? 1));
      expect(body.filter((l) => !l.startsWith("-")).length).toBe(Number(nc ?? 1));
    }
  });
});

/** `git diff` of a path without its `index` line and hunk-header function names (worksnap's diffs have neither). */
function gitDiff(repo: { git(...a: string[]): string }, path: string): string {
  return repo
    .git("diff", "--no-color", "--", path)
    .split("\n")
    .filter((l) => !l.startsWith("index "))
    .map((l) => l.replace(/^(@@ [^@]+ @@).*$/, "$1"))
    .join("\n");
}
