/**
 * A worktree grep in a git repository reads the clean tracked files ahead of
 * `git status` (prefetch.ts, with the native module). Whatever the read ahead
 * settles, the answer must be the one a plain read gives: the same matching
 * lines as ripgrep, the same counts, and every searched file touched with the
 * blob of its bytes, for clean, modified, untracked, deleted and replaced
 * files, with the store knowing the index blobs or not.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { isBinary } from "../../../src/core/binary";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { openWorkspace } from "../../../src/ops/workspace";
import { runGit } from "../../helpers/tmp-repo";
import { cutOf, tempDir } from "./fixtures";
import { buildTree, CASES, RG, theirs } from "./rg-fixtures";

describe.skipIf(!RG)("worktree grep with the read ahead: ripgrep's lines, true blobs", () => {
  const tmp = tempDir("grep-readahead");
  afterAll(() => tmp[Symbol.dispose]());
  const root = tmp.dir;
  buildTree(root);
  runGit(root, ["init", "-q", "-b", "main"]);
  runGit(root, ["add", "-A"]);
  runGit(root, ["commit", "-q", "-m", "tree"]);
  // the live tree departs from the index: edits, a deletion, a new file, a file turned binary
  writeFileSync(join(root, "no-final-newline.txt"), "foo bar\nedited foo TODO: here\n");
  rmSync(join(root, "only-newline.txt"));
  writeFileSync(join(root, "src/new-untracked.ts"), "import foo from 'x'\nTODO: untracked foo\n");
  writeFileSync(join(root, "bom.txt"), new Uint8Array([0x66, 0x6f, 0x6f, 0, 0x0a]));

  const textFiles = () =>
    runGit(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
      .split("\0")
      .filter((p) => p && !p.startsWith(".mcp/"))
      .filter((p) => {
        try {
          return !isBinary(readFileSync(join(root, p)));
        } catch {
          return false; // deleted
        }
      });

  for (const knownBlobs of [false, true]) {
    describe(knownBlobs ? "after a snapshot (index blobs known)" : "cold store (every file hashed)", () => {
      test.each(CASES.map((c) => [`${c.pattern}${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""}`, c] as const))("%s", async (_name, c) => {
        const ws = openWorkspace(root);
        if (knownBlobs) await createSnapshot(ws, { paths: ["."] });
        else rmSync(join(root, ".mcp"), { recursive: true, force: true });
        const r = await snapshotGrep(openWorkspace(root), {
          mode: "worktree",
          pattern: c.pattern,
          fixed_strings: c.fixed,
          case_insensitive: c.ci,
          max_matches: 100_000,
          maxBytes: 64 * 1024 * 1024,
        });
        expect(cutOf(r)).toBe("whole");
        const got = [...new Set(r.matches.map((m) => `${m.path}:${m.line}`))].sort();
        expect(got).toEqual(theirs(root, textFiles(), c));
      });

      test("every searched file is touched with the blob of its bytes; binary and deleted files are not searched", async () => {
        if (!knownBlobs) rmSync(join(root, ".mcp"), { recursive: true, force: true });
        const ws = openWorkspace(root);
        if (knownBlobs) await createSnapshot(ws, { paths: ["."] });
        const r = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", fixed_strings: true, max_matches: 100_000, maxBytes: 64 * 1024 * 1024 });
        const text = textFiles().sort();
        expect(r.files_searched).toBe(text.length);
        expect(r.binary_skipped).toBe(2); // bin/image.png and the file turned binary
        const touched = ws.leases.get((r as { lease_id: string }).lease_id).touched;
        expect([...touched.keys()].sort()).toEqual(text);
        for (const [p, blob] of touched) expect({ p, blob }).toEqual({ p, blob: blobIdOf(readFileSync(join(root, p))) });
      });
    });
  }

  test("a common literal stops the read ahead early; the answer is the same", async () => {
    // " " occurs in nearly every file: the read ahead gives up and the engine reads the files itself
    const ws = openWorkspace(root);
    const r = await snapshotGrep(ws, { mode: "worktree", pattern: " ", fixed_strings: true, max_matches: 100_000, maxBytes: 64 * 1024 * 1024 });
    const got = [...new Set(r.matches.map((m) => `${m.path}:${m.line}`))].sort();
    expect(got).toEqual(theirs(root, textFiles(), { pattern: " ", fixed: true }));
  });

  test("searched ahead of the walk, a page is the one a snapshot of the same tree gives: context lines, max_matches, counts, and the next page", async () => {
    const ws = openWorkspace(root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    for (const [pattern, fixed] of [["foo", true], ["TODO|FIXME", false]] as const) {
      const ask = { pattern, fixed_strings: fixed, context_lines: 2, max_matches: 7 };
      const live = await snapshotGrep(ws, { mode: "worktree", ...ask });
      const stored = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, ...ask });
      const page = (r: typeof live) => ({ matches: r.matches, searched: r.files_searched, matched: r.files_matched, omitted: r.matches_omitted, truncated: r.truncated });
      expect(page(live)).toEqual(page(stored));
      expect(live.matches.some((m) => (m.before?.length ?? 0) > 0 || (m.after?.length ?? 0) > 0)).toBe(true);
      const next = await snapshotGrep(ws, { mode: "worktree", ...ask, cursor: live.cursor });
      const nextStored = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, ...ask, cursor: stored.cursor });
      expect(next.matches).toEqual(nextStored.matches);
    }
  });

  test("max_files bounds what is searched and touched, as without a read ahead", async () => {
    const ws = openWorkspace(root);
    const r = await snapshotGrep(ws, { mode: "worktree", pattern: "foo", fixed_strings: true, max_files: 5, max_matches: 100_000, maxBytes: 64 * 1024 * 1024 });
    expect(r.files_searched).toBe(5);
    expect(r.truncated).toBe(true);
    expect(ws.leases.get((r as { lease_id: string }).lease_id).touched.size).toBe(5);
  });

});

describe("worktree grep with the read ahead: files searched as their candidate lines", () => {
  const tmp = tempDir("grep-candidate-lines");
  afterAll(() => tmp[Symbol.dispose]());
  const root = tmp.dir;
  // A NUL past git's 8000-byte sniff, on a line that may match: the file is text, though its candidate lines
  // alone would look binary. A line other than the first that starts with U+FEFF: only a file's first bytes are a BOM.
  writeFileSync(join(root, "late-nul.txt"), `${"filler line\n".repeat(800)}needle \0 here\nneedle again\n`);
  writeFileSync(join(root, "bom-inside.txt"), "first line\n\ufeffneedle after U+FEFF\nneedle\n");
  writeFileSync(join(root, "bom-first.txt"), "\ufeffneedle at the BOM\nno\nneedle\n");
  runGit(root, ["init", "-q", "-b", "main"]);
  runGit(root, ["add", "-A"]);
  runGit(root, ["commit", "-q", "-m", "tree"]);

  test("regression: a NUL past the sniff on a candidate line, and U+FEFF starting a later line, are searched as in the whole file", async () => {
    const ws = openWorkspace(root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    for (const [pattern, fixed] of [["needle", true], ["^needle", false]] as const) {
      const live = await snapshotGrep(ws, { mode: "worktree", pattern, fixed_strings: fixed, max_matches: 1000 });
      const stored = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, pattern, fixed_strings: fixed, max_matches: 1000 });
      expect({ pattern, matches: live.matches, binary: live.binary_skipped }).toEqual({ pattern, matches: stored.matches, binary: stored.binary_skipped });
    }
    const all = await snapshotGrep(ws, { mode: "worktree", pattern: "needle", fixed_strings: true, max_matches: 1000 });
    expect(all.matches.map((m) => `${m.path}:${m.line}:${m.col}`)).toEqual([
      "bom-first.txt:1:1",
      "bom-first.txt:3:1",
      "bom-inside.txt:2:4",
      "bom-inside.txt:3:1",
      "late-nul.txt:801:1",
      "late-nul.txt:802:1",
    ]);
  });
});

