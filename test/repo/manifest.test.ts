/**
 * The manifest written directly is the canonical JSON of its entries (spec
 * 2.4), as text and as the bytes a capture hashes and saves, whatever the
 * paths hold: quotes, backslashes, control characters, DEL, non-ASCII and
 * astral characters, or plain ASCII (copied byte for byte, not encoded).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compareUtf8 } from "../../src/core/byte-order";
import { canonicalJson } from "../../src/core/canonical-json";
import type { BlobId } from "../../src/core/hash";
import { encodeManifest, manifestBytes, manifestJson, toManifestEntry } from "../../src/repo/manifest";

const piece = fc.constantFrom("src", "a.ts", "x y", '"q"', "back\\slash", "tab\t", "nl\n", "\u0001", "\u007f", "é", "日本", "\u{1F600}", "\u2028", "~", "-");

const entry = fc.record({
  path: fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join("/")),
  blob: fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => `sha256:${h}` as BlobId),
  mode: fc.constantFrom("100644", "100755", "120000"),
});

describe("manifest text and bytes", () => {
  test("equal canonicalJson of the entries, for every kind of path and mode (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.path, maxLength: 30 }), (raw) => {
        const entries = raw.sort((a, b) => compareUtf8(a.path, b.path));
        const canonical = canonicalJson({ entries: entries.map(toManifestEntry) });
        expect(manifestJson(entries)).toBe(canonical);
        expect(manifestJson(entries.map(toManifestEntry))).toBe(canonical);
        expect(Buffer.from(manifestBytes(entries)).equals(Buffer.from(new TextEncoder().encode(canonical)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("an all-ASCII manifest and one with a single non-ASCII path are both UTF-8", () => {
    const blob = `sha256:${"0".repeat(64)}` as BlobId;
    expect(new TextDecoder().decode(manifestBytes([{ path: "a", blob }]))).toBe(`{"entries":[{"blob":"${blob}","path":"a"}]}`);
    const bytes = manifestBytes([{ path: "a", blob }, { path: "é", blob, mode: "100755" }]);
    expect([...bytes.subarray(bytes.length - 6)]).toEqual([0xc3, 0xa9, 0x22, 0x7d, 0x5d, 0x7d]);
  });
});

describe("manifest bytes of paths longer when quoted than their length", () => {
  test("control characters (six bytes each when quoted) and three-byte characters grow the buffer, and the bytes stay the canonical text's", () => {
    const blob = `sha256:${"ab".repeat(32)}` as BlobId;
    const entries = Array.from({ length: 400 }, (_, i) => ({ path: `${String(i).padStart(3, "0")}/${i % 2 ? "\u0001".repeat(60) : "日".repeat(60)}`, blob, mode: i % 3 ? "100644" : "100755" }));
    const canonical = canonicalJson({ entries: entries.map(toManifestEntry) });
    expect(Buffer.from(manifestBytes(entries)).equals(Buffer.from(new TextEncoder().encode(canonical)))).toBe(true);
    expect(manifestJson(entries)).toBe(canonical);
    expect(new TextDecoder().decode(manifestBytes([]))).toBe('{"entries":[]}');
  });
});

describe("a manifest encoded in pieces (encodeManifest)", () => {
  test("its pieces, each of at least the piece size but the last, make the bytes of one encoding, wherever they are cut (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.path, maxLength: 700 }), fc.integer({ min: 1, max: 40_000 }), (raw, chunk) => {
        const entries = raw.sort((a, b) => compareUtf8(a.path, b.path));
        const pieces: Uint8Array[] = [];
        encodeManifest(entries, (b) => pieces.push(b.slice()), chunk);
        expect(Buffer.concat(pieces).equals(Buffer.from(manifestBytes(entries)))).toBe(true);
        for (const p of pieces.slice(0, -1)) expect(p.length).toBeGreaterThanOrEqual(chunk);
      }),
      { numRuns: 300 },
    );
  });
});
