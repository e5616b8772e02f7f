import { describe, expect, test } from "bun:test";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";
import type { ApplyResult, PatchHunk } from "../../../src/ops/patch/types";
import { dec, enc } from "./fixtures";

function hunks(body: string): PatchHunk[] {
  const p = parsePatch(`--- a/f\n+++ b/f\n${body}`);
  if (p.rejects.length > 0) throw new Error(JSON.stringify(p.rejects));
  return p.files[0]!.hunks;
}

function apply(content: string | Uint8Array, body: string): ApplyResult {
  return applyHunks(typeof content === "string" ? enc(content) : content, hunks(body));
}

function applied(content: string, body: string): { text: string; offsets: { index: number; offset: number }[] } {
  const r = apply(content, body);
  if (!r.ok) throw new Error(JSON.stringify(r.rejects, null, 1));
  return { text: dec(r.bytes), offsets: r.offsets };
}

const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `${i + from}\n`).join("");

describe("applyHunks: where a hunk applies", () => {
  test("at its stated line, with no offset reported", () => {
    expect(applied("a\nb\nc\n", "@@ -2 +2 @@\n-b\n+B\n")).toEqual({ text: "a\nB\nc\n", offsets: [] });
  });

  test("a wrong stated line applies at the nearest exact match and reports the offset", () => {
    const file = numbered(100);
    expect(applied(file, "@@ -40,3 +40,3 @@\n 50\n-51\n+fifty-one\n 52\n").offsets).toEqual([{ index: 0, offset: 10 }]);
    expect(applied(file, "@@ -40,3 +40,3 @@\n 30\n-31\n+x\n 32\n").offsets).toEqual([{ index: 0, offset: -10 }]);
  });

  test("far from the stated line (beyond the direct window), via the line index", () => {
    const file = numbered(20_000);
    const r = applied(file, "@@ -5,2 +5,2 @@\n-15000\n+X\n 15001\n");
    expect(r.offsets).toEqual([{ index: 0, offset: 14995 }]);
    expect(r.text).toBe(file.replace("\n15000\n", "\nX\n"));
  });

  test("ties between equally near matches pick the earlier one", () => {
    // "target" is at lines 3 and 7; the hunk says line 5, two lines from each.
    const r = applied("p\nq\ntarget\nr\nmid\nr\ntarget\ns\n", "@@ -5 +5 @@\n-target\n+T\n");
    expect(r.offsets).toEqual([{ index: 0, offset: -2 }]);
    expect(r.text).toBe("p\nq\nT\nr\nmid\nr\ntarget\ns\n");
  });

  test("a later hunk never applies before or overlapping an earlier one", () => {
    // The second hunk's nearest match (line 1) precedes the first hunk, so the later copy is used.
    const r = applied("dup\nmid\nfirst\ndup\nend\n", "@@ -3 +3 @@\n-first\n+FIRST\n@@ -1 +1 @@\n-dup\n+DUP\n");
    expect(r.text).toBe("dup\nmid\nFIRST\nDUP\nend\n");
    expect(r.offsets).toEqual([{ index: 1, offset: 3 }]);
  });

  test("a hunk whose only match precedes the previous hunk is rejected and says so", () => {
    const r = apply("only\nmid\nfirst\nend\n", "@@ -3 +3 @@\n-first\n+FIRST\n@@ -1 +1 @@\n-only\n+ONLY\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.rejects).toHaveLength(1);
    expect(r.rejects[0]!.index).toBe(1);
    expect(r.rejects[0]!.message).toContain("is at line 1, but that overlaps or precedes the previous hunk (which ends at line 3)");
  });

  test("insertions: at the top, after line N, at the end", () => {
    expect(applied("a\nb\n", "@@ -0,0 +1 @@\n+top\n").text).toBe("top\na\nb\n");
    expect(applied("a\nb\n", "@@ -1,0 +2 @@\n+mid\n").text).toBe("a\nmid\nb\n");
    expect(applied("a\nb\n", "@@ -2,0 +3,2 @@\n+y\n+z\n").text).toBe("a\nb\ny\nz\n");
    expect(applied("", "@@ -0,0 +1,2 @@\n+y\n+z\n").text).toBe("y\nz\n");
  });

  test("an insertion past the end, or after a last line without newline, is rejected", () => {
    const past = apply("a\n", "@@ -3,0 +4 @@\n+x\n");
    expect(past.ok || past.rejects[0]!.message).toContain("the file has 1 lines");
    const unterminated = apply("a\nb", "@@ -2,0 +3 @@\n+x\n");
    expect(unterminated.ok || unterminated.rejects[0]!.message).toContain("has no newline at end of file");
  });
});

describe("applyHunks: byte-exact matching, no fuzz", () => {
  test("one differing context line rejects the hunk", () => {
    const r = apply("a\nb\nc\nd\n", "@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n x\n");
    expect(r.ok).toBe(false);
  });

  test("whitespace is significant: trailing space, tabs, CRLF", () => {
    expect(apply("a \nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n").ok).toBe(false);
    expect(apply("\ta\n", "@@ -1 +1 @@\n-    a\n+b\n").ok).toBe(false);
    expect(apply("a\r\nb\r\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n").ok).toBe(false);
  });

  test("CRLF content matches CRLF hunks and stays CRLF", () => {
    expect(applied("a\r\nb\r\nc\r\n", "@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n").text).toBe("a\r\nB\r\nc\r\n");
  });

  test("the final newline is part of the match", () => {
    expect(apply("a\nb\n", "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+c\n").ok).toBe(false);
    expect(apply("a\nb", "@@ -2 +2 @@\n-b\n+c\n").ok).toBe(false);
    expect(applied("a\nb", "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+c\n").text).toBe("a\nc\n");
    expect(applied("a\nb\n", "@@ -2 +2 @@\n-b\n+c\n\\ No newline at end of file\n").text).toBe("a\nc");
  });

  test("a hunk that removes the final newline must end at the end of the file", () => {
    const r = apply("a\nb\nc\n", "@@ -1 +1 @@\n-a\n+A\n\\ No newline at end of file\n");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.rejects[0]!.message).toContain("must end at the end of the file");
  });

  test("bytes that are not UTF-8 survive on untouched lines", () => {
    const content = new Uint8Array([0xff, 0xfe, 10, 0x61, 10, 0x80, 0x00, 10]);
    const r = applyHunks(content, hunks("@@ -2 +2 @@\n-a\n+b\n"));
    expect(r.ok && [...r.bytes]).toEqual([0xff, 0xfe, 10, 0x62, 10, 0x80, 0x00, 10]);
  });
});

