/**
 * The line semantics of regex search, checked against an independent oracle
 * (each line searched alone, see referenceMatches) over generated patterns and
 * texts with CRLF, Unicode, empty lines and no final newline, searched in
 * windows of random size so lines straddle read boundaries.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { WorksnapError } from "../../../src/core/errors";
import { escapeRegex } from "../../../src/ops/grep";
import { grepAll, positions, referenceMatches } from "./fixtures";

/**
 * Each piece of pattern comes as [what the engine gets, what the oracle runs]:
 * the oracle spells out ripgrep's Unicode meanings of \\w \\d \\s \\b (UTS #18)
 * by hand, since JavaScript's own are ASCII-only.
 */
type Piece = [string, string];
const W = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
const NW = "[^\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
const same = (...xs: string[]): Piece[] => xs.map((x) => [x, x]);
const ATOMS: Piece[] = [
  ...same("a", "b", "é", "😀", " ", "\\r", "K", ".", "[ab]", "[^a]", "[\\s\\S]", "[^\\n]", "\\u{1F600}"),
  ["\\s", "\\p{White_Space}"],
  ["\\S", "\\P{White_Space}"],
  ["\\d", "\\p{Nd}"],
  ["\\D", "\\P{Nd}"],
  ["\\w", W],
  ["\\W", NW],
  ["[\\w.]", `(?:${W}|\\.)`],
  ["[^\\d_]", "[^\\p{Nd}_]"],
  ["[\\Wa]", `(?:a|${NW})`],
  ["[^\\Wa]", `(?:(?!a)${W})`],
];
const QUANTS = ["", "", "", "*", "+", "?", "{1,2}", "*?", "{2}"];
const ANCHORS: Piece[] = [
  ...same("^", "$"),
  ["\\b", `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`],
  ["\\B", `(?:(?<=${W})(?=${W})|(?<!${W})(?!${W}))`],
];
const LOOKS: Piece[] = same("(?=a)", "(?!b)", "(?<=a)", "(?<! )");

const join = (ps: Piece[]): Piece => [ps.map((p) => p[0]).join(""), ps.map((p) => p[1]).join("")];
const term: fc.Arbitrary<Piece> = fc.letrec<{ term: Piece; seq: Piece }>((tie) => ({
  term: fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...ATOMS), fc.constantFrom(...QUANTS)).map(([a, q]): Piece => [a[0] + q, `(?:${a[1]})${q}`]) },
    { weight: 2, arbitrary: fc.constantFrom(...ANCHORS) },
    { weight: 1, arbitrary: fc.constantFrom(...LOOKS) },
    { weight: 1, arbitrary: fc.tuple(tie("seq"), fc.constantFrom(...QUANTS)).map(([s, q]): Piece => [`(${s[0]})${q}`, `(${s[1]})${q}`]) },
    {
      weight: 1,
      arbitrary: fc.tuple(tie("seq"), tie("seq"), fc.constantFrom(...QUANTS)).map(([x, y, q]): Piece => [`(?:${x[0]}|${y[0]})${q}`, `(?:${x[1]}|${y[1]})${q}`]),
    },
  ),
  seq: fc.array(tie("term"), { minLength: 1, maxLength: 3 }).map(join),
})).seq;

const text = fc
  .array(fc.constantFrom("a", "b", "é", "😀", " ", "\r", "\n", "\n", "1", "_", "K", "ſ", "k", "\u212a", "ab", "\r\n", "٣", "\u0085", "\ufeff", "\u0301"), { maxLength: 40 })
  .map((parts) => parts.join(""));

const files = fc.dictionary(fc.constantFrom("a.txt", "b/c.txt", "é.md", "z"), text, { minKeys: 1, maxKeys: 3 });

function rejected(err: unknown): boolean {
  return err instanceof WorksnapError && err.code === "INVALID_ARGUMENT" && err.details.reason === "catastrophic_backtracking";
}

async function compare(tree: Record<string, string>, [pattern, oracle]: Piece, ci: boolean, window: { chunk: number; context: number; stream?: number }) {
  let got;
  try {
    got = await grepAll(tree, { pattern, caseInsensitive: ci, chunkBytes: window.chunk, contextLines: window.context }, { streamChunk: window.stream });
  } catch (err) {
    if (rejected(err)) return;
    throw err;
  }
  const re = new RegExp(oracle, ci ? "gsiu" : "gsu");
  const want = Object.keys(tree)
    .sort()
    .flatMap((p) => referenceMatches(p, tree[p]!, re));
  expect(positions(got)).toEqual(want);
}

