import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blobIdOf } from "../../src/core/hash";
import { manifestBytes, type ManifestEntry } from "../../src/repo/manifest";
import { parseManifestEntries } from "../../src/repo/manifest-parse";
import { nativeModule } from "../../src/repo/native";

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

  test.skipIf(nativeModule() === null)("a manifest as captures write it is read as columns, and parses as the whole text decoded does: paths with JSON's syntax in them, outside ASCII, every mode, blobs at many paths", () => {
    const paths = Array.from({ length: 3000 }, (_, i) => `pkg${i % 7}/src/file-${i}.ts`);
    paths.push("a},{blob:x}],", "b,{path}:[]", "naïve/日本/😀", "sp ace/tést", "~!@#$%^&*()_+=-`", "x/" + "é".repeat(300));
    const entries = [...paths].sort().map((path, i) => ({ path, blob: blobIdOf(utf8(`blob ${i % 500}`)), mode: i % 5 === 0 ? "100755" : i % 11 === 0 ? "120000" : "100644" }));
    const bytes = manifestBytes(entries);
    expect(nativeModule()!.manifestColumns(bytes)).not.toBeNull();
    const got = parseManifestEntries(bytes);
    expect(got).toEqual(whole(bytes));
    expect(got.map((e) => e.path)).toContain("naïve/日本/😀");
    expect(got.filter((e) => e.mode === "120000").length).toBeGreaterThan(100);
    expect(parseManifestEntries(manifestBytes([]))).toEqual([]);
  });

  test.skipIf(nativeModule() === null)("any other text is parsed as JSON: the same entries, or the same SyntaxError", () => {
    const canonical = Buffer.from(manifestOf(["a.txt", "b/c.txt", "d"])).toString("latin1");
    const blob = blobIdOf(utf8("x"));
    const variants = [
      canonical.replace('{"entries":[', '{ "entries": ['), // whitespace
      canonical.replace(/"blob":("[^"]*"),"path":("[^"]*")/, '"path":$2,"blob":$1'), // another key order
      canonical.replace(blob.slice(7, 20), blob.slice(7, 20).toUpperCase()), // an id not in lower case
      canonical.replace("sha256:", "sha1:"), // an id of another kind
      canonical.replace('"path":"d"', '"path":"d","size":3'), // a key more
      canonical.replace('"path":"d"', '"path":"d","mode":"100644"'), // a mode captures leave out
      canonical.replace('"d"', '"d\u0041"'), // an escape
      canonical.replace('"d"', '"d\n"'),
      canonical.replace('"d"', '"d"'), // a raw control character: not JSON
      canonical.replace(']}', ']}\n'),
      canonical.slice(0, -3), // cut short
      canonical.replace("},{", "},,{"),
      canonical.replace('"path":"a.txt"}', '"path":"a.txt"'),
      '{"entries":[]}',
      '{"entries":[],"more":1}',
      "[]",
      "",
    ];
    for (const text of variants) {
      const bytes = Buffer.from(text, "latin1");
      let expected: unknown;
      try {
        expected = whole(bytes);
      } catch (err) {
        expected = err;
      }
      if (expected instanceof Error) expect(() => parseManifestEntries(bytes)).toThrow(SyntaxError);
      else expect(parseManifestEntries(bytes)).toEqual(expected as ManifestEntry[]);
    }
    const withMode = Buffer.from(canonical.replace('"path":"d"', '"path":"d","mode":"100644"'), "latin1");
    expect(nativeModule()!.manifestColumns(withMode)).toBeNull();
  });

  test("without the native module (WORKSNAP_NATIVE=0, the darwin executables) the same manifests parse to the same entries", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-manifest-"));
    try {
      const good = manifestOf(["x/é.txt", "y.txt"]);
      const bad = Buffer.from(Buffer.from(good).toString("latin1").replace("x/\u00c3\u00a9.txt", "x/\u00c3.\u00a9\u00f0\u009f.txt"), "latin1");
      const manifests = [
        manifestOf([...Array.from({ length: 2000 }, (_, i) => `src/d${i % 40}/file-${i}.ts`), "naïve.txt", "日本/語.md", "emoji/😀.png", "a},{blob:x}],"]),
        manifestOf(["tab\there", "back\\u0041slash", "quote\"d", "ü"]),
        bad,
      ];
      manifests.forEach((bytes, i) => writeFileSync(join(dir, `${i}.manifest`), bytes));
      const script = join(dir, "parse.ts");
      writeFileSync(
        script,
        `import { readFileSync } from "node:fs";\nimport { parseManifestEntries } from ${JSON.stringify(join(import.meta.dir, "../../src/repo/manifest-parse"))};\nimport { nativeModule } from ${JSON.stringify(join(import.meta.dir, "../../src/repo/native"))};\nconst out = [nativeModule() === null];\nfor (let i = 0; i < ${manifests.length}; i++) out.push(parseManifestEntries(readFileSync(\`${dir}/\${i}.manifest\`)));\nconsole.log(JSON.stringify(out));\n`,
      );
      const p = Bun.spawnSync([process.execPath, script], { env: { ...process.env, WORKSNAP_NATIVE: "0" } });
      expect(p.stderr.toString()).toBe("");
      const [without, ...parsed] = JSON.parse(p.stdout.toString()) as [boolean, ...ManifestEntry[][]];
      expect(without).toBe(true);
      expect(parsed).toEqual(manifests.map((bytes) => parseManifestEntries(bytes)));
      expect(parsed).toEqual(manifests.map((bytes) => whole(bytes)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
