/**
 * File scanning in windows: results must not depend on the window size, the
 * stream chunking or where lines fall relative to read boundaries.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { grepAll, positions, referenceMatches } from "./fixtures";

const line = fc
  .array(fc.constantFrom("foo", "bar", " ", "é", "😀", "\r", "x", "needle"), { maxLength: 12 })
  .map((p) => p.join(""));
const content = fc.array(line, { maxLength: 12 }).chain((lines) =>
  fc.boolean().map((finalNewline) => lines.join("\n") + (finalNewline && lines.length > 0 ? "\n" : "")),
);

describe("windowed scanning", () => {
  test("matches, text and context are the same for every window size and stream chunking", async () => {
    await fc.assert(
      fc.asyncProperty(
        content,
        fc.constantFrom("needle", "foo|bar", "o\\r?$", "^x", "é.", "(?<=foo)bar"),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 40 }),
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        async (text, pattern, context, chunk, stream) => {
          const tree = { "f.txt": text };
          const whole = await grepAll(tree, { pattern, contextLines: context });
          const windowed = await grepAll(tree, { pattern, contextLines: context, chunkBytes: chunk }, { streamChunk: stream });
          expect(windowed.matches).toEqual(whole.matches);
        },
      ),
      { numRuns: 400 },
    );
  });

  test("a match straddling a read boundary is found, with the right line number", async () => {
    const prefix = "a\n".repeat(1000) + "x".repeat(37);
    const text = `${prefix}NEEDLE-across-the-boundary\nafter\n`;
    for (const chunk of [1024, 2039, 2040, 2041, 2045, 4096]) {
      const r = await grepAll({ f: text }, { pattern: "NEEDLE-across", chunkBytes: chunk, contextLines: 1 }, { streamChunk: 333 });
      expect(r.matches).toEqual([{ path: "f", line: 1001, col: 38, text: "x".repeat(37) + "NEEDLE-across-the-boundary", before: ["a"], after: ["after"] }]);
    }
  });

  test("CRLF: text and context lose the `\\r`, columns count from the line start", async () => {
    const r = await grepAll({ f: "one\r\ntwo foo\r\nthree\r\n" }, { pattern: "foo", contextLines: 1 });
    expect(r.matches).toEqual([{ path: "f", line: 2, col: 5, text: "two foo", before: ["one"], after: ["three"] }]);
  });

  test("context stops at the file's ends; only the first match on a line carries it", async () => {
    const r = await grepAll({ f: "foo foo\nbar" }, { pattern: "foo", contextLines: 3 });
    expect(r.matches).toEqual([
      { path: "f", line: 1, col: 1, text: "foo foo", after: ["bar"] },
      { path: "f", line: 1, col: 5, text: "foo foo" },
    ]);
  });

  test("a UTF-8 byte order mark is not part of line 1, as in ripgrep", async () => {
    const r = await grepAll({ f: "\ufefffoo\n" }, { pattern: "^foo" });
    expect(r.matches).toEqual([{ path: "f", line: 1, col: 1, text: "foo" }]);
  });

  test("a very long line is trimmed around the match on character boundaries", async () => {
    const text = "é".repeat(600) + "needle" + "😀".repeat(300);
    const r = await grepAll({ "min.js": text }, { pattern: "needle", contextLines: 1 });
    const m = r.matches[0]!;
    expect(m.col).toBe(1201);
    expect(m.text).toContain("needle");
    expect(Buffer.byteLength(m.text)).toBeLessThanOrEqual(200);
    expect(m.text).not.toContain("\ufffd");
    expect(m.trimmed!.before + Buffer.byteLength(m.text) + m.trimmed!.after).toBe(Buffer.byteLength(text));
    expect(text.slice(0, 600)).toContain(m.text.slice(0, m.text.indexOf("needle")));
  });

  test("long context lines are cut and marked", async () => {
    const r = await grepAll({ f: `${"z".repeat(500)}\nfoo\n` }, { pattern: "foo", contextLines: 1 });
    expect(r.matches[0]!.before).toEqual([`${"z".repeat(200)}…`]);
  });

  test("columns are byte offsets even across invalid UTF-8", async () => {
    // no NUL (binary) and no "z": the model below counts "a" only, and "a|zz" would also match a "zz" the data held
    const bytes = fc.uint8Array({ maxLength: 60 }).map((b) => b.map((x) => (x === 0 ? 0x61 : x === 0x7a ? 0x79 : x)));
    await fc.assert(
      fc.asyncProperty(bytes, fc.constantFrom("a", "[a]", "(?<=)a", "a|zz"), async (data, pattern) => {
        const want: string[] = [];
        let lineNo = 1;
        let lineStart = 0;
        data.forEach((b, i) => {
          if (b === 0x61) want.push(`f:${lineNo}:${i - lineStart + 1}`);
          if (b === 10) {
            lineNo++;
            lineStart = i + 1;
          }
        });
        const r = await grepAll({ f: data }, { pattern, chunkBytes: 7 });
        expect(positions(r)).toEqual(want);
      }),
      { numRuns: 400 },
    );
  });

  test("a big region of short lines is scanned in bounded slices with a quadratic-worst-case regex, same answer", async () => {
    let seed = 1;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const lines: string[] = [];
    for (let n = 0; n < 1_600_000; ) {
      const l = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => (rnd() < 0.5 ? String(Math.floor(rnd() * 1e6)) : "x")).join(rnd() < 0.5 ? "" : " ");
      lines.push(l);
      n += l.length + 1;
    }
    const text = lines.join("\n");
    const r = await grepAll({ "big.log": text }, { pattern: "\\d+x" });
    expect(positions(r)).toEqual(referenceMatches("big.log", text, /\d+x/gu));
    expect(r.matches.length).toBeGreaterThan(1000);
  });
});
