import { describe, expect, test } from "bun:test";
import { diffStat } from "../../../src/ops/diff/stat";
import { unifiedDiff } from "../../../src/ops/diff/unified";

const side = (path: string, text: string) => ({ path, bytes: new TextEncoder().encode(text), mode: "100644" as const });

describe("diffStat", () => {
  test("counts the lines a diff adds and removes, across hunks and files", () => {
    const one = unifiedDiff(side("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"), side("a.txt", "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n"));
    expect(diffStat(one)).toEqual({ added: 3, removed: 1 });
    const created = unifiedDiff(null, side("b.txt", "x\ny\n"));
    expect(diffStat(one + created)).toEqual({ added: 5, removed: 1 });
  });

  test("lines that read like file headers inside a hunk are counted as lines (regression: '--- x' removed, '+++ y' added)", () => {
    const diff = unifiedDiff(side("h.md", "keep\n-- x\n"), side("h.md", "keep\n++ y\n"));
    expect(diff).toContain("\n--- x\n+++ y\n");
    expect(diffStat(diff)).toEqual({ added: 1, removed: 1 });
  });

  test("'No newline at end of file' markers, binary notes and moves count nothing", () => {
    expect(diffStat(unifiedDiff(side("n.txt", "a"), side("n.txt", "b")))).toEqual({ added: 1, removed: 1 });
    expect(diffStat("diff --git a/x b/y\nrename from x\nrename to y\n")).toEqual({ added: 0, removed: 0 });
    expect(diffStat("diff --git a/p.png b/p.png\nBinary files a/p.png and b/p.png differ\n")).toEqual({ added: 0, removed: 0 });
    expect(diffStat("")).toEqual({ added: 0, removed: 0 });
  });
});
