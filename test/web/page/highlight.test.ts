/** The page's syntax colouring: what a reader relies on (keywords, strings, comments) and that no text is lost. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { highlightLine, languageFor, START, type LineState, type Token } from "../../../src/web/page/highlight";

const kinds = (tokens: Token[]) => tokens.filter((t) => t.kind !== null).map((t) => [t.kind, t.text]);

function lines(lang: string | null, src: string[]): Token[][] {
  let state: LineState = START;
  return src.map((l) => {
    const h = highlightLine(lang, l, state);
    state = h.state;
    return h.tokens;
  });
}

describe("syntax colouring", () => {
  test("languages are picked by file name", () => {
    expect(["a.ts", "b.TSX", "c.py", "d.rs", "e.go", "f.json", "g.yml", "h.md", "i.html", "Dockerfile", "README", "x.unknown"].map(languageFor)).toEqual([
      "ts", "ts", "py", "rs", "go", "json", "yaml", "md", "html", "sh", null, null,
    ]);
  });

  test("TypeScript: keywords, strings with escapes, numbers, comments, calls, types", () => {
    const [t] = lines("ts", ['export const n: number = foo("a\\"b", 0x1F) + 2.5e3; // done']);
    expect(kinds(t!)).toEqual([
      ["kw", "export"],
      ["kw", "const"],
      ["type", "number"],
      ["fn", "foo"],
      ["str", '"a\\"b"'],
      ["num", "0x1F"],
      ["num", "2.5e3"],
      ["com", "// done"],
    ]);
  });

  test("a block comment and a template string carry over to the next lines", () => {
    const out = lines("ts", ["a /* start", "still comment", "end */ b", "const s = `one", "two`;"]);
    expect(kinds(out[0]!)).toEqual([["com", "/* start"]]);
    expect(kinds(out[1]!)).toEqual([["com", "still comment"]]);
    expect(kinds(out[2]!)).toEqual([["com", "end */"]]);
    expect(kinds(out[4]!)).toEqual([["str", "two`"]]);
  });

  test("Python: triple-quoted strings across lines, decorators, literals; '#' starts a comment", () => {
    const out = lines("py", ["@cache", 'def f(x=None):', '    """doc', '    more"""', "    return x  # note"]);
    expect(kinds(out[0]!)).toEqual([["meta", "@cache"]]);
    expect(kinds(out[1]!)).toEqual([["kw", "def"], ["fn", "f"], ["lit", "None"]]);
    expect(kinds(out[3]!)).toEqual([["str", '    more"""']]);
    expect(kinds(out[4]!)).toEqual([["kw", "return"], ["com", "# note"]]);
  });

  test("markup: tags, attributes and their values; JSON keys apart from string values", () => {
    expect(kinds(highlightLine("html", '<a href="/x">go</a>').tokens)).toEqual([["tag", "<a"], ["attr", "href"], ["str", '"/x"'], ["tag", ">"], ["tag", "</a>"]]);
    expect(kinds(highlightLine("json", '{"key": "value", "n": 1, "ok": true}').tokens)).toEqual([
      ["attr", '"key"'], ["str", '"value"'], ["attr", '"n"'], ["num", "1"], ["attr", '"ok"'], ["lit", "true"],
    ]);
  });

  test("shell: '#' inside a word is not a comment; variables are marked", () => {
    expect(kinds(highlightLine("sh", 'echo "$HOME" a#b ${X} # c').tokens)).toEqual([["kw", "echo"], ["str", '"$HOME"'], ["attr", "${X}"], ["com", "# c"]]);
  });

  test("no text is ever lost or reordered, in any language (property)", () => {
    const langs = [null, "ts", "py", "rs", "go", "c", "java", "rb", "sh", "json", "yaml", "toml", "css", "sql", "html", "md"];
    fc.assert(
      fc.property(fc.constantFrom(...langs), fc.array(fc.string({ unit: fc.constantFrom(..."ab1 \"'`#/*-<>=:${}()@.\\\n\t".split("")) }), { maxLength: 6 }), (lang, src) => {
        const out = lines(lang, src.map((s) => s.replace(/\n/g, "")));
        out.forEach((tokens, i) => expect(tokens.map((t) => t.text).join("")).toBe(src[i]!.replace(/\n/g, "")));
      }),
      { numRuns: 400 },
    );
  });
});
