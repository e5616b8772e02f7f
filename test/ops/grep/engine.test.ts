/**
 * The pipeline: walk order, limits, cursors, errors and cancellation.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { WorksnapError } from "../../../src/core/errors";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { grep, type GrepCandidate, type GrepMatch, type GrepResult } from "../../../src/ops/grep";
import { grepAll, memCandidates, positions, type Content } from "./fixtures";

async function expectError(p: Promise<unknown>, code: string, message?: RegExp): Promise<WorksnapError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorksnapError);
  expect((err as WorksnapError).code).toBe(code as never);
  if (message) expect((err as WorksnapError).message).toMatch(message);
  return err as WorksnapError;
}

const TREE: Record<string, Content> = {
  "a.txt": "foo\nbar foo\n",
  "b/bin.png": new Uint8Array([0x89, 0x50, 0, 0x66, 0x6f, 0x6f]),
  "b/c.ts": "nothing here\n",
  "b/d.ts": "foo foo foo\n",
  "z/\u{10000}.txt": "foo\n",
  "z/\uffff.txt": "foo\n",
};

describe("grep pipeline", () => {
  test("results follow walk order (UTF-8 byte order) whatever order reads finish in", async () => {
    const r = await grepAll(TREE, { pattern: "foo", concurrency: 4 }, { jitter: true });
    expect(positions(r)).toEqual([
      "a.txt:1:1",
      "a.txt:2:5",
      "b/d.ts:1:1",
      "b/d.ts:1:5",
      "b/d.ts:1:9",
      "z/\uffff.txt:1:1",
      "z/\u{10000}.txt:1:1",
    ]);
    expect(r.searched_paths).toEqual(["a.txt", "b/c.ts", "b/d.ts", "z/\uffff.txt", "z/\u{10000}.txt"]);
    expect(r).toMatchObject({ files_searched: 5, files_matched: 4, binary_skipped: 1, matches_omitted: 0, truncated: false });
    expect(r.cursor).toBeUndefined();
  });

  test("a walk out of byte order is refused, where the runtime's string order agrees with it too, with or without the walk's wide hint", async () => {
    const files = { a: "foo\n", b: "foo\n", "z/\uffff": "foo\n", "z/\u{10000}": "foo\n" };
    const sorted = memCandidates(files);
    expect(sorted.map((c) => c.path as string)).toEqual(["a", "b", "z/\uffff", "z/\u{10000}"]);
    const hinted = (cs: GrepCandidate[]) => cs.map((c) => ({ ...c, wide: /[\ud800-\uffff]/.test(c.path) }));
    for (const walk of [sorted, hinted(sorted)]) expect((await grep(walk, { pattern: "foo", queryKey: "test" })).files_searched).toBe(4);
    // UTF-16 order puts the surrogate pair first: the runtime's comparison alone would take this order
    const swapped = [sorted[0]!, sorted[1]!, sorted[3]!, sorted[2]!];
    const repeated = [sorted[0]!, sorted[1]!, sorted[1]!];
    const backwards = [sorted[1]!, sorted[0]!];
    for (const walk of [swapped, hinted(swapped), repeated, backwards]) await expectError(grep(walk, { pattern: "foo", queryKey: "test" }), "INTERNAL", /sorted by path/);
  });

  test("binary files are neither searched nor touched", async () => {
    const opened: string[] = [];
    const r = await grepAll(TREE, { pattern: "foo" }, { onOpen: (p) => opened.push(p) });
    expect(opened).toContain("b/bin.png");
    expect(r.searched_paths).not.toContain("b/bin.png");
    expect(r.matches.some((m) => m.path === "b/bin.png")).toBe(false);
  });

  test("maxFiles caps the files searched and the cursor resumes at the next one", async () => {
    const first = await grepAll(TREE, { pattern: "foo", maxFiles: 2 });
    expect(first.searched_paths).toEqual(["a.txt", "b/c.ts"]);
    expect(first).toMatchObject({ truncated: true, files_searched: 2, binary_skipped: 1 });
    const second = await grepAll(TREE, { pattern: "foo", maxFiles: 10, cursor: first.cursor });
    expect(second.searched_paths).toEqual(["b/d.ts", "z/\uffff.txt", "z/\u{10000}.txt"]);
    expect(second.truncated).toBe(false);
  });

  test("maxFiles equal to the number of files is not a truncation", async () => {
    const r = await grepAll({ a: "foo", b: "foo" }, { pattern: "foo", maxFiles: 2 });
    expect(r.truncated).toBe(false);
    expect(r.cursor).toBeUndefined();
  });

  test("maxMatches stops mid-file; the rest of that file is counted as omitted", async () => {
    const r = await grepAll(TREE, { pattern: "foo", maxMatches: 3 });
    expect(positions(r)).toEqual(["a.txt:1:1", "a.txt:2:5", "b/d.ts:1:1"]);
    expect(r).toMatchObject({ truncated: true, matches_omitted: 2, files_matched: 2, files_searched: 3 });
    expect(r.searched_paths).toEqual(["a.txt", "b/c.ts", "b/d.ts"]);
  });

  test("paging with the cursor yields exactly the sequence of one large call", async () => {
    const tree = fc.dictionary(
      fc.constantFrom("a", "b/x.ts", "b/y.ts", "c", "d/e/f", "é", "z"),
      fc.array(fc.constantFrom("foo", "bar", "foo bar foo", "", "x".repeat(400) + "foo"), { maxLength: 6 }).map((l) => l.join("\n")),
      { minKeys: 1 },
    );
    const page = fc.record({
      maxMatches: fc.integer({ min: 1, max: 4 }),
      maxBytes: fc.integer({ min: 1, max: 600 }),
      maxFiles: fc.integer({ min: 1, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(tree, fc.array(page, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 1 }), async (files, pages, context) => {
        const one = await grepAll(files, { pattern: "foo", contextLines: context });
        const got: GrepMatch[] = [];
        const touched = new Set<string>();
        let cursor: string | undefined;
        for (let k = 0; ; k++) {
          const r: GrepResult = await grep(memCandidates(files, { jitter: k % 2 === 0 }), { pattern: "foo", queryKey: "test", contextLines: context, cursor, ...pages[k % pages.length]! });
          expect(r.matches.length + r.files_searched + r.binary_skipped).toBeGreaterThan(0); // every page moves on
          got.push(...r.matches);
          r.searched_paths.forEach((p) => touched.add(p));
          expect(r.truncated).toBe(r.cursor !== undefined);
          if (!r.cursor) break;
          cursor = r.cursor;
          expect(k).toBeLessThan(200);
        }
        expect(got).toEqual(one.matches);
        expect([...touched].sort()).toEqual([...one.searched_paths].sort());
      }),
      { numRuns: 150 },
    );
  });

  test("the first match of a page is returned even when it alone exceeds maxBytes", async () => {
    const r = await grepAll({ a: "foo\nfoo\n" }, { pattern: "foo", maxBytes: 1 });
    expect(positions(r)).toEqual(["a:1:1"]);
    expect(r).toMatchObject({ truncated: true, matches_omitted: 1 });
  });

  test("a cursor from another query is refused", async () => {
    const { cursor } = await grepAll(TREE, { pattern: "foo", maxMatches: 1 });
    expect(cursor).toBeString();
    const other = [
      { pattern: "fo" },
      { pattern: "foo", caseInsensitive: true },
      { pattern: "foo", fixedStrings: true },
      { pattern: "foo", queryKey: "another-snapshot" },
    ];
    for (const o of other) {
      await expectError(grepAll(TREE, { ...o, cursor }), "INVALID_ARGUMENT", /different grep/);
    }
    for (const bad of ["", "not a cursor!", Buffer.from("{}").toString("base64url"), "eyJ"]) {
      await expectError(grepAll(TREE, { pattern: "foo", cursor: bad }), "INVALID_ARGUMENT", /cursor/);
    }
  });

  test("options are validated with messages that name the tool's argument (max_matches, not maxMatches)", async () => {
    await expectError(grepAll(TREE, { pattern: "" }), "INVALID_ARGUMENT", /pattern must not be empty/);
    await expectError(grepAll(TREE, { pattern: "a", contextLines: 11 }), "INVALID_ARGUMENT", /context_lines/);
    await expectError(grepAll(TREE, { pattern: "a", maxMatches: 0 }), "INVALID_ARGUMENT", /max_matches/);
    await expectError(grepAll(TREE, { pattern: "a", maxFiles: 1.5 }), "INVALID_ARGUMENT", /max_files/);
    await expectError(grepAll(TREE, { pattern: "a\nb", fixedStrings: true }), "INVALID_ARGUMENT", /line break/);
    await expectError(grepAll(TREE, { pattern: "a\\nb" }), "INVALID_ARGUMENT", /line break/);
    const err = await expectError(grepAll(TREE, { pattern: "foo(" }), "INVALID_ARGUMENT");
    expect(err.message).toContain(String(((): string => { try { new RegExp("foo(", "u"); } catch (e) { return (e as Error).message; } return ""; })()));
    expect(err.details.engine_message).toBeString();
  });

  test("candidates out of order are an internal error, not a silent misordering", async () => {
    const cands = memCandidates({ a: "foo", b: "foo" }).reverse();
    await expectError(grep(cands, { pattern: "foo", queryKey: "" }), "INTERNAL", /sorted/);
  });

  test("a read failure is an error, never an empty result", async () => {
    const cands: GrepCandidate[] = [
      ...memCandidates({ a: "foo" }),
      { path: trustedRepoPath("b"), size: 3, open: async () => { throw Object.assign(new Error("gone"), { code: "ENOENT" }); } },
    ];
    const err = await expectError(grep(cands, { pattern: "foo", queryKey: "" }), "NOT_FOUND");
    expect(err.details.path).toBe("b");
  });

  test("an async walk is consumed lazily, a bounded number of files ahead", async () => {
    let pulled = 0;
    async function* walk(): AsyncGenerator<GrepCandidate> {
      for (let i = 0; i < 10_000; i++) {
        pulled++;
        yield { path: trustedRepoPath(`f${String(i).padStart(5, "0")}`), size: 4, open: async () => new TextEncoder().encode("foo\n") };
      }
    }
    const r = await grep(walk(), { pattern: "foo", queryKey: "", maxMatches: 5, concurrency: 3 });
    expect(r.matches.length).toBe(5);
    expect(pulled).toBeLessThan(20);
  });

  test("aborting stops the search promptly with the abort reason", async () => {
    const ac = new AbortController();
    const cands: GrepCandidate[] = memCandidates({ a: "foo" }).concat({
      path: trustedRepoPath("b"),
      size: 1,
      open: () => new Promise<Uint8Array>(() => {}), // a read that never completes
    });
    const pending = grep(cands, { pattern: "foo", queryKey: "", signal: ac.signal });
    setTimeout(() => ac.abort(new Error("cancelled by client")), 20);
    const err = await pending.then(() => null, (e: unknown) => e);
    expect((err as Error).message).toBe("cancelled by client");
    const already = new AbortController();
    already.abort();
    await expect(grep(memCandidates({ a: "foo" }), { pattern: "foo", queryKey: "", signal: already.signal })).rejects.toBeDefined();
  });

  test("a stalled read is cut off by the time budget with a resumable cursor", async () => {
    const cands: GrepCandidate[] = memCandidates({ a: "foo" }).concat(
      { path: trustedRepoPath("b"), size: 1, open: () => new Promise<Uint8Array>(() => {}) },
      ...memCandidates({ c: "foo" }),
    );
    const r = await grep(cands, { pattern: "foo", queryKey: "", timeBudgetMs: 50 });
    expect(r).toMatchObject({ timed_out: true, truncated: true, searched_paths: ["a"] });
    expect(r.note).toContain("while searching b");
    const resumed = await grep(memCandidates({ a: "foo", b: "foo", c: "foo" }), { pattern: "foo", queryKey: "", cursor: r.cursor });
    expect(positions(resumed)).toEqual(["b:1:1", "c:1:1"]);
  });

  test("results are identical for every concurrency", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`d${i % 7}/f${i}.txt`] = `line ${i}\n`.repeat(i % 5) + (i % 3 ? "handleRequest(x)\n" : "");
    const base = await grepAll(files, { pattern: "handle\\w+\\(", concurrency: 1 });
    for (const c of [2, 8, 32]) {
      expect(await grepAll(files, { pattern: "handle\\w+\\(", concurrency: c }, { jitter: true })).toEqual(base);
    }
    expect(base.matches.length).toBe(40);
  });

  test("default limits: 200 matches", async () => {
    const r = await grep(memCandidates({ a: "x\n".repeat(500) }), { pattern: "x", queryKey: "" });
    expect(r.matches.length).toBe(200);
    expect(r.matches_omitted).toBe(300);
  });
});
