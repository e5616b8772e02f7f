/**
 * The trigram index's segments: every posting list holds exactly the blobs
 * whose bytes hold the trigram (checked against a brute-force scan), both
 * list encodings read back, a damaged segment is refused, and the native
 * build writes the very bytes the TypeScript build writes, for the same files,
 * with the same verdict on each file.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSegment, BINARY, DEFERRED, EXPECT_GIT_SHA1, EXPECT_GIT_SHA256, EXPECT_SHA256, EXPECT_SHA256_OF_GIT_SHA1, GONE, MISMATCH, TEXT, TOO_LARGE, type BuildItem } from "../../../src/repo/trigram-index/build";
import { CorruptSegment, Segment, encodeSegment, trigramsOf, type SegmentBlob } from "../../../src/repo/trigram-index/segment";
import { nativeModule } from "../../../src/repo/native";
import { tmpRepo } from "../../helpers/tmp-repo";

const enc = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
const tri = (s: string) => ((s.charCodeAt(0) << 16) | (s.charCodeAt(1) << 8) | s.charCodeAt(2)) >>> 0;

function blobOf(bytes: Uint8Array, gitOid = new Uint8Array(0)): SegmentBlob {
  const trigrams = trigramsOf(bytes);
  return { sha256: new Bun.CryptoHasher("sha256").update(bytes).digest(), gitOid, size: bytes.length, binary: trigrams === null, trigrams: trigrams ?? new Uint32Array(0) };
}

/** The ordinals of `segment` whose blob holds trigram `t`, read through orPostings. */
function holders(segment: Segment, t: number): number[] {
  const bits = new Uint32Array((segment.blobs + 31) >>> 5);
  segment.orPostings(t, bits);
  const out: number[] = [];
  for (let o = 0; o < segment.blobs; o++) if ((bits[o >>> 5]! >>> (o & 31)) & 1) out.push(o);
  return out;
}

describe("trigramsOf", () => {
  test("the distinct byte trigrams, sorted; none below three bytes; null for git's binary", () => {
    expect([...trigramsOf(enc("abcd"))!]).toEqual([tri("abc"), tri("bcd")]);
    expect([...trigramsOf(enc("aaaaaa"))!]).toEqual([tri("aaa")]);
    expect([...trigramsOf(enc("ab"))!]).toEqual([]);
    expect([...trigramsOf(enc(""))!]).toEqual([]);
    expect(trigramsOf(new Uint8Array([0x61, 0, 0x62, 0x63]))).toBeNull();
    // a NUL past the first 8000 bytes: text, as grep has it
    const late = new Uint8Array(8005).fill(0x61);
    late[8001] = 0;
    expect([...trigramsOf(late)!]).toEqual([tri("aaa"), 0x616100, 0x610061, 0x006161].sort((a, b) => a - b));
    // bytes, not characters: "é" is two
    expect([...trigramsOf(enc("xé"))!]).toEqual([(0x78 << 16) | (0xc3 << 8) | 0xa9]);
  });
});

describe("segments", () => {
  test("every posting list is exactly the blobs holding its trigram (both encodings)", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }).map((b) => b.map((x) => 0x61 + (x % 5))), { minLength: 1, maxLength: 40 }), (contents) => {
        const blobs = contents.map((c) => blobOf(c));
        const segment = new Segment(encodeSegment(blobs));
        segment.verify();
        const order = [...new Set(contents.map((c) => Buffer.from(c).toString("latin1")))].map((s) => enc(s)).sort((a, b) => Buffer.compare(blobOf(a).sha256, blobOf(b).sha256));
        expect(segment.blobs).toBe(order.length);
        for (let a = 0; a < 5; a++)
          for (let b = 0; b < 5; b++)
            for (let c = 0; c < 5; c++) {
              const t = ((0x61 + a) << 16) | ((0x61 + b) << 8) | (0x61 + c);
              const want = order.flatMap((bytes, o) => (Buffer.from(bytes).includes(Buffer.from([0x61 + a, 0x61 + b, 0x61 + c])) ? [o] : []));
              expect(holders(segment, t)).toEqual(want);
            }
      }),
      { numRuns: 60 },
    );
  });

  test("blob records: SHA-256 order, git ids, binary flags; bitmaps for dense lists", () => {
    const many = Array.from({ length: 200 }, (_, i) => enc(`common text ${i} ${i % 7 === 0 ? "rare" : ""}`));
    const binary = new Uint8Array([1, 0, 2, 3]);
    const oid = Buffer.from("11".repeat(20), "hex");
    const segment = new Segment(encodeSegment([...many.map((b) => blobOf(b)), blobOf(binary, oid)]));
    expect(segment.blobs).toBe(201);
    const shas = Array.from({ length: 201 }, (_, o) => segment.sha256Hex(o));
    expect(shas).toEqual([...shas].sort());
    const b = shas.indexOf(Buffer.from(blobOf(binary).sha256).toString("hex"));
    expect(segment.binary(b)).toBe(true);
    expect(segment.gitOidHex(b)).toBe("11".repeat(20));
    expect(segment.gitOidHex(b === 0 ? 1 : 0)).toBe("");
    expect(holders(segment, tri("com")).length).toBe(200); // dense: a bitmap
    expect(holders(segment, tri("rar")).length).toBe(29); // sparse: gaps
    expect(holders(segment, tri("zzz"))).toEqual([]);
  });

  test("a damaged segment is refused, never read", () => {
    const bytes = encodeSegment([blobOf(enc("hello world")), blobOf(enc("another one"))]);
    const flipped = bytes.slice();
    flipped[bytes.length - 40]! ^= 1;
    expect(() => new Segment(flipped).verify()).toThrow(CorruptSegment);
    expect(() => new Segment(bytes.subarray(0, bytes.length - 1))).toThrow(CorruptSegment);
    const wrongVersion = bytes.slice();
    wrongVersion[8] = 9;
    expect(() => new Segment(wrongVersion)).toThrow(CorruptSegment);
    expect(() => new Segment(enc("not a segment at all, not even close to one"))).toThrow(CorruptSegment);
  });
});

