import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { hexOfBlobId, type BlobId } from "../../src/core/hash";
import { GitBlobMap } from "../../src/repo/git-blob-map";

const sha = (c: string) => c.repeat(64);

describe("GitBlobMap", () => {
  test("oids sharing a 48-bit prefix stay distinct; sha1 and sha256 oids both work", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-map-"));
    try {
      const a = `abcdef012345${"1".repeat(28)}`;
      const b = `abcdef012345${"2".repeat(28)}`;
      const long = "f".repeat(64);
      const m = new GitBlobMap(dir);
      m.add([{ oid: a, sha256: sha("a"), size: 1 }, { oid: b, sha256: sha("b"), size: 2 }, { oid: long, sha256: sha("c"), size: 3 }]);
      const fresh = new GitBlobMap(dir);
      expect(fresh.get(a)).toEqual({ sha256: sha("a"), size: 1 });
      expect(fresh.get(b)).toEqual({ sha256: sha("b"), size: 2 });
      expect(fresh.get(long)).toEqual({ sha256: sha("c"), size: 3 });
      expect(fresh.get(`abcdef012345${"3".repeat(28)}`)).toBeUndefined();
      expect(fresh.oidOf(sha("b"))).toBe(b);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("by SHA-256: blobs whose SHA-256s share a 48-bit prefix stay distinct; a size and an oid for each, nothing for one not recorded", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-map-"));
    try {
      const s1 = `0123456789ab${"1".repeat(52)}`;
      const s2 = `0123456789ab${"2".repeat(52)}`;
      const s3 = `0123456789ab${"3".repeat(52)}`;
      const m = new GitBlobMap(dir);
      m.add([
        { oid: "1".repeat(40), sha256: s1, size: 10 },
        { oid: "2".repeat(40), sha256: s2, size: 20 },
        { oid: "3".repeat(64), sha256: s3, size: 30 },
      ]);
      const fresh = new GitBlobMap(dir);
      expect([fresh.sizeKnown(s1), fresh.sizeKnown(s2), fresh.sizeKnown(s3)]).toEqual([10, 20, 30]);
      expect([fresh.oidKnown(s1), fresh.oidKnown(s2), fresh.oidKnown(s3)]).toEqual(["1".repeat(40), "2".repeat(40), "3".repeat(64)]);
      expect(fresh.sizeKnown(`0123456789ab${"4".repeat(52)}`)).toBeUndefined();
      expect(fresh.sizeKnown("0123456789ab")).toBeUndefined();
      // records another process appends reach the index already built, at the next reload
      new GitBlobMap(dir).add([{ oid: "5".repeat(40), sha256: `0123456789ab${"5".repeat(52)}`, size: 50 }]);
      expect(fresh.sizeKnown(`0123456789ab${"5".repeat(52)}`)).toBeUndefined();
      fresh.reload();
      expect(fresh.sizeKnown(`0123456789ab${"5".repeat(52)}`)).toBe(50);
      expect(fresh.oidOf(`0123456789ab${"2".repeat(52)}`)).toBe("2".repeat(40));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("sizesKnown: many ids at once answer as sizeKnown does one by one (shared prefixes, a blob recorded twice, ids not recorded, ids of another form)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-map-"));
    try {
      const m = new GitBlobMap(dir);
      const recorded = Array.from({ length: 3000 }, (_, i) => ({ oid: i.toString(16).padStart(40, "0"), sha256: createHash("sha256").update(String(i)).digest("hex"), size: i * 7 }));
      // SHA-256s sharing their first 48 bits, and one blob recorded again with another oid (the later record answers)
      recorded.push({ oid: "a".repeat(40), sha256: `0123456789ab${"1".repeat(52)}`, size: 11 }, { oid: "b".repeat(40), sha256: `0123456789ab${"2".repeat(52)}`, size: 22 });
      recorded.push({ oid: "c".repeat(64), sha256: recorded[5]!.sha256, size: 36 });
      m.add(recorded);
      const fresh = new GitBlobMap(dir);
      const ids = [
        ...recorded.map((r) => `sha256:${r.sha256}` as BlobId),
        `sha256:0123456789ab${"3".repeat(52)}` as BlobId, // not recorded, its prefix is
        `sha256:${"e".repeat(64)}` as BlobId, // not recorded
        `sha256:${recorded[9]!.sha256.toUpperCase()}` as BlobId, // upper case: looked up as sizeKnown reads it
        `sha256:${recorded[9]!.sha256.slice(0, 40)}` as BlobId, // too short
        "sha256:" as BlobId,
        `${"x".repeat(71)}` as BlobId,
        `sha256:${"é".repeat(64)}` as BlobId,
      ];
      const one = ids.map((id) => fresh.sizeKnown(hexOfBlobId(id)) ?? -1);
      expect([...fresh.sizesKnown(ids)]).toEqual(one);
      expect(one.slice(0, 3)).toEqual([0, 7, 14]);
      expect(one[5]).toBe(36);
      expect(one.at(-7)).toBe(-1);
      expect(one.at(-5)).toBe(63);
      expect([...new GitBlobMap(mkdtempSync(join(tmpdir(), "ws-map-empty-"))).sizesKnown(ids.slice(0, 3))]).toEqual([-1, -1, -1]);
      expect([...fresh.sizesKnown([])]).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a torn tail from a crashed writer is ignored; appends by another process are picked up", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-map-"));
    try {
      const oid = "1".repeat(40);
      const reader = new GitBlobMap(dir);
      reader.ensureLoaded();
      new GitBlobMap(dir).add([{ oid, sha256: sha("d"), size: 7 }]);
      appendFileSync(join(dir, "cache", "gitblobs.bin"), Buffer.alloc(30, 9));
      expect(reader.oidOf(sha("d"))).toBe(oid);
      const fresh = new GitBlobMap(dir);
      expect(fresh.get(oid)).toEqual({ sha256: sha("d"), size: 7 });
      const next = "2".repeat(40);
      fresh.add([{ oid: next, sha256: sha("e"), size: 8 }]);
      const after = new GitBlobMap(dir);
      expect(after.get(oid)).toEqual({ sha256: sha("d"), size: 7 });
      expect(after.get(next)).toEqual({ sha256: sha("e"), size: 8 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("records added for later reach the file at flush, or before this map answers anything (its reads see them)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-map-"));
    try {
      const a = "a".repeat(40);
      const b = "b".repeat(40);
      const m = new GitBlobMap(dir);
      m.addLater([{ oid: a, sha256: sha("a"), size: 1 }]);
      expect(existsSync(join(dir, "cache", "gitblobs.bin"))).toBe(false);
      expect(new GitBlobMap(dir).get(a)).toBeUndefined();
      expect(m.isEmpty()).toBe(false); // a read flushes first
      expect(new GitBlobMap(dir).get(a)).toEqual({ sha256: sha("a"), size: 1 });
      m.addLater([{ oid: b, sha256: sha("b"), size: 2 }]);
      expect(new GitBlobMap(dir).get(b)).toBeUndefined();
      m.flush();
      expect(new GitBlobMap(dir).get(b)).toEqual({ sha256: sha("b"), size: 2 });
      expect(m.oidOf(sha("b"))).toBe(b);
      m.flush(); // nothing left: no record twice
      expect(statSync(join(dir, "cache", "gitblobs.bin")).size).toBe(2 * 72);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
