/**
 * What the static analysis decides for a pattern: the line-semantics rewrite,
 * the prefilter literals, where it runs, and which shapes it refuses.
 */
import { describe, expect, test } from "bun:test";
import { planRegex } from "../../../src/ops/grep/regex-analysis";

const literals = (pattern: string, ci = false) => planRegex(pattern, ci).literals?.map((l) => Buffer.from(l).toString("utf8")) ?? null;

describe("regex plan", () => {
  test("the rewrite keeps every atom off the line break and anchors at line breaks only", () => {
    expect(planRegex("^a.b$", false).source).toBe("(?<![^\\n])a[^\\n]b(?![^\\n])");
    expect(planRegex("[^x][\\s\\S]", false).source).toBe("(?:(?!\\n)[^x])(?:(?!\\n)[\\p{White_Space}\\P{White_Space}])");
    // atoms that cannot match a line break are left alone
    expect(planRegex("[a-z]x\\u{1F600}", false).source).toBe("[a-z]x\\u{1F600}");
  });

  test("\\w \\d \\s \\b become ripgrep's Unicode classes, inside character classes too", () => {
    const W = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
    expect(planRegex("\\w\\d\\S", false).source).toBe(`[${W}][\\p{Nd}][\\P{White_Space}]`);
    expect(planRegex("\\W", false).source).toBe(`(?:(?!\\n)[^${W}])`);
    expect(planRegex("[\\w.-]", false).source).toBe(`[${W}.-]`);
    expect(planRegex("[^\\d_]", false).source).toBe("(?:(?!\\n)[^\\p{Nd}_])");
    expect(planRegex("[\\W^]", false).source).toBe(`(?:(?!\\n)(?:[\\^]|[^${W}]))`);
    expect(planRegex("[^\\Wa]", false).source).toBe(`(?:(?![a])[${W}])`);
    expect(planRegex("\\bx", false).source).toBe(`(?:(?<=[${W}])(?![${W}])|(?<![${W}])(?=[${W}]))x`);
    expect(planRegex("(?<name>a)\\k<name>(?:b|c){2,3}?", false).source).toBe("(?<name>a)\\k<name>(?:b|c){2,3}?");
  });

  test("required literals feed the byte prefilter", () => {
    expect(literals("foo")).toEqual(["foo"]);
    expect(literals("TODO|FIXME")).toEqual(["TODO", "FIXME"]);
    expect(literals("\\w+Error\\b")).toEqual(["Error"]);
    expect(literals("get[A-Z]\\w*\\(")).toEqual(["get"]);
    expect(literals("(foo|bar)baz")).toEqual(["foobaz", "barbaz"]);
    expect(literals("fo{2}")).toEqual(["foo"]);
    expect(literals("(?:abc)+x?")).toEqual(["abc"]);
    expect(literals("a*b?")).toBeNull();
    expect(literals("[ab]c|d")).toEqual(["c", "d"]);
    expect(literals("x|.")).toBeNull();
    expect(literals("😀")).toEqual(["😀"]);
  });

  test("case-insensitively, only characters without case variants are literals", () => {
    expect(literals("todo", true)).toBeNull();
    expect(literals("to-do", true)).toEqual(["-"]);
    expect(literals("handle_request\\(1\\)", true)).toEqual(["(1)"]);
    expect(literals("(?i:abc)d")).toEqual(["d"]);
  });

  test("regexes run line by line only when they have lookarounds", () => {
    expect(planRegex("(?<=a)b", false).perLine).toBe(true);
    expect(planRegex("a(?!b)", false).perLine).toBe(true);
    expect(planRegex("^a$", false).perLine).toBe(false);
  });

  test("only regexes with bounded backtracking run in-process", () => {
    for (const p of ["foo", "TODO|FIXME", "[A-Z]{2,8}", "a?a?a?b", "\\bfoo\\b", "(?<=x)y"]) expect(planRegex(p, false).inline).toBe(true);
    for (const p of ["a+", "\\w*x", "(a)\\1", "(?:a|b){1,200}", "x{1,100}y{1,100}"]) expect(planRegex(p, false).inline).toBe(false);
  });

  test("one unbounded repetition of one character class is quadratic at worst, so it may run in-process on short lines", () => {
    for (const p of ["fetch[A-Z]\\w*\\(", "foo.*bar", "\\d+x", "import .* from", "(?:\\s)*;"]) expect(planRegex(p, false).quadraticWays).toBe(1);
    expect(planRegex("(?:get|set)\\w+", false).quadraticWays).toBe(2);
    for (const p of ["\\w+\\s+\\w+", "(?:ab)+", "(a)\\1*", "(?:x\\d+){2}", "(?:a|b|c|d|e|f|g|h|i){2}\\w*"]) expect(planRegex(p, false).quadraticWays).toBeNull();
    expect(planRegex("foo", false).quadraticWays).toBeNull(); // inline outright
  });

  test("ambiguous alternation anywhere inside a repetition is refused; diverging branches are not", () => {
    expect(() => planRegex("(?:x(?:a|a))*", false)).toThrow(/alternatives/);
    expect(() => planRegex("(?:foo|FOO)+", true)).toThrow(/alternatives/);
    expect(() => planRegex("(?:foo\\d|for\\w)+", false)).not.toThrow();
    expect(() => planRegex("(?:foo|FOO)+", false)).not.toThrow();
  });
});
