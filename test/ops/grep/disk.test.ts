/**
 * Candidates read from disk through `absPath` (reader threads, regex child
 * processes, window reads of large files): the same answers as open(), and
 * failures surface as errors naming the repo path.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { appendFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../../src/core/errors";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { fileCandidate, grep } from "../../../src/ops/grep";
import { memCandidates, positions, tempDir } from "./fixtures";

const MODES = [
  { name: "fixed string (reader threads)", pattern: "foo(", fixedStrings: true },
  { name: "cheap regex (reader threads)", pattern: "fo{2}\\(" },
  { name: "unbounded regex (regex child)", pattern: "fo+\\(" },
] as const;

describe("files on disk", () => {
  test.each(MODES)("$name: same matches as reading through open(), small and large files", async (mode) => {
    using tmp = tempDir("grep-disk");
    const files: Record<string, string> = {
      "a.txt": "x foo(1)\n",
      "big.txt": `${"filler line\n".repeat(5000)}foo( at the end`,
      "c.txt": "nothing\n",
    };
    for (const [p, t] of Object.entries(files)) writeFileSync(join(tmp.dir, p), t);
    const viaDisk = Object.keys(files).map((p) => fileCandidate(trustedRepoPath(p), join(tmp.dir, p), files[p]!.length, 4096));
    const viaOpen = viaDisk.map(({ absPath: _, ...c }) => c);
    const opts = { ...mode, queryKey: "", chunkBytes: 4096 };
    const a = await grep(viaDisk, opts);
    const b = await grep(viaOpen, opts);
    expect(positions(a)).toEqual(["a.txt:1:3", "big.txt:5001:1"]);
    expect(a).toEqual(b);
  });

  test.each(MODES)("$name: a symlink is never followed", async (mode) => {
    using tmp = tempDir("grep-symlink");
    writeFileSync(join(tmp.dir, "target.txt"), "foo(\n");
    symlinkSync("target.txt", join(tmp.dir, "link.txt"));
    for (const chunkBytes of [4096, 2]) {
      const cands = [fileCandidate(trustedRepoPath("link.txt"), join(tmp.dir, "link.txt"), 10, chunkBytes)];
      const err = await grep(cands, { ...mode, queryKey: "", chunkBytes }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorksnapError);
      expect((err as Error).message).toContain("ELOOP");
      expect((err as WorksnapError).details.path).toBe("link.txt");
    }
  });

  test.each(MODES)("$name: a vanished file is NOT_FOUND with its repo path", async (mode) => {
    using tmp = tempDir("grep-gone");
    const cands = [fileCandidate(trustedRepoPath("gone.txt"), join(tmp.dir, "gone.txt"), 10)];
    const err = await grep(cands, { ...mode, queryKey: "" }).then(() => null, (e: unknown) => e);
    expect((err as WorksnapError).code).toBe("NOT_FOUND");
    expect((err as WorksnapError).details.path).toBe("gone.txt");
  });

  test.each(MODES)("$name: a file that grew past the chunk size since it was listed is searched whole", async (mode) => {
    using tmp = tempDir("grep-grew");
    const file = join(tmp.dir, "log.txt");
    writeFileSync(file, "start\n");
    const cand = fileCandidate(trustedRepoPath("log.txt"), file, 6, 4096);
    appendFileSync(file, `${"more\n".repeat(2000)}foo( late\n`);
    const r = await grep([cand], { ...mode, queryKey: "", chunkBytes: 4096 });
    expect(positions(r)).toEqual(["log.txt:2002:1"]);
  });

  test("read from disk or through open(): identical answers, pages and cursors included", async () => {
    using tmp = tempDir("grep-disk-prop");
    const line = fc.array(fc.constantFrom("foo", "bar", " ", "é", "\r", "x1", "fo"), { maxLength: 8 }).map((p) => p.join(""));
    const text = fc.tuple(fc.constantFrom("", "\ufeff"), fc.array(line, { maxLength: 8 })).map(([bom, ls]) => bom + ls.join("\n"));
    const tree = fc.dictionary(fc.constantFrom("a.txt", "b/c.txt", "b/d.md", "é.txt"), text, { minKeys: 1 });
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        tree,
        fc.constantFrom("foo", "fo+", "o\\r?$", "^x\\d", "(?<=f)o", "fo{1,2}"),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 3 }),
        async (files, pattern, fixed, contextLines, maxMatches) => {
          const dir = join(tmp.dir, String(round++));
          for (const [p, t] of Object.entries(files)) {
            mkdirSync(join(dir, p, ".."), { recursive: true });
            writeFileSync(join(dir, p), t);
          }
          const disk = memCandidates(files).map((c) => fileCandidate(c.path, join(dir, c.path), c.size));
          const opts = { pattern, fixedStrings: fixed, contextLines, maxMatches, queryKey: "" };
          let cursorA: string | undefined;
          let cursorB: string | undefined;
          for (let page = 0; page < 50; page++) {
            const a = await grep(disk, { ...opts, cursor: cursorA });
            const b = await grep(memCandidates(files), { ...opts, cursor: cursorB });
            expect(a).toEqual(b);
            if (!a.cursor) break;
            [cursorA, cursorB] = [a.cursor, b.cursor];
          }
          rmSync(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 120 },
    );
  }, 120_000);
});