describe("applyHunks: rejects", () => {
  test("context_mismatch carries the text at the stated line and the closest partial match", () => {
    const file = "one\ntwo\nthree\nfour\nfive\nsix\nalpha\nbeta\nGAMMA\ndelta\n";
    const r = apply(file, "@@ -2,4 +2,4 @@\n alpha\n beta\n-gamma\n+G\n delta\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.rejects).toEqual([
      {
        index: 0,
        reason: "context_mismatch",
        message:
          'hunk 0 (@@ -2,4 +2,4 @@) does not apply: its 4 old lines (context and removed) are not at line 2 (line 2 is "two", the hunk expects "alpha"), and nowhere else in the file; closest partial match: 3 of 4 old lines at line 7',
        expected_at: { line: 2, text: ["two", "three", "four", "five"] },
        closest: { line: 7, text: ["alpha", "beta", "GAMMA", "delta"] },
      },
    ]);
  });

  test("every failing hunk is reported, not just the first", () => {
    const r = apply(numbered(30), "@@ -2 +2 @@\n-x\n+y\n@@ -10 +10 @@\n-10\n+ten\n@@ -20 +20 @@\n-z\n+w\n");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.rejects.map((x) => [x.index, x.reason])).toEqual([
      [0, "context_mismatch"],
      [2, "context_mismatch"],
    ]);
  });

  test("excerpts show CR and decode UTF-8", () => {
    const r = apply("é\r\nb\r\n", "@@ -1 +1 @@\n-e\n+f\n");
    expect(!r.ok && r.rejects[0]!.expected_at).toEqual({ line: 1, text: ["é\r"] });
  });

  test("a stated line past the end shows the last lines", () => {
    const r = apply("a\nb\nc\n", "@@ -50,2 +50,2 @@\n-x\n+y\n c\n");
    expect(!r.ok && r.rejects[0]!.expected_at).toEqual({ line: 2, text: ["b", "c"] });
  });

  test("malformed hand-built hunks are rejected, not thrown", () => {
    const bad: PatchHunk = { index: 3, oldStart: 1, oldLines: 2, newStart: 1, newLines: 0, header: "@@", lines: [{ kind: "-", text: "a", eol: false }, { kind: "-", text: "b", eol: true }] };
    const r = applyHunks(enc("a\nb\n"), [bad]);
    expect(!r.ok && r.rejects[0]).toMatchObject({ index: 3, reason: "malformed" });
  });
});

describe("applyHunks: scale", () => {
  test("1,000 hunks on a 200,000-line file, some stated off by a few lines", () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `row ${i} ${"x".repeat(i % 17)}\n`);
    let body = "";
    const expected = [...lines];
    for (let k = 0; k < 1000; k++) {
      const at = k * 199 + 50;
      const stated = at + (k % 5 === 0 ? 3 : 0);
      body += `@@ -${stated + 1},3 +${stated + 1},3 @@\n ${lines[at]}-${lines[at + 1]}+changed ${k}\n ${lines[at + 2]}`;
      expected[at + 1] = `changed ${k}\n`;
    }
    const r = applied(lines.join(""), body);
    expect(r.text).toBe(expected.join(""));
    expect(r.offsets).toHaveLength(200);
    expect(r.offsets[0]).toEqual({ index: 0, offset: -3 });
  });
});
