/**
 * What the trigram index is asked for a query: trigrams every match needs,
 * never more (a wrong trigram would prune a file that matches). Checked here
 * against the plans themselves; index-ripgrep.test.ts checks the answers.
 */
import { describe, expect, test } from "bun:test";
import { trigramPlan } from "../../../src/ops/grep/index-plan";
import { compileQuery } from "../../../src/ops/grep/query";

const tri = (s: string) => ((s.charCodeAt(0) << 16) | (s.charCodeAt(1) << 8) | s.charCodeAt(2)) >>> 0;
const plan = (pattern: string, fixedStrings = false, caseInsensitive = false) => trigramPlan(compileQuery({ pattern, fixedStrings, caseInsensitive, queryKey: "" }));
const all = (word: string) => Array.from({ length: word.length - 2 }, (_, i) => [tri(word.slice(i, i + 3))]);

describe("trigram plans", () => {
  test("a fixed string: every trigram of its bytes", () => {
    expect(plan("handle(", true)).toEqual([[all("handle(")]]);
    expect(plan("aaaa", true)).toEqual([[[[tri("aaa")]]]]);
    const bytes = Buffer.from("é日", "utf8");
    expect(plan("é日", true)).toEqual([[[[(bytes[0]! << 16) | (bytes[1]! << 8) | bytes[2]!], [(bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!], [(bytes[2]! << 16) | (bytes[3]! << 8) | bytes[4]!]]]]);
  });

  test("a regex: one clause per required literal set, an alternative per string", () => {
    expect(plan("fetch[A-Z]\\w*\\(user")).toEqual([[all("fetch")], [all("(user")]]);
    expect(plan("foo(bar|baz)qux")).toEqual([[all("foobarqux"), all("foobazqux")]]);
    expect(plan("TODO|FIXME")).toEqual([[all("TODO"), all("FIXME")]]);
  });

  test("nothing to ask: strings under three bytes, no required literal, non-ASCII case folding", () => {
    expect(plan("ab", true)).toBeNull();
    expect(plan("foo|ba")).toBeNull();
    expect(plan("[a-z]+\\d")).toBeNull();
    expect(plan("^$")).toBeNull();
    expect(plan("straße", true, true)).toBeNull();
    expect(plan("x", true, true)).toBeNull();
  });

  test("an ASCII fixed string, case-insensitive: every case of each trigram, none touching k or s (the Kelvin sign, the long s)", () => {
    const p = plan("HandleRequest", true, true)!;
    expect(p.length).toBe(1);
    const positions = p[0]![0]!;
    // handlerequest: han and ndl dle ler ere req equ que; ues and est hold an s
    expect(positions.length).toBe(9);
    const first = positions[0]!.map((t) => String.fromCharCode(t >> 16, (t >> 8) & 255, t & 255)).sort();
    expect(first).toEqual(["HAN", "HAn", "HaN", "Han", "hAN", "hAn", "haN", "han"]);
    expect(positions.flat().every((t) => ![t >> 16, (t >> 8) & 255, t & 255].some((c) => "ksKS".includes(String.fromCharCode(c))))).toBe(true);
    expect(plan("kiss", true, true)).toBeNull();
    // digits and punctuation have one case
    expect(plan("a1-", true, true)).toEqual([[[[tri("a1-"), tri("A1-")]]]]);
  });
});
