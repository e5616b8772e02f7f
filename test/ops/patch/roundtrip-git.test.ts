/**
 * unifiedDiff output against real git: for every case, the diff is applied
 * (a) by `git apply` in a temporary repository and (b) by planPatch against
 * the same tree, and both must reproduce the target tree byte for byte, modes
 * and symlinks included.
 */
import { describe, expect, test } from "bun:test";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { planPatch } from "../../../src/ops/patch/plan";
import { edgeCases, randomCases, treesOf, type EditCase } from "./edits";
import { tmpRepo } from "../../helpers/tmp-repo";
import { applyPlan, commitTree, gitTry, memoryTarget, readTree, treeRows } from "./fixtures";

function patchOf(c: EditCase, context: number): string {
  return c.pairs.map((p) => unifiedDiff(p.from, p.to, { context })).join("");
}

async function checkWithGit(cases: EditCase[], context: number): Promise<void> {
  await using repo = await tmpRepo();
  const from = new Map();
  const to = new Map();
  for (const c of cases) {
    const t = treesOf(c.pairs);
    for (const [k, v] of t.from) from.set(k, v);
    for (const [k, v] of t.to) to.set(k, v);
  }
  commitTree(repo.root, from, "base");
  const patch = cases.map((c) => patchOf(c, context)).join("");
  const args = ["apply", "--whitespace=nowarn", ...(context === 0 ? ["--unidiff-zero"] : []), "-"];
  const r = gitTry(repo.root, args, patch);
  if (r.code !== 0) throw new Error(`git apply failed: ${r.stderr}\n--- patch ---\n${patch}`);
  expect(treeRows(readTree(repo.root))).toEqual(treeRows(to));
}

async function checkWithPlan(c: EditCase, context: number): Promise<void> {
  const { from, to } = treesOf(c.pairs);
  const patch = patchOf(c, context);
  const plan = await planPatch(patch, memoryTarget(from));
  if (!plan.ok) throw new Error(`${c.name}: ${JSON.stringify(plan.rejects)}\n${patch}`);
  expect(plan.warnings).toEqual([]);
  expect(plan.offsets).toEqual([]);
  expect(treeRows(applyPlan(from, plan))).toEqual(treeRows(to));
}

describe("unifiedDiff round trip through git apply and planPatch", () => {
  for (const c of edgeCases()) {
    test(`git apply: ${c.name}`, async () => {
      await checkWithGit([c], 3);
    });
    if (c.gitOnly) continue;
    test(`planPatch: ${c.name}`, async () => {
      for (const context of [0, 1, 3, 5]) await checkWithPlan(c, context);
    });
  }

  for (const context of [0, 1, 3]) {
    test(`git apply: 60 random edits with context ${context}, in one multi-file patch`, async () => {
      await checkWithGit(randomCases(1000 + context, 60), context);
    });
  }

  test("planPatch: 300 random edits with contexts 0..5", async () => {
    for (const c of randomCases(7, 300)) for (const context of [0, 2, 3, 5]) await checkWithPlan(c, context);
  });

  test("the same random edits reversed", async () => {
    for (const c of randomCases(8, 150)) {
      const reversed = { name: c.name, pairs: c.pairs.map((p) => ({ from: p.to, to: p.from })) };
      await checkWithPlan(reversed, 3);
    }
  });
});
