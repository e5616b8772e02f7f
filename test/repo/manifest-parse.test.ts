import { describe, expect, test } from "bun:test";
import { blobIdOf } from "../../src/core/hash";
import { manifestBytes, type ManifestEntry } from "../../src/repo/manifest";
import { parseManifestEntries } from "../../src/repo/manifest-parse";

const utf8 = (s: string) => new TextEncoder().encode(s);
/** What a manifest's bytes parse to when decoded whole: the reference. */
const whole = (bytes: Uint8Array) => (JSON.parse(Buffer.from(bytes).toString("utf8")) as { entries: ManifestEntry[] }).entries;

function manifestOf(paths: string[]): Uint8Array {
  const entries = [...paths].sort().map((path, i) => ({ path, blob: blobIdOf(utf8(`blob ${i}`)), mode: i % 3 === 0 ? "100755" : i % 3 === 1 ? "120000" : "100644" }));
  return manifestBytes(entries);
}

describe("parseManifestEntries", () => {
  test("paths outside ASCII (two-, three- and four-byte UTF-8) among thousands of ASCII ones parse as the whole text decoded does", () => {
    const paths = Array.from({ length: 5000 }, (_, i) => `src/d${i % 40}/file-${i}.ts`);
    paths.push("naïve.txt", "日本/語.md", "emoji/😀.png", "mixed/é日😀x", "ÿ".repeat(30), "a\u00a0b");
    const bytes = manifestOf(paths);
    const got = parseManifestEntries(bytes);
    expect(got).toEqual(whole(bytes));
    expect(got.map((e) => e.path)).toContain("mixed/é日😀x");
  });

  test("all ASCII, escapes (control characters, a backslash before a u), and a Uint8Array that is not a Buffer", () => {
    for (const paths of [["a.txt", "b/c.txt"], ["tab\there", "nul\u0001x", "back\\u0041slash", "quote\"d"], ["ctl\u0002", "ü"]]) {
      const bytes = manifestOf(paths);
      expect(parseManifestEntries(bytes)).toEqual(whole(bytes));
      expect(parseManifestEntries(new Uint8Array(bytes))).toEqual(whole(bytes));
    }
  });

  test("bytes that are not UTF-8 inside a path read as the whole text decoded reads them (U+FFFD); outside a string they are a syntax error either way", () => {
    const good = manifestOf(["x/é.txt", "y.txt"]);
    const text = Buffer.from(good).toString("latin1");
    // é is C3 A9: a lone C3 and a lone A9, and a truncated four-byte sequence
    const bad = Buffer.from(text.replace("x/\u00c3\u00a9.txt", "x/\u00c3.\u00a9\u00f0\u009f.txt"), "latin1");
    expect(parseManifestEntries(bad)).toEqual(whole(bad));
    expect(parseManifestEntries(bad)[0]!.path).toContain("\ufffd");
    const outside = Buffer.concat([Buffer.from(good.subarray(0, 1)), Buffer.from([0xc3, 0xa9]), Buffer.from(good.subarray(1))]);
    expect(() => whole(outside)).toThrow(SyntaxError);
    expect(() => parseManifestEntries(outside)).toThrow(SyntaxError);
  });
});
