import { describe, expect, test } from "bun:test";
import { canonicalJson } from "../../src/core/canonical-json";
import { expectGolden } from "../helpers/golden";

describe("canonicalJson (spec 1.1)", () => {
  test("sorts keys by UTF-8 bytes, not UTF-16 code units", () => {
    // U+FB00 is 0xEF 0xAC 0x80 in UTF-8; U+1F600 is 0xF0 ... — so U+FB00 sorts first by bytes,
    // while UTF-16 puts the surrogate pair (0xD83D) first.
    const obj = { "\u{1F600}": 1, "\uFB00": 2 };
    expect(Object.keys(obj).sort()).toEqual(["\u{1F600}", "\uFB00"]);
    expect(canonicalJson(obj)).toBe('{"\uFB00":2,"\u{1F600}":1}');
    expectGolden("canonical-json/astral-vs-bmp.json", canonicalJson(obj));
  });

  test("escapes only what JSON requires; control characters as \\u00XX", () => {
    const s = canonicalJson({ s: 'quote" back\\ nl\n tab\t cr\r bell\u0007 nul\u0000 del\u007f é 日本 \u2028' });
    expect(s).toBe('{"s":"quote\\" back\\\\ nl\\n tab\\t cr\\r bell\\u0007 nul\\u0000 del\u007f é 日本 \u2028"}');
    expectGolden("canonical-json/escapes.json", s);
  });

  test("nested objects, arrays kept in order, no whitespace, no trailing newline", () => {
    const s = canonicalJson({ b: [3, 1, { z: null, a: true }], a: { y: "x", x: -1.5 }, "": false });
    expect(s).toBe('{"":false,"a":{"x":-1.5,"y":"x"},"b":[3,1,{"a":true,"z":null}]}');
    expectGolden("canonical-json/nested.json", s);
  });

  test("the fingerprint serialises with keys in byte order", () => {
    expect(canonicalJson({ status_hash: "s", head_oid: "h", index_oid: "i" })).toBe('{"head_oid":"h","index_oid":"i","status_hash":"s"}');
  });

  test("omits undefined members and refuses non-finite numbers", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow();
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow();
  });
});