describe("regex line semantics", () => {
  test("generated patterns match exactly what a per-line search finds", async () => {
    await fc.assert(
      fc.asyncProperty(
        files,
        term,
        fc.boolean(),
        fc.record({ chunk: fc.integer({ min: 1, max: 64 }), context: fc.integer({ min: 0, max: 2 }), stream: fc.option(fc.integer({ min: 1, max: 16 }), { nil: undefined }) }),
        (tree, pattern, ci, window) => compare(tree, pattern, ci, window),
      ),
      { numRuns: 400 },
    );
  }, 120_000);

  test("fixed strings, case-insensitive, match exactly what the escaped pattern with `iu` matches", async () => {
    const lit = fc
      .array(fc.constantFrom("k", "K", "\u212a", "s", "S", "ſ", "é", "É", "ß", "ẞ", "İ", "ı", "i", "I", "1", ".", "*", "(", "a", "😀"), { minLength: 1, maxLength: 3 })
      .map((p) => p.join(""));
    const body = fc
      .array(fc.constantFrom("k", "K", "\u212a", "s", "S", "ſ", "é", "É", "ß", "ẞ", "İ", "ı", "i", "I", "1", ".", "*", "(", "a", "😀", "\n", " "), { maxLength: 30 })
      .map((p) => p.join(""));
    await fc.assert(
      fc.asyncProperty(lit, body, fc.integer({ min: 1, max: 16 }), async (needle, content, chunk) => {
        const tree = { "f.txt": content };
        const got = await grepAll(tree, { pattern: needle, fixedStrings: true, caseInsensitive: true, chunkBytes: chunk });
        expect(positions(got)).toEqual(referenceMatches("f.txt", content, new RegExp(escapeRegex(needle), "giu")));
        const viaRegex = await grepAll(tree, { pattern: escapeRegex(needle), caseInsensitive: true, chunkBytes: chunk });
        expect(positions(got)).toEqual(positions(viaRegex));
      }),
      { numRuns: 300 },
    );
  });

  test("fixed strings match byte for byte, leftmost and non-overlapping", async () => {
    const lit = fc.array(fc.constantFrom("a", "b", "é", "\r", " "), { minLength: 1, maxLength: 3 }).map((p) => p.join(""));
    await fc.assert(
      fc.asyncProperty(lit, text, fc.integer({ min: 1, max: 16 }), async (needle, content, chunk) => {
        const got = await grepAll({ "f.txt": content }, { pattern: needle, fixedStrings: true, chunkBytes: chunk });
        expect(positions(got)).toEqual(referenceMatches("f.txt", content, new RegExp(escapeRegex(needle), "gu")));
      }),
      { numRuns: 300 },
    );
  });

  test("ripgrep's line rules: `$` is not before `\\r\\n`, `.` takes `\\r`, `^` only after `\\n`", async () => {
    const tree = { "crlf.txt": "foo\r\nbar\n", "cr.txt": "a\rfoo\n" };
    expect(positions(await grepAll(tree, { pattern: "foo$" }))).toEqual(["cr.txt:1:3"]);
    expect(positions(await grepAll(tree, { pattern: "^foo" }))).toEqual(["crlf.txt:1:1"]);
    expect(positions(await grepAll(tree, { pattern: "o.$" }))).toEqual(["cr.txt:1:4", "crlf.txt:1:3"]);
    expect(positions(await grepAll(tree, { pattern: "a\\sf" }))).toEqual(["cr.txt:1:1"]);
  });

  test("a pattern that could only match across lines never does", async () => {
    const tree = { "f.txt": "a\nb\n" };
    expect(positions(await grepAll(tree, { pattern: "a\\sb" }))).toEqual([]);
    expect(positions(await grepAll(tree, { pattern: "a[\\s\\S]b" }))).toEqual([]);
    expect(positions(await grepAll(tree, { pattern: "a[^x]b" }))).toEqual([]);
    expect(positions(await grepAll(tree, { pattern: "a\\Wb" }))).toEqual([]);
  });

  test("\\w, \\d, \\s and \\b have ripgrep's Unicode meanings", async () => {
    const tree = { "f.txt": "naïve_word\nſbar\n٣4\nx\u00a0y\n" };
    expect(positions(await grepAll(tree, { pattern: "^\\w+$" }))).toEqual(["f.txt:1:1", "f.txt:2:1", "f.txt:3:1"]);
    expect(positions(await grepAll(tree, { pattern: "\\bbar\\b" }))).toEqual([]);
    expect(positions(await grepAll(tree, { pattern: "^\\d\\d$" }))).toEqual(["f.txt:3:1"]);
    expect(positions(await grepAll(tree, { pattern: "x\\sy" }))).toEqual(["f.txt:4:1"]);
  });

  test("empty matches: one per position, none on the line after a final newline", async () => {
    expect(positions(await grepAll({ f: "ab\n\nc" }, { pattern: "x*" }))).toEqual(["f:1:1", "f:1:2", "f:1:3", "f:2:1", "f:3:1", "f:3:2"]);
    expect(positions(await grepAll({ f: "", g: "\n" }, { pattern: "^" }))).toEqual(["g:1:1"]);
  });
});
