/**
 * The native reader answers every request, in order, with what its file
 * calls for, however the requests are batched and however its jobs' files
 * finish against the thread waiting for them (a wake-up lost between a file
 * finishing and the wait being set left a grep call waiting until its time
 * budget ran out).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sharedHashMemory } from "../../../src/ops/grep/hash-memory";
import { NativeReader } from "../../../src/ops/grep/native-reader";
import type { ReadFilter, ReadOutcome } from "../../../src/ops/grep/reader-pool";
import { nativeModule } from "../../../src/repo/native";
import { tempDir } from "./fixtures";

const m = nativeModule();
const encode = (s: string) => new TextEncoder().encode(s);

describe.skipIf(!m)("native reader", () => {
  const tmp = tempDir("native-reader");
  afterAll(() => tmp[Symbol.dispose]());
  // a file with the literal, one without, a binary one; and a path that holds nothing
  const kinds = ["bytes", "skip", "binary", "gone"] as const;
  const files = Array.from({ length: 64 }, (_, i) => ({ path: join(tmp.dir, `f${i}`), kind: kinds[i % 4]!, text: `line ${i}\nthe needle ${i}\n` }));
  for (const [i, f] of files.entries()) {
    if (f.kind === "bytes") writeFileSync(f.path, f.text);
    if (f.kind === "skip") writeFileSync(f.path, `line ${i}\nnothing here\n`);
    if (f.kind === "binary") writeFileSync(f.path, new Uint8Array([0x6e, 0x65, 0, 0x64, i]));
  }
  const filter: ReadFilter = { literals: [encode("needle")], required: [], scan: null, limit: 1 << 20 };

  const kindOf = (err: unknown, read: ReadOutcome | null) => (err ? ((err as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : String(err)) : read!.kind);

  test("every request answered in order with its file's outcome, over 20,000 waits on jobs of one to seven files", async () => {
    const reader = new NativeReader(m!, 8000, sharedHashMemory(), false);
    let slowest = 0;
    for (let round = 0; round < 20_000; round++) {
      const batch = files.slice(round % 57, (round % 57) + 1 + (round % 7));
      const started = performance.now();
      const answers = await new Promise<string[]>((resolve) => {
        const got: string[] = [];
        for (const f of batch)
          reader.read(f.path, filter, 10, false, (err, read) => {
            got.push(`${f.path} ${kindOf(err, read)}`);
            if (got.length === batch.length) resolve(got);
          });
      });
      slowest = Math.max(slowest, performance.now() - started);
      expect(answers).toEqual(batch.map((f) => `${f.path} ${f.kind}`));
    }
    // a lost wake-up waits for the backstop's look (50 ms), or forever without it; a read of a few small files
    // takes well under a millisecond
    expect(slowest).toBeLessThan(2_000);
  }, 120_000);

  test("the bytes of a file that may match come back whole; a request past a full job's worth is answered too", async () => {
    const reader = new NativeReader(m!, 8000, sharedHashMemory(), false);
    const many = Array.from({ length: 1_300 }, (_, i) => files[i % files.length]!);
    const got = await new Promise<{ path: string; kind: string; text: string | null; file: (typeof files)[number] }[]>((resolve) => {
      const out: { path: string; kind: string; text: string | null; file: (typeof files)[number] }[] = [];
      for (const f of many)
        reader.read(f.path, filter, 10, false, (err, read) => {
          out.push({ path: f.path, kind: kindOf(err, read), text: read?.kind === "bytes" ? new TextDecoder().decode(read.bytes) : null, file: f });
          if (out.length === many.length) resolve(out);
        });
    });
    expect(got.map((g) => `${g.path} ${g.kind}`)).toEqual(many.map((f) => `${f.path} ${f.kind}`));
    for (const g of got) if (g.kind === "bytes") expect(g.text).toBe(g.file.text);
  });
});
