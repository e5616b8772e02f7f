/** The page's reading of unified diffs: line numbers on both sides, hunks by their lengths, and safe HTML. */
import { describe, expect, test } from "bun:test";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { parseDiff, renderDiff } from "../../../src/web/page/diff-view";

const side = (path: string, text: string) => ({ path, bytes: new TextEncoder().encode(text), mode: "100644" as const });

describe("diff view", () => {
  test("rows carry old and new line numbers; file headers are left to the card", () => {
    const diff = unifiedDiff(side("a.txt", "1\n2\n3\n4\n"), side("a.txt", "1\nTWO\n3\n4\n5\n"));
    const rows = parseDiff(diff);
    expect(rows.map((r) => [r.kind, r.old, r.new, r.text])).toEqual([
      ["hunk", null, null, "@@ -1,4 +1,5 @@"],
      ["ctx", 1, 1, "1"],
      ["del", 2, null, "2"],
      ["add", null, 2, "TWO"],
      ["ctx", 3, 3, "3"],
      ["ctx", 4, 4, "4"],
      ["add", null, 5, "5"],
    ]);
  });

  test("a removed '--- x' and an added '+++ y' are lines, not headers (regression); the no-newline marker is a note", () => {
    const rows = parseDiff(unifiedDiff(side("h.md", "keep\n-- x"), side("h.md", "keep\n++ y")));
    expect(rows.map((r) => [r.kind, r.text])).toEqual([
      ["hunk", "@@ -1,2 +1,2 @@"],
      ["ctx", "keep"],
      ["del", "-- x"],
      ["note", "No newline at end of file"],
      ["add", "++ y"],
      ["note", "No newline at end of file"],
    ]);
  });

  test("renames and binary notes show as meta rows", () => {
    expect(parseDiff("diff --git a/x b/y\nrename from x\nrename to y\n").map((r) => [r.kind, r.text])).toEqual([
      ["meta", "rename from x"],
      ["meta", "rename to y"],
    ]);
  });

  test("file content and paths never become markup", () => {
    const html = renderDiff(parseDiff(unifiedDiff(side("<b>.html", "a\n"), side("<b>.html", '<img src=x onerror="alert(1)">\n'))), "<b>.html");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img");
    expect(html).toContain("onerror");
  });
});