describe("building a segment from files", () => {
  const m = nativeModule();

  for (const format of ["sha1", "sha256"] as const)
  test.skipIf(!m)(`native and TypeScript builds write the same segment and the same verdicts (a ${format === "sha1" ? "SHA-1" : "SHA-256"} repository)`, async () => {
    await using repo = await tmpRepo({ git: false });
    repo.git("init", "-q", `--object-format=${format}`, "-b", "main");
    const big = Array.from({ length: 90_000 }, (_, i) => `line ${i} of a file larger than one read: ${i % 13 === 0 ? "needle" : "hay"}`).join("\n");
    const files: Record<string, string | Uint8Array> = {
      "a.txt": "hello world\n",
      "b.txt": "hello there\r\nworld\r\n",
      "empty.txt": "",
      "two.txt": "ab",
      // one, three and four trigrams: the native grouping's two halves with an odd one left over, and even
      "one.txt": "abc",
      "three.txt": "abcde",
      "four.txt": "zabcz",
      "unicode.md": "日本語 café ſ \u212a\n",
      "bin.png": new Uint8Array([0x89, 0x50, 0, 0x47, 1, 2, 3]),
      "big/large.log": big, // over the native reads' 1 MiB chunks: trigrams across chunk edges
      "dup/a.txt": "hello world\n", // the same blob as a.txt
      "changed.txt": "as committed\n",
      "deleted.txt": "soon gone\n",
      "huge.txt": "x".repeat(5000),
    };
    for (const [p, c] of Object.entries(files)) repo.write(p, c);
    repo.commit();
    const listing = repo.git("ls-files", "-s", "-z").split("\0").filter(Boolean);
    const items: BuildItem[] = listing.map((rec) => ({ path: rec.slice(rec.indexOf("\t") + 1), kind: format === "sha1" ? EXPECT_GIT_SHA1 : EXPECT_GIT_SHA256, id: rec.split(" ")[1]! }));
    repo.write("changed.txt", "changed since\n");
    rmSync(join(repo.root, "deleted.txt"));
    // a loose blob checked by its SHA-256, by absolute path
    writeFileSync(join(repo.root, "loose.bin"), "stored elsewhere\n");
    const loose = { path: join(repo.root, "loose.bin"), kind: EXPECT_SHA256, id: new Bun.CryptoHasher("sha256").update("stored elsewhere\n").digest("hex") } as const;
    const opts = { fileLimit: 4096, pairCap: 1e9, background: false };
    const nat = await buildSegment(m, repo.root, items, { ...opts, fileLimit: 16 << 20 });
    const ts = await buildSegment(null, repo.root, items, { ...opts, fileLimit: 16 << 20 });
    expect(Buffer.from(nat.segment!).equals(Buffer.from(ts.segment!))).toBe(true);
    expect([...nat.status]).toEqual([...ts.status]);
    const byPath = Object.fromEntries(items.map((item, i) => [item.path, nat.status[i]]));
    expect(byPath).toMatchObject({ "a.txt": TEXT, "bin.png": BINARY, "changed.txt": MISMATCH, "deleted.txt": GONE, "big/large.log": TEXT, "empty.txt": TEXT, "dup/a.txt": TEXT });
    const segment = new Segment(nat.segment!);
    expect(segment.blobs).toBe(items.length - 2 - 1); // changed and deleted left out, a.txt and dup/a.txt one blob
    // the big file's trigrams are all there, across the chunk edges
    const bigSha = new Bun.CryptoHasher("sha256").update(big).digest("hex");
    const o = Array.from({ length: segment.blobs }, (_, k) => segment.sha256Hex(k)).indexOf(bigSha);
    for (const t of trigramsOf(enc(big))!) expect(holders(segment, t)).toContain(o);
    // file limit, the memory cap, and a SHA-256 check
    for (const mod of [m, null]) {
      const small = await buildSegment(mod, repo.root, items, { ...opts, fileLimit: 4096 });
      expect(small.status[items.findIndex((i) => i.path === "huge.txt")]).toBe(TOO_LARGE);
      const capped = await buildSegment(mod, repo.root, items, { ...opts, fileLimit: 16 << 20, pairCap: 1 });
      expect([...capped.status].filter((s) => s === DEFERRED).length).toBeGreaterThan(0);
      const l = await buildSegment(mod, "", [loose, { ...loose, id: "00".repeat(32) }], { ...opts, fileLimit: 16 << 20 });
      expect([...l.status]).toEqual([TEXT, MISMATCH]);
    }
  });
  test("without the native module in the background: on a worker, the segment of the build here; closing one indexer drops its jobs only", async () => {
    await using repo = await tmpRepo();
    for (let f = 0; f < 300; f++) repo.write(`d${f % 5}/f${f}.ts`, `export const value${f} = "${"abcdefghij".repeat(1 + (f % 7))}";\n${f % 9 === 0 ? "// handleRequest\n" : ""}`);
    repo.write("bin.png", new Uint8Array([0x89, 0x50, 0, 1]));
    repo.commit();
    repo.write("d0/f0.ts", "changed since the commit\n");
    const listing = repo.git("ls-files", "-s", "-z").split("\0").filter(Boolean);
    const items: BuildItem[] = listing.map((rec) => ({ path: rec.slice(rec.indexOf("\t") + 1), kind: EXPECT_GIT_SHA1, id: rec.split(" ")[1]! }));
    const here = await buildSegment(null, repo.root, items, { fileLimit: 16 << 20, pairCap: 1e9, background: false });
    const a = new AbortController();
    const b = new AbortController();
    const background = (signal: AbortSignal) => buildSegment(null, repo.root, items, { fileLimit: 16 << 20, pairCap: 1e9, background: true, signal });
    // two indexers' jobs at once, each on its own worker; the first closes while its job runs
    const first = background(a.signal);
    const second = [background(b.signal), background(b.signal)];
    a.abort(new Error("indexer closed"));
    await expect(first).rejects.toThrow("indexer closed");
    for (const r of await Promise.all(second)) {
      expect(Buffer.from(r.segment!).equals(Buffer.from(here.segment!))).toBe(true);
      expect([...r.status]).toEqual([...here.status]);
    }
    expect(here.status[items.findIndex((i) => i.path === "d0/f0.ts")]).toBe(MISMATCH);
    // after its worker went idle, a job gets a new one
    await Bun.sleep(1200);
    const later = await background(b.signal);
    expect(Buffer.from(later.segment!).equals(Buffer.from(here.segment!))).toBe(true);
    // a job cut by the memory cap comes back DEFERRED from the worker as from here
    const capped = await buildSegment(null, repo.root, items, { fileLimit: 16 << 20, pairCap: 2, background: true, signal: b.signal });
    expect([...capped.status].filter((s) => s === DEFERRED).length).toBeGreaterThan(0);
  });

  test.skipIf(!m)("native and TypeScript builds agree on 600 files sharing most of their trigrams (long posting lists, multibyte characters)", async () => {
    await using repo = await tmpRepo();
    let x = 12345;
    const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8;
    // a small alphabet with a few bytes of every kind: most trigrams are held by many files, in both encodings
    const alphabet = "etaoin shrdlu\n{}();=\u00e9\u65e5\t";
    for (let f = 0; f < 600; f++) {
      let text = "";
      for (let i = 0, n = 200 + (next() % 3000); i < n; i++) text += alphabet[next() % alphabet.length];
      repo.write(`d${f % 7}/f${f}.txt`, text);
    }
    repo.commit();
    const listing = repo.git("ls-files", "-s", "-z").split("\0").filter(Boolean);
    const items: BuildItem[] = listing.map((rec) => ({ path: rec.slice(rec.indexOf("\t") + 1), kind: EXPECT_GIT_SHA1, id: rec.split(" ")[1]! }));
    const opts = { fileLimit: 16 << 20, pairCap: 1e9, background: false };
    const nat = await buildSegment(m, repo.root, items, opts);
    const ts = await buildSegment(null, repo.root, items, opts);
    expect(new Segment(nat.segment!).blobs).toBe(600);
    expect(Buffer.from(nat.segment!).equals(Buffer.from(ts.segment!))).toBe(true);
    // checked by the SHA-256 a capture verified, the git id recorded as given: the same segment, both ways
    const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(join(repo.root, path))).digest("hex");
    const bySha: BuildItem[] = items.map((i) => ({ path: i.path, kind: EXPECT_SHA256_OF_GIT_SHA1, id: sha(i.path), gitOid: i.id }));
    for (const mod of [m, null]) {
      const b = await buildSegment(mod, repo.root, bySha, opts);
      expect(Buffer.from(b.segment!).equals(Buffer.from(nat.segment!))).toBe(true);
    }
    // a SHA-256 the file does not hold: left out, both ways
    const wrong = [{ ...bySha[0]!, id: "0".repeat(64) }, bySha[1]!];
    for (const mod of [m, null]) expect([...(await buildSegment(mod, repo.root, wrong, opts)).status]).toEqual([MISMATCH, TEXT]);
  });
});
