/**
 * ripgrep's spellings taken as ripgrep takes them; the matches themselves are
 * held to rg's in ripgrep-compare.test.ts (the CASES marked as its spellings).
 */
import { describe, expect, test } from "bun:test";
import { compileQuery } from "../../../src/ops/grep/query";
import { fromRipgrepSyntax } from "../../../src/ops/grep/ripgrep-syntax";

const js = (pattern: string, ci = false) => fromRipgrepSyntax(pattern, ci);

describe("patterns written for ripgrep", () => {
  test("a valid JavaScript pattern is never rewritten", () => {
    for (const p of ["foo\\d+", "(?<n>a)b", "(?i:abc)", "\\p{Script=Greek}", "[a-z]+$", "a(?=b)"]) expect(js(p)).toEqual({ source: p, caseInsensitive: false });
    expect(js("abc", true)).toEqual({ source: "abc", caseInsensitive: true });
  });

  test("inline flags: a leading (?i) is the search's own flag; later ones hold to the end of their group, alternatives included", () => {
    expect(js("(?i)abc")).toEqual({ source: "abc", caseInsensitive: true });
    expect(js("(?im)abc")).toEqual({ source: "abc", caseInsensitive: true });
    expect(js("x(?i)FOO").source).toBe("x(?i:FOO)");
    expect(js("a(?i)R|X").source).toBe("a(?i:R)|(?i:X)");
    expect(js("(a(?i)b|c)d").source).toBe("(a(?i:b)|(?i:c))d");
    expect(js("(?s)a.b").source).toBe("a.b"); // lines are searched one by one: s and m change nothing
    expect(js("(?-i)a", true)).toEqual({ source: "(?-i:a)", caseInsensitive: true });
  });

  test("POSIX classes (ASCII, as Rust defines them), script names, \\pL, (?P<name>), \\x{...}, \\A, \\z, \\< and \\>", () => {
    expect(js("[[:upper:]]{3,}").source).toBe("[A-Z]{3,}");
    expect(js("[[:alpha:][:digit:]_]").source).toBe("[A-Za-z0-9_]");
    expect(js("[[:^space:]]").source).toBe("[^\\t\\n\\v\\f\\r ]");
    expect(js("\\p{Greek}").source).toBe("\\p{Script=Greek}");
    expect(js("\\p{greek}").source).toBe("\\p{Script=Greek}");
    expect(js("[\\p{Han}\\d]").source).toBe("[\\p{Script=Han}\\d]");
    expect(js("\\pL\\PN").source).toBe("\\p{L}\\P{N}");
    expect(js("(?P<word>foo)").source).toBe("(?<word>foo)");
    expect(js("\\x{1F600}").source).toBe("\\u{1F600}");
    expect(js("\\Afoo\\z").source).toBe("^foo$");
    const word = new RegExp(js("\\<bar\\>").source, "u");
    expect(["bar", "a bar.", "(bar)"].every((t) => word.test(t))).toBe(true);
    expect(["foobar", "barn", "_bar"].some((t) => word.test(t))).toBe(false);
  });

  test("what has no faithful spelling stays an error, with the engine's message", () => {
    for (const p of ["(?x) a b", "(?U)a+", "[[:alpha:]&&[:upper:]]", "[a[:^digit:]]", "[[a-z]]", "(?i"]) {
      expect(() => compileQuery({ pattern: p, queryKey: "" })).toThrow(/regular expression/i);
    }
  });
});
