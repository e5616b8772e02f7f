import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compareUtf8, searchUtf8, sortUtf8 } from "../../src/core/byte-order";

describe("compareUtf8", () => {
  test("agrees with comparing the UTF-8 bytes, for any strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(Math.sign(compareUtf8(a, b))).toBe(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  test("orders a.txt before a/b (full-path byte order)", () => {
    expect(sortUtf8(["a/b", "a.txt", "a", "a-b", "a0"])).toEqual(["a", "a-b", "a.txt", "a/b", "a0"]);
  });

  test("orders U+FB00 before U+1F600 where UTF-16 order disagrees", () => {
    expect(sortUtf8(["\u{1F600}", "\uFB00"])).toEqual(["\uFB00", "\u{1F600}"]);
  });

  test("searchUtf8 finds the first key not below the one asked, from any start, as a scan does (property)", () => {
    const key = fc.constantFrom("", "a", "a/b", "a.txt", "\uffff", "\u{10000}", "\ue000", "z");
    fc.assert(
      fc.property(fc.array(key, { maxLength: 20 }), key, fc.nat(25), (keys, k, from) => {
        const sorted = sortUtf8([...keys]).map((path) => ({ path }));
        const start = Math.min(from, sorted.length);
        let want = start;
        while (want < sorted.length && compareUtf8(sorted[want]!.path, k) < 0) want++;
        expect(searchUtf8(sorted, k, (e) => e.path, start)).toBe(want);
      }),
      { numRuns: 2000 },
    );
  });
});
