/**
 * The read ahead's answers to the engine (prefetch.ts): each file asked about gets exactly one answer, the right
 * one, whether it was read already or is still being read, and whatever order the engine asks in (the waiters
 * are woken in index order while they were asked in it, and all of them otherwise).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { GrepPrefetch, type Settled } from "../../../src/ops/grep/prefetch";
import { compileQuery } from "../../../src/ops/grep/query";
import { readFilterOf } from "../../../src/ops/grep/region-search";
import { nativeModule } from "../../../src/repo/native";
import { tmpDir } from "../../helpers/tmp-repo";
import { rng } from "../patch/fixtures";

const native = nativeModule();

/** `count` files under `root`, in byte order; every seventh holds the needle, every thirteenth is binary. */
function seedFiles(root: string, count: number): string[] {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = `d${String(i % 10)}/f${String(i).padStart(5, "0")}.txt`;
    const body = i % 13 === 0 ? `\u0000bin${i}` : i % 7 === 0 ? `line ${i}\nhas the NeedleWord here\n` : `line ${i}\nnothing\n`.repeat(1 + (i % 5));
    mkdirSync(`${root}/d${String(i % 10)}`, { recursive: true });
    writeFileSync(`${root}/${path}`, body);
    paths.push(path);
  }
  return paths.sort();
}

/** What the read ahead must answer for a file: binary, no match, or null (the engine reads it itself). */
function expected(path: string): "binary" | "none" | "read" {
  const i = Number(/f(\d+)/.exec(path)![1]);
  return i % 13 === 0 ? "binary" : i % 7 === 0 ? "read" : "none";
}

const kindOf = (s: Settled | null) => (s === null ? "read" : s.binary ? "binary" : "none");

describe.if(native !== null)("the read ahead's outcomes", () => {
  for (const [name, order] of [
    ["in walk order", (n: number) => Array.from({ length: n }, (_, i) => i)],
    ["in reverse", (n: number) => Array.from({ length: n }, (_, i) => n - 1 - i)],
    ["shuffled", (n: number) => {
      const r = rng(4242);
      const a = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = r.int(i + 1);
        [a[i], a[j]] = [a[j]!, a[i]!];
      }
      return a;
    }],
  ] as const) {
    test(`asked ${name}, as the reads finish: every file answered once, each answer right (case-insensitive needle)`, async () => {
      await using dir = tmpDir("ws-prefetch-");
      const paths = seedFiles(dir.path, 3000);
      const filter = readFilterOf(compileQuery({ pattern: "needleword", fixedStrings: true, caseInsensitive: true, queryKey: "" }));
      const prefetch = GrepPrefetch.start(native!, dir.path, paths, false, filter, 8000)!;
      expect(prefetch).not.toBeNull();
      const answers = new Map<number, string[]>();
      await Promise.all(
        order(paths.length).map(
          (index) =>
            new Promise<void>((resolve) =>
              prefetch.outcome(index, false, (settled) => {
                const list = answers.get(index) ?? [];
                list.push(kindOf(settled));
                answers.set(index, list);
                resolve();
              }),
            ),
        ),
      );
      prefetch.release();
      expect(answers.size).toBe(paths.length);
      const wrong = paths.filter((p, i) => answers.get(i)!.length !== 1 || answers.get(i)![0] !== expected(p));
      expect(wrong).toEqual([]);
    });
  }
});
