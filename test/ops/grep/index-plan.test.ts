/**
 * What the trigram index is asked for a query: trigrams every match needs,
 * never more (a wrong trigram would prune a file that matches). Checked here
 * against the plans themselves; index-ripgrep.test.ts checks the answers.
 */
import { describe, expect, test } from "bun:test";
import { trigramPlan } from "../../../src/ops/grep/index-plan";
import { compileQuery } from "../../../src/ops/grep/query";
import { rng } from "../patch/fixtures";

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

  test("an ASCII fixed string, case-insensitive: every case of each trigram, and the spellings with the Kelvin sign and the long s", () => {
    const p = plan("HandleRequest", true, true)!;
    expect(p.length).toBe(1);
    const positions = p[0]![0]!;
    // handlerequest: han and ndl dle ler ere req equ que ues est
    expect(positions.length).toBe(11);
    const text = (t: number) => String.fromCharCode(t >> 16, (t >> 8) & 255, t & 255);
    expect(positions[0]!.map(text).sort()).toEqual(["HAN", "HAn", "HaN", "Han", "hAN", "hAn", "haN", "han"]);
    // ues: 8 cases, and u/U, e/E before the long s's two bytes (C5 BF): the first three bytes of "ueſ"
    const ues = positions[9]!.map(text);
    expect(ues.length).toBe(12);
    expect(ues).toContain("ue\xc5");
    expect(ues).toContain("UE\xc5");
    // a window starting with the long s starts with its two bytes; the Kelvin sign is three bytes on its own
    const kiss = plan("kiss", true, true)![0]![0]!.flat().map(text);
    expect(kiss).toContain("\xe2\x84\xaa");
    expect(kiss).toContain("ki\xc5");
    expect(plan("sss", true, true)![0]![0]!.flat().map(text)).toContain("\xc5\xbf\xc5");
    // digits and punctuation have one case
    expect(plan("a1-", true, true)).toEqual([[[[tri("a1-"), tri("A1-")]]]]);
  });

  test("a case-insensitive plan is necessary: every text its regex matches holds a trigram of each position (random patterns, cases, Kelvin signs and long s)", () => {
    const r = rng(20261201);
    const letters = "aksKSeE1-";
    let checked = 0;
    for (let n = 0; n < 3000; n++) {
      const pattern = Array.from({ length: 3 + r.int(6) }, () => r.pick([...letters])).join("");
      const p = plan(pattern, true, true);
      if (p === null) continue;
      // the pattern spelt in random case, each k or s sometimes as the sign iu folds to it, between other bytes
      const spelt = [...pattern.toLowerCase()].map((c) => (c === "k" && r.int(3) === 0 ? "\u212a" : c === "s" && r.int(3) === 0 ? "\u017f" : r.int(2) ? c.toUpperCase() : c)).join("");
      const hay = `${r.pick(["", "x", "é", "\u212a", "zz\n"])}${spelt}${r.pick(["", "y", "ſ", "\n"])}`;
      expect(new RegExp(pattern, "iu").test(hay)).toBe(true); // (no syntax characters among the letters)
      const bytes = Buffer.from(hay, "utf8");
      const held = new Set<number>();
      for (let i = 2; i < bytes.length; i++) held.add((bytes[i - 2]! << 16) | (bytes[i - 1]! << 8) | bytes[i]!);
      for (const position of p[0]![0]!) expect({ pattern, hay, held: position.some((t) => held.has(t)) }).toEqual({ pattern, hay, held: true });
      checked++;
    }
    expect(checked).toBeGreaterThan(2500);
  });
});
