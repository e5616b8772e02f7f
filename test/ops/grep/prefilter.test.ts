/**
 * What lets a search skip work without changing its answer: every required
 * literal set of a regex (a line lacking one is never searched), large files
 * streamed through the literals by reader threads, and the SHA-256 the
 * engine reports for each file it read (onRead), including files that were
 * gone by the time they were read.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../../src/core/errors";
import { sha256Hex } from "../../../src/core/hash";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { escapeRegex, fileCandidate, grep, type GrepCandidate } from "../../../src/ops/grep";
import { planRegex } from "../../../src/ops/grep/regex-analysis";
import { memCandidates, positions, referenceMatches, tempDir } from "./fixtures";

const text = (bytes: Uint8Array | string) => (typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("utf8"));
const ALL = { queryKey: "", maxMatches: 100_000, maxBytes: 64 * 1024 * 1024 };

describe("required literal sets", () => {
  test("every literal run of a sequence is required, weaker sets implied by a stronger one are dropped", () => {
    const plan = (p: string) => {
      const r = planRegex(p, false);
      return { literals: r.literals?.map(text) ?? null, required: r.required.map((s) => s.map(text)) };
    };
    expect(plan("fetch[A-Z]\\w*\\(user")).toEqual({ literals: ["fetch"], required: [["(user"]] });
    expect(plan("(foo|bar)baz.*qux")).toEqual({ literals: ["foobaz", "barbaz"], required: [["qux"]] });
    expect(plan("abc")).toEqual({ literals: ["abc"], required: [] });
    expect(plan("x*")).toEqual({ literals: null, required: [] });
    expect(plan("abc.*ab")).toEqual({ literals: ["abc"], required: [] }); // every "abc" holds "ab"
    expect(plan("(?:ab)+c.*d")).toEqual({ literals: ["ab"], required: [["c"], ["d"]] });
  });

  test("a regex with several required literals finds what the line-by-line reference finds, in memory and on disk", async () => {
    using tmp = tempDir("grep-required");
    const part = fc.constantFrom("ab", "ba", "c(", "x", "abc");
    // not \w: the engine's is Unicode (ripgrep's), the reference's ASCII
    const filler = fc.constantFrom("[a-c ]*", "[a-cé(]+", "[^x]*", ".?");
    const body = fc.array(fc.constantFrom("a", "b", "c", "(", "x", " ", "\n", "é"), { maxLength: 60 }).map((p) => p.join(""));
    let round = 0;
    await fc.assert(
      fc.asyncProperty(part, filler, part, body, fc.integer({ min: 4, max: 64 }), async (a, mid, b, content, chunk) => {
        const pattern = `${escapeRegex(a)}${mid}${escapeRegex(b)}`;
        const expected = referenceMatches("f.txt", content, new RegExp(pattern, "gsu"));
        const mem = await grep(memCandidates({ "f.txt": content }), { ...ALL, pattern, chunkBytes: chunk });
        expect(positions(mem)).toEqual(expected);
        const dir = join(tmp.dir, String(round++));
        mkdirSync(dir);
        writeFileSync(join(dir, "f.txt"), content);
        const disk = await grep([fileCandidate(trustedRepoPath("f.txt"), join(dir, "f.txt"), null)], { ...ALL, pattern, chunkBytes: 64 * 1024 });
        expect(positions(disk)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});

describe("large files on reader threads", () => {
  test("a file over chunkBytes is ruled out by the literal in pieces, even when the literal spans two pieces", async () => {
    using tmp = tempDir("grep-stream");
    const MiB = 1024 * 1024;
    // the reader streams in pieces of its buffer (1 MiB at first): put the needle across the first boundary
    const spanning = `${"a".repeat(MiB - 3)}NEEDLE${"b\n".repeat(1000)}`;
    const late = `${"line\n".repeat(300_000)}tail NEEDLE\n`;
    const none = "no match here\n".repeat(200_000);
    const files: Record<string, string> = { "late.txt": late, "none.txt": none, "spanning.txt": spanning };
    for (const [p, t] of Object.entries(files)) writeFileSync(join(tmp.dir, p), t);
    const seen = new Map<string, string | null>();
    const candidates = Object.keys(files).map((p) => {
      const c = fileCandidate(trustedRepoPath(p), join(tmp.dir, p), null);
      c.onRead = (sha) => sha !== undefined && seen.set(p, sha);
      return c;
    });
    const r = await grep(candidates, { ...ALL, pattern: "NEEDLE", fixedStrings: true, chunkBytes: 64 * 1024 });
    expect(positions(r)).toEqual(["late.txt:300001:6", "spanning.txt:1:1048574"]);
    expect(r.files_searched).toBe(3);
    for (const [p, t] of Object.entries(files)) expect(seen.get(p)).toBe(sha256Hex(Buffer.from(t)));
  });
});

describe("onRead", () => {
  test("reports the SHA-256 of every text file searched, whichever way it was read; nothing for binary files", async () => {
    using tmp = tempDir("grep-onread");
    const files: Record<string, string | Uint8Array> = {
      "a.txt": "foo here\n",
      "b.txt": "nothing\n",
      "big.txt": `${"filler\n".repeat(20_000)}foo\n`,
      "bin.dat": new Uint8Array([0, 1, 2, 102, 111, 111]),
      "known.txt": "foo too\n",
    };
    for (const [p, t] of Object.entries(files)) writeFileSync(join(tmp.dir, p), t);
    for (const pattern of ["foo", "f(o)+", "fo{2}"]) {
      const seen = new Map<string, string | null>();
      const reported: string[] = [];
      const candidates = Object.keys(files).map((p) => {
        const c = fileCandidate(trustedRepoPath(p), join(tmp.dir, p), null);
        c.onRead = (sha) => {
          reported.push(p);
          if (sha !== undefined) seen.set(p, sha);
        };
        if (p === "known.txt") c.hashKnown = true;
        return c;
      });
      const r = await grep(candidates, { ...ALL, pattern, chunkBytes: 4096 });
      expect(r.files_searched).toBe(4);
      expect(r.binary_skipped).toBe(1);
      const want = Object.fromEntries(["a.txt", "b.txt", "big.txt"].map((p) => [p, sha256Hex(Buffer.from(files[p] as string))]));
      // a regex child reads only matching files back: the caller hashes the files it read itself
      if (pattern === "f(o)+") for (const p of ["a.txt", "b.txt"]) seen.has(p) ? expect(seen.get(p)).toBe(want[p]!) : delete want[p];
      expect(Object.fromEntries([...seen].filter(([p]) => p in want))).toEqual(want);
      expect(seen.has("bin.dat")).toBe(false);
      expect(seen.has("known.txt")).toBe(false);
      // every searched file is reported, in walk order, a known one without a hash
      expect(reported).toEqual(["a.txt", "b.txt", "big.txt", "known.txt"]);
    }
  });

  test("a path that is gone or no longer a regular file is searched as empty and reported as null; without onRead it fails the search", async () => {
    using tmp = tempDir("grep-gone");
    writeFileSync(join(tmp.dir, "a.txt"), "foo\n");
    mkdirSync(join(tmp.dir, "dir.txt"));
    const make = (tolerant: boolean): GrepCandidate[] =>
      ["a.txt", "dir.txt", "missing.txt"].map((p) => {
        const c = fileCandidate(trustedRepoPath(p), join(tmp.dir, p), null);
        if (tolerant) c.onRead = (sha) => sha !== undefined && seen.set(p, sha);
        return c;
      });
    const seen = new Map<string, string | null>();
    const r = await grep(make(true), { ...ALL, pattern: "foo", fixedStrings: true });
    expect(positions(r)).toEqual(["a.txt:1:1"]);
    expect(r.files_searched).toBe(3);
    expect(Object.fromEntries(seen)).toEqual({ "a.txt": sha256Hex(Buffer.from("foo\n")), "dir.txt": null, "missing.txt": null });
    const failure = await grep(make(false), { ...ALL, pattern: "foo", fixedStrings: true }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorksnapError);
    expect((failure as WorksnapError).details.path).toBe("dir.txt");
  });

  test("a remembered hash is never reported for a file that changed since: same size, rewritten after the stamp was remembered", async () => {
    using tmp = tempDir("grep-remembered");
    const file = join(tmp.dir, "a.txt");
    writeFileSync(file, "foo one\n");
    await Bun.sleep(2100); // older than the racy margin, so the stamp is remembered
    const hashOf = async () => {
      let got: string | null | undefined;
      const c = fileCandidate(trustedRepoPath("a.txt"), file, null);
      c.onRead = (sha) => (got = sha);
      await grep([c], { ...ALL, pattern: "foo", fixedStrings: true });
      return got;
    };
    expect(await hashOf()).toBe(sha256Hex(Buffer.from("foo one\n")));
    expect(await hashOf()).toBe(sha256Hex(Buffer.from("foo one\n")));
    writeFileSync(file, "foo two\n");
    expect(await hashOf()).toBe(sha256Hex(Buffer.from("foo two\n")));
  });
});
