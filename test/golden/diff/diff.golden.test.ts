/**
 * Golden unified diffs: the exact text unifiedDiff renders for the edge cases
 * of the round-trip suite. UPDATE_GOLDEN=1 rewrites the files.
 */
import { describe, test } from "bun:test";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { expectGolden } from "../../helpers/golden";
import { edgeCases } from "../../ops/patch/edits";

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "").toLowerCase();

describe("golden unified diffs", () => {
  for (const c of edgeCases()) {
    test(c.name, () => {
      expectGolden(`diff/${slug(c.name)}.diff`, c.pairs.map((p) => unifiedDiff(p.from, p.to)).join(""));
    });
  }

  test("context 0 and 1", () => {
    const from = { path: "f.txt", bytes: new TextEncoder().encode("a\nb\nc\nd\ne\nf\ng\n"), mode: "100644" as const };
    const to = { path: "f.txt", bytes: new TextEncoder().encode("a\nB\nc\nd\ne\nF\ng\nh\n"), mode: "100644" as const };
    expectGolden("diff/context-0-and-1.diff", unifiedDiff(from, to, { context: 0 }) + unifiedDiff(from, to, { context: 1 }));
  });
});
