/**
 * Correctness target: on the same text files, the set of matching
 * (path, line) pairs equals ripgrep's, for ASCII patterns, literal and regex,
 * case-sensitive and not. The tree mixes CRLF, missing final newlines, very
 * long lines, Unicode, empty files and files larger than the read chunk,
 * read from disk the way the server reads them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isBinary } from "../../../src/core/binary";
import { sortUtf8 } from "../../../src/core/byte-order";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { fileCandidate, grep } from "../../../src/ops/grep";
import { cutOf, tempDir } from "./fixtures";
import { buildTree, CASES, CHUNK, RG, theirs } from "./rg-fixtures";

if (!RG) {
  console.warn(
    "\n!!! ripgrep (rg) is not installed: SKIPPING the ripgrep comparison test. Install it (apt-get install ripgrep); CI does.\n",
  );
}

async function ours(root: string, paths: string[], c: (typeof CASES)[number]): Promise<string[]> {
  const cands = paths.map((p) => fileCandidate(trustedRepoPath(p), join(root, p), statSync(join(root, p)).size, CHUNK));
  const r = await grep(cands, {
    pattern: c.pattern,
    fixedStrings: c.fixed,
    caseInsensitive: c.ci,
    queryKey: "",
    maxMatches: 100_000,
    maxBytes: 64 * 1024 * 1024,
    chunkBytes: CHUNK,
  });
  expect(cutOf(r)).toBe("whole");
  return [...new Set(r.matches.map((m) => `${m.path}:${m.line}`))].sort();
}

describe.skipIf(!RG)("same matching lines as ripgrep", () => {
  const tmp = tempDir("grep-rg");
  afterAll(() => tmp[Symbol.dispose]());
  const paths = sortUtf8(buildTree(tmp.dir));
  const textPaths = paths.filter((p) => !isBinary(readFileSync(join(tmp.dir, p))));

  test("the tree has binary files left out on our side", () => {
    expect(paths.length - textPaths.length).toBe(1);
  });

  test.each(CASES.map((c) => [`${c.pattern}${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""}`, c] as const))("%s", async (_name, c) => {
    const want = theirs(tmp.dir, textPaths, c);
    const got = await ours(tmp.dir, paths, c);
    expect(got).toEqual(want);
    if (!["^k", "k", "S", "x$", "crlf$", "handle\\(\\d+\\)", "\\t"].includes(c.pattern)) expect(want.length).toBeGreaterThan(0);
  });
});
