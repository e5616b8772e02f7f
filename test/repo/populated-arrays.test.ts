/**
 * The arrays the native module carves out of populated blocks (src/native/populated.c): a many-file read's bytes
 * (TreeHandles.readEntries) and a many-file apply's new bytes (applyHunksMany). Each array holds its block: one
 * array kept while the others of its call are collected still has its bytes, whatever memory is reused after; and
 * the blocks of arrays no longer held are given back, call after call.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyHunksMany } from "../../src/ops/patch/apply";
import { parsePatch } from "../../src/ops/patch/parse";
import { unifiedDiff } from "../../src/ops/diff/unified";
import { TreeHandles } from "../../src/repo/dir-handle";
import { nativeModule } from "../../src/repo/native";
import { collect, collectAndChurn, rssMb } from "../helpers/memory";
import { tmpDir } from "../helpers/tmp-repo";

const native = nativeModule();

/** Bytes of file k: its size and a fill that differs from file to file. */
function fileBytes(k: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (k * 31 + i * 7 + (i >> 12)) & 0xff;
  return b;
}

describe.skipIf(!native)("arrays carved from populated blocks", () => {
  test("a read's bytes kept after the others of its call are collected are still the file's, in blocks shared and of their own", async () => {
    await using d = tmpDir("ws-populated-");
    // sizes across the carver's blocks (64 KiB doubling to 2 MiB): empty, tiny, around 8-byte alignment, larger than a
    // block (its own), and enough of them to fill several blocks per thread
    const sizes = [0, 1, 7, 8, 9, 4095, 4096, 4097, 65_536, 65_537, 3 << 20, ...Array.from({ length: 53 }, (_, k) => 1_000 + k * 13_331)];
    const names = sizes.map((_, k) => `f${k}`);
    sizes.forEach((size, k) => writeFileSync(join(d.path, names[k]!), fileBytes(k, size)));
    const t = TreeHandles.open(d.path);
    const kept: { k: number; bytes: Uint8Array }[] = [];
    try {
      const read = t.readEntries(names.map((name) => ({ dir: t.dir("")!, name })));
      read.forEach((e, k) => {
        if (e instanceof Error || !e.read || e.read instanceof Error) throw new Error(`f${k} not read`);
        expect(Buffer.from(e.read.bytes).equals(fileBytes(k, sizes[k]!))).toBe(true);
        if (k % 7 === 3 || sizes[k]! > 2 << 20) kept.push({ k, bytes: e.read.bytes });
      });
    } finally {
      t.close();
    }
    // the files change on disk: the kept arrays are the bytes read then, in memory
    sizes.forEach((size, k) => writeFileSync(join(d.path, names[k]!), fileBytes(k + 1, size)));
    await collectAndChurn();
    for (const { k, bytes } of kept) expect(Buffer.from(bytes).equals(fileBytes(k, sizes[k]!))).toBe(true);
  });

  test("a file whose stat says 0 bytes but holds more (/proc) is read whole", () => {
    const t = TreeHandles.open(`/proc/${process.pid}`);
    try {
      const names = ["status", "stat", "statm", "cmdline", "limits", "maps", "mountinfo", "sched", "io", "environ", "smaps", "comm", "cgroup", "mounts", "wchan", "personality"];
      const read = t.readEntries(names.map((name) => ({ dir: t.dir("")!, name })));
      const text = (k: number) => {
        const e = read[k]!;
        if (e instanceof Error || !e.read || e.read instanceof Error) return null;
        expect(e.stat?.size).toBe(0);
        return Buffer.from(e.read.bytes).toString("latin1");
      };
      expect(text(names.indexOf("status"))).toStartWith("Name:");
      expect(text(names.indexOf("limits"))).toStartWith("Limit");
      expect(text(names.indexOf("smaps"))!.length).toBeGreaterThan(4096);
    } finally {
      t.close();
    }
  });

  test("call after call, the read blocks whose arrays are dropped are given back", async () => {
    await using d = tmpDir("ws-populated-");
    mkdirSync(join(d.path, "s"));
    const names = Array.from({ length: 40 }, (_, k) => `s/f${k}`);
    names.forEach((n, k) => writeFileSync(join(d.path, n), fileBytes(k, 256 << 10)));
    const t = TreeHandles.open(d.path);
    try {
      const items = names.map((n) => ({ dir: t.dir("s")!, name: n.slice(2) }));
      const readAll = () => {
        const read = t.readEntries(items);
        let sum = 0;
        for (const e of read) if (!(e instanceof Error) && e.read && !(e.read instanceof Error)) sum += e.read.bytes[e.read.bytes.length - 1]!;
        return sum;
      };
      const expected = readAll();
      const before = await rssMb();
      // 80 calls of 10 MB each: 800 MB were the blocks kept
      for (let round = 0; round < 80; round++) {
        expect(readAll()).toBe(expected);
        if (round % 8 === 7) await collect();
      }
      expect((await rssMb()) - before).toBeLessThan(250);
    } finally {
      t.close();
    }
  });

  /** A patch of `files` files of about `size` bytes, each given a few changed lines, and the files it applies to. */
  function patchOf(files: number, size: number) {
    const olds: Uint8Array[] = [];
    const news: Buffer[] = [];
    let patch = "";
    for (let k = 0; k < files; k++) {
      const lines = Array.from({ length: Math.max(4, Math.floor(size / 32)) }, (_, i) => `file ${k} line ${i} ${"x".repeat(i % 11)}\n`);
      const old = Buffer.from(lines.join(""));
      lines[1] = `changed ${k}\n`;
      lines[lines.length - 2] = `changed too ${k}\n`;
      const next = Buffer.from(lines.join(""));
      olds.push(old);
      news.push(next);
      patch += unifiedDiff({ path: `f${k}`, bytes: old, mode: "100644" }, { path: `f${k}`, bytes: next, mode: "100644" }, { context: 3 });
    }
    const parsed = parsePatch(patch);
    return { items: parsed.files.map((f, k) => ({ bytes: olds[k]!, hunks: f.hunks })), news };
  }

  test("an apply's new bytes kept after the others of its call are collected are still the new file's", async () => {
    const { items, news } = patchOf(48, 40_000);
    const results = applyHunksMany(items);
    const kept: { k: number; bytes: Uint8Array }[] = [];
    results.forEach((r, k) => {
      if (!r.ok) throw new Error(`f${k} not applied`);
      expect(Buffer.from(r.bytes).equals(news[k]!)).toBe(true);
      if (k % 5 === 2) kept.push({ k, bytes: r.bytes });
    });
    results.length = 0;
    await collectAndChurn();
    for (const { k, bytes } of kept) expect(Buffer.from(bytes).equals(news[k]!)).toBe(true);
  });

  test("call after call, the apply blocks whose arrays are dropped are given back", async () => {
    const { items, news } = patchOf(40, 256 << 10);
    const before = await rssMb();
    // 80 applies of 10 MB of new bytes each
    for (let round = 0; round < 80; round++) {
      const results = applyHunksMany(items);
      const last = results[results.length - 1]!;
      expect(last.ok && Buffer.from(last.bytes).equals(news[news.length - 1]!)).toBe(true);
      if (round % 8 === 7) await collect();
    }
    expect((await rssMb()) - before).toBeLessThan(250);
  });
});
