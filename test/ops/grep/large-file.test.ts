/**
 * A file far larger than the read chunk is searched in windows: memory stays
 * near the chunk size, and matches straddling read boundaries are found with
 * the right line numbers. Runs grep in a child process so its peak RSS
 * (VmHWM) measures the search alone. No timing assertions.
 */
import { expect, test } from "bun:test";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./fixtures";

const BUN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun");
const GREP = join(import.meta.dir, "..", "..", "..", "src", "ops", "grep", "index.ts");
const MiB = 1024 * 1024;
const LINE = 100; // bytes per line, "x" * 99 + "\n"
const SIZE = 384 * MiB - ((384 * MiB) % LINE);

test("a 384 MB file: straddling matches found, memory stays far below the file size", async () => {
  using tmp = tempDir("grep-large");
  const file = join(tmp.dir, "huge.log");
  const fd = openSync(file, "w");
  const block = Buffer.alloc(LINE * 10_000, "x");
  for (let i = LINE - 1; i < block.length; i += LINE) block[i] = 10;
  for (let at = 0; at < SIZE; at += block.length) writeSync(fd, block, 0, Math.min(block.length, SIZE - at), at);
  // needles across the 1st and 37th 4 MiB read boundaries, and one on the last line
  const needles = [4 * MiB - 3, 37 * 4 * MiB - 3, SIZE - LINE + 9];
  for (const at of needles) writeSync(fd, Buffer.from("NEEDLE"), 0, 6, at);
  closeSync(fd);
  const expected = needles.map((at) => ({ line: Math.floor(at / LINE) + 1, col: (at % LINE) + 1 }));
  expect(expected.slice(0, 2).every((e, k) => e.col + 5 > ((k === 0 ? 4 : 148) * MiB) % LINE)).toBe(true);

  const script = `
    import { fileCandidate, grep } from ${JSON.stringify(GREP)};
    import { readFileSync } from "node:fs";
    const r = await grep([fileCandidate("huge.log", ${JSON.stringify(file)}, ${SIZE})], { pattern: "NEED+LE", queryKey: "", contextLines: 1 });
    const hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
    console.log(JSON.stringify({ matches: r.matches.map((m) => ({ line: m.line, col: m.col, before: m.before?.length, after: m.after?.length })), hwmMb: hwm / 1024 }));
  `;
  const run = Bun.spawnSync([BUN, "-e", script], { stdout: "pipe", stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  const out = JSON.parse(run.stdout.toString());
  expect(out.matches).toEqual([
    { ...expected[0], before: 1, after: 1 },
    { ...expected[1], before: 1, after: 1 },
    { ...expected[2], before: 1, after: undefined },
  ]);
  console.log(`grep over a ${(SIZE / MiB).toFixed(0)} MB file: peak RSS ${out.hwmMb.toFixed(0)} MB`);
  expect(out.hwmMb).toBeLessThan(150);
}, 120_000);
