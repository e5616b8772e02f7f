/**
 * Candidates that name a file on disk which may or may not still hold their
 * bytes (`expectSha256`), and candidates that share their bytes with others
 * (`share`): the answer is always the one open() gives, whatever the disk
 * holds, and a shared outcome appears under each path.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { grep, type GrepCandidate } from "../../../src/ops/grep";
import { positions, tempDir } from "./fixtures";

const MODES = [
  { name: "fixed string (native reader)", pattern: "needle(", fixedStrings: true },
  { name: "case-insensitive fixed string", pattern: "NEEDLE(", fixedStrings: true, caseInsensitive: true },
  { name: "cheap regex (reader threads)", pattern: "ne{2}dle\\(" },
  { name: "unbounded regex (regex child)", pattern: "ne+dle\\(" },
] as const;

const sha256 = (t: string) => createHash("sha256").update(t).digest("hex");

interface Planted {
  /** the candidate's own bytes (what open() gives) */
  bytes: string;
  /** what the file on disk holds instead, or a special file; undefined: the same bytes */
  disk?: string | "gone" | "fifo" | "symlink" | "directory";
  share?: string;
}

function candidates(dir: string, files: Record<string, Planted>, opened: string[]): GrepCandidate[] {
  const shares = new Map<string, number>();
  for (const f of Object.values(files)) if (f.share) shares.set(f.share, (shares.get(f.share) ?? 0) + 1);
  return Object.keys(files)
    .sort()
    .map((p) => {
      const f = files[p]!;
      const abs = join(dir, p);
      mkdirSync(join(abs, ".."), { recursive: true });
      if (f.disk === undefined) writeFileSync(abs, f.bytes);
      else if (f.disk === "fifo") execFileSync("mkfifo", [abs]);
      else if (f.disk === "symlink") {
        writeFileSync(`${abs}.target`, f.bytes); // the right bytes, behind a symlink: never followed
        symlinkSync(`${abs}.target`, abs);
      } else if (f.disk === "directory") mkdirSync(abs);
      else if (f.disk !== "gone") writeFileSync(abs, f.disk);
      const bytes = new TextEncoder().encode(f.bytes);
      return {
        path: trustedRepoPath(p),
        size: bytes.length,
        absPath: abs,
        expectSha256: sha256(f.bytes),
        ...(f.share ? { share: { key: f.share, shares: shares.get(f.share)! } } : {}),
        async open() {
          opened.push(p);
          return bytes;
        },
      };
    });
}

describe("verified reads of files on disk, and shared outcomes", () => {
  test.each(MODES)("$name: the candidate's bytes are searched whatever the disk holds; open() only where the disk differs", async (mode) => {
    using tmp = tempDir("grep-verified");
    const big = `${"filler line\n".repeat(600)}x needle( at the end\n`;
    const files: Record<string, Planted> = {
      "same.txt": { bytes: "a needle( here\n" },
      "edited.txt": { bytes: "b needle( here\n", disk: "b NEEDLE_ here\n" },
      "planted.txt": { bytes: "nothing here\n", disk: "c needle( planted\n" },
      "gone.txt": { bytes: "d needle(\n", disk: "gone" },
      "fifo.txt": { bytes: "e needle(\n", disk: "fifo" },
      "link.txt": { bytes: "f needle(\n", disk: "symlink" },
      "dir.txt": { bytes: "g needle(\n", disk: "directory" },
      "binary.bin": { bytes: "h\0needle(\n", disk: "h\0needle(\n" },
      "big-same.txt": { bytes: big },
      "big-edited.txt": { bytes: big, disk: big.replace("x needle(", "x NEEDLE_") },
      // text in the candidate, binary on disk now: never taken for binary
      "big-binary.txt": { bytes: big, disk: `\0${big.slice(1)}` },
    };
    for (const chunkBytes of [4 << 20, 1024]) {
      const opened: string[] = [];
      const r = await grep(candidates(join(tmp.dir, String(chunkBytes)), files, opened), { ...mode, queryKey: "", chunkBytes });
      expect(positions(r)).toEqual(["big-binary.txt:601:3", "big-edited.txt:601:3", "big-same.txt:601:3", "dir.txt:1:3", "edited.txt:1:3", "fifo.txt:1:3", "gone.txt:1:3", "link.txt:1:3", "same.txt:1:3"]);
      expect(r.binary_skipped).toBe(1);
      // what the disk still holds is never read through open(); a binary file is, as its bytes cannot be proven
      expect(opened).not.toContain("same.txt");
      expect(opened).not.toContain("big-same.txt");
      for (const p of ["edited.txt", "planted.txt", "gone.txt", "fifo.txt", "link.txt", "dir.txt", "big-edited.txt", "big-binary.txt"]) expect(opened).toContain(p);
    }
  });

  test.each(MODES)("$name: bytes several paths hold are searched once, each path answered with its own name, across pages", async (mode) => {
    using tmp = tempDir("grep-shared");
    const shared = "one needle(\ntwo needle( needle(\n";
    const files: Record<string, Planted> = {
      "r1/lib.ts": { bytes: shared, disk: "gone", share: "lib" }, // the first holder is read through open()
      "r1/own.ts": { bytes: "own needle(\n" },
      "r2/lib.ts": { bytes: shared, share: "lib" },
      "r3/lib.ts": { bytes: shared, disk: "changed on disk\n", share: "lib" },
      "r4/none.ts": { bytes: "nothing\n", share: "none" },
      "r5/none.ts": { bytes: "nothing\n", share: "none" },
    };
    const opened: string[] = [];
    const all = await grep(candidates(tmp.dir, files, opened), { ...mode, queryKey: "" });
    const lib = (dir: string) => [`${dir}/lib.ts:1:5`, `${dir}/lib.ts:2:5`, `${dir}/lib.ts:2:13`];
    expect(positions(all)).toEqual([...lib("r1"), "r1/own.ts:1:5", ...lib("r2"), ...lib("r3")]);
    expect(all).toMatchObject({ files_searched: 6, files_matched: 4 });
    expect(all.searched_paths).toEqual(Object.keys(files).sort());
    // searched once: only the first holder was read (through open(), its file being gone)
    expect(opened).toEqual(["r1/lib.ts"]);

    // one match a page: each page's cursor resumes inside a shared outcome, and the pages add up to the whole
    const pages: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await grep(candidates(join(tmp.dir, `p${i}`), files, []), { ...mode, queryKey: "", maxMatches: 1, ...(cursor ? { cursor } : {}) });
      pages.push(...positions(page));
      cursor = page.cursor;
      if (!cursor) break;
    }
    expect(pages).toEqual(positions(all));
  });

  test("files that all changed on disk are searched through open() at most `concurrency` at a time (an old snapshot of a rewritten tree)", async () => {
    using tmp = tempDir("grep-fallback-bound");
    const files: Record<string, Planted> = {};
    for (let i = 0; i < 300; i++) files[`f${String(i).padStart(3, "0")}.txt`] = { bytes: `x needle( ${i}\n`, disk: `rewritten ${i}\n` };
    let open = 0;
    let most = 0;
    const cands = candidates(tmp.dir, files, []).map((c) => ({
      ...c,
      async open() {
        open++;
        most = Math.max(most, open);
        await Bun.sleep(1);
        open--;
        return new TextEncoder().encode(files[c.path]!.bytes);
      },
    }));
    const r = await grep(cands, { pattern: "needle(", fixedStrings: true, queryKey: "", concurrency: 4, maxMatches: 1000 });
    expect(r.matches).toHaveLength(300);
    expect(most).toBeLessThanOrEqual(4);
  });
});

