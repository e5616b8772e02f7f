/**
 * Grep through the trigram index gives ripgrep's (path, line) pairs: over
 * several repositories (awkward hand-made files, a generated monorepo,
 * generated release trees), many patterns (fixed strings, regexes with and
 * without required literals, case-insensitive ones), with the index absent,
 * partly built and fully built, in worktree mode (modified, deleted and
 * untracked files beside the indexed ones) and in snapshot mode. The index
 * only prunes: every answer must be the scan's.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateRepo } from "../../../bench/gen-repo";
import { compareUtf8 } from "../../../src/core/byte-order";
import { blobIdOf } from "../../../src/core/hash";
import { isBinary } from "../../../src/core/binary";
import { indexFilter, NO_MATCH } from "../../../src/ops/grep";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { openWorkspace } from "../../../src/ops/workspace";
import { TrigramIndexer } from "../../../src/repo/trigram-index/indexer";
import { TRIGRAM_DIR } from "../../../src/repo/trigram-index/store";
import { keepIndexListings, plainIndexOids, startIndexListing } from "../../../src/repo/tree-scan";
import { runGit } from "../../helpers/tmp-repo";
import { cutOf, tempDir } from "./fixtures";
import { buildTree, CASES, RG, theirs } from "./rg-fixtures";

type Case = { pattern: string; fixed?: boolean; ci?: boolean };

const GENERATED_CASES: Case[] = [
  { pattern: "handleRequest", fixed: true },
  { pattern: "HANDLEREQUEST", fixed: true, ci: true },
  { pattern: "fetch[A-Z]\\w*\\(user" },
  { pattern: "TODO", fixed: true },
  { pattern: "return", fixed: true },
  { pattern: "café", fixed: true },
  { pattern: "stra", fixed: true, ci: true },
  { pattern: "^import \\{ \\w+, \\w+ \\}" },
  { pattern: "\\bvalue\\b" },
  { pattern: "edited: \\w+" },
  { pattern: "x", fixed: true },
  { pattern: "[0-9]{6}" },
  { pattern: "renderWorker|parseCache" },
];

type IndexState = "absent" | "partial" | "full";

async function setIndex(root: string, state: IndexState): Promise<void> {
  const ws = openWorkspace(root);
  const dir = join(ws.repo.stateDir, TRIGRAM_DIR);
  rmSync(dir, { recursive: true, force: true });
  if (state === "absent") return;
  // a small memory budget (about 5,000 trigrams a job): several segments, so that half of them can go
  await new TrigramIndexer(ws.repo, ws.trigrams, { diskBudget: 1 << 30, memoryBudget: 80_000, background: false }).update();
  if (state === "partial") {
    const names = readdirSync(dir).sort();
    expect(names.length).toBeGreaterThan(1);
    for (const name of names.filter((_, i) => i % 2 === 0)) rmSync(join(dir, name));
  }
}

/** Text files of the work tree as git sees them (tracked and untracked, not ignored). */
function textFiles(root: string): string[] {
  return runGit(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    .split("\0")
    .filter((p) => p && !p.startsWith(".mcp/"))
    .filter((p) => {
      try {
        // grep never follows a symlink
        return lstatSync(join(root, p)).isFile() && !isBinary(readFileSync(join(root, p)));
      } catch {
        return false; // deleted
      }
    });
}

const name = (c: Case) => `${c.pattern}${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""}`;

async function pairs(root: string, c: Case, mode: "worktree" | "snapshot", snapshotId?: string): Promise<string[]> {
  const r = await snapshotGrep(openWorkspace(root), {
    mode,
    snapshot_id: snapshotId,
    pattern: c.pattern,
    fixed_strings: c.fixed,
    case_insensitive: c.ci,
    max_matches: 1_000_000,
    maxBytes: 64 * 1024 * 1024,
  });
  expect(cutOf(r)).toBe("whole");
  return [...new Set(r.matches.map((m) => `${m.path}:${m.line}`))].sort();
}

function repositoryCases(label: string, make: (root: string) => Promise<void>, cases: Case[], selective: Case): void {
  describe.skipIf(!RG)(`grep with the trigram index equals ripgrep: ${label}`, () => {
    const tmp = tempDir("grep-index-rg");
    afterAll(() => tmp[Symbol.dispose]());
    const root = join(tmp.dir, "repo");
    let ready: Promise<{ snapshot: string; text: string[] }> | null = null;
    const setup = () =>
      (ready ??= (async () => {
        await make(root);
        const snap = await createSnapshot(openWorkspace(root), { paths: ["."] });
        return { snapshot: snap.snapshot_id, text: textFiles(root) };
      })());

    for (const state of ["full", "partial", "absent"] as const) {
      test(`index ${state}: every pattern, worktree and snapshot`, async () => {
        const { snapshot, text } = await setup();
        await setIndex(root, state);
        for (const c of cases) {
          const want = theirs(root, text, c);
          expect({ case: name(c), mode: "worktree", got: await pairs(root, c, "worktree") }).toEqual({ case: name(c), mode: "worktree", got: want });
          expect({ case: name(c), mode: "snapshot", got: await pairs(root, c, "snapshot", snapshot) }).toEqual({ case: name(c), mode: "snapshot", got: want });
        }
      }, 240_000);
    }

    test("regression: a server's entries, kept from call to call, ask the index again when its segments change", async () => {
      // a kept tree entry remembers its blob's handle in the index; a handle names a blob only in the index (and
      // the set of segments) it came from: after a segment goes, a new index loads the rest into other slots
      const { text } = await setup();
      keepIndexListings(true);
      try {
        for (const state of ["full", "partial", "full", "absent", "partial", "full"] as const) {
          await setIndex(root, state);
          for (const c of cases.slice(0, 4)) {
            expect({ state, case: name(c), got: await pairs(root, c, "worktree") }).toEqual({ state, case: name(c), got: theirs(root, text, c) });
          }
        }
      } finally {
        keepIndexListings(false);
      }
    }, 240_000);

    test("the files the index settles count as the engine would count them, page by page, and each page's lease touches its stretch of the walk", async () => {
      await setup();
      const call = async (c: Case, extra: Record<string, unknown>) => {
        const ws = openWorkspace(root);
        const r = await snapshotGrep(ws, { mode: "worktree", pattern: c.pattern, fixed_strings: c.fixed, case_insensitive: c.ci, maxBytes: 64 * 1024 * 1024, max_matches: 1_000_000, ...extra });
        return { r, touched: [...ws.leases.get((r as { lease_id: string }).lease_id).touched.keys()].sort(compareUtf8) };
      };
      const counts = (r: { files_searched: number; files_matched: number; binary_skipped: number; matches: unknown[] }) =>
        ({ searched: r.files_searched, matched: r.files_matched, binary: r.binary_skipped, matches: r.matches.length });
      for (const c of cases.slice(0, 3)) {
        await setIndex(root, "absent");
        const scan = await call(c, {});
        await setIndex(root, "full");
        const whole = await call(c, {});
        expect({ case: name(c), ...counts(whole.r), touched: whole.touched }).toEqual({ case: name(c), ...counts(scan.r), touched: scan.touched });
        expect(whole.r.matches).toEqual(scan.r.matches);
        // pages cut by max_matches (the index settles files outside the engine) and by max_files (the engine takes them all)
        for (const limit of [{ max_matches: Math.max(1, Math.ceil(scan.r.matches.length / 6)) }, { max_files: Math.ceil(scan.r.files_searched / 5) }]) {
          let cursor: string | undefined;
          let pages = 0;
          let searched = 0;
          let again = 0;
          let binary = 0;
          const matches: unknown[] = [];
          const touched = new Set<string>();
          for (let page = 0; page < 10_000; page++) {
            const { r, touched: mine } = await call(c, { ...limit, cursor });
            // a page touches the files it counts as searched; only the file it resumes inside was touched before
            expect(mine.length).toBe(r.files_searched);
            mine.forEach((p, k) => {
              if (touched.has(p)) {
                expect({ page, p, first: k === 0 }).toEqual({ page, p, first: true });
                again++;
              }
              touched.add(p);
            });
            searched += r.files_searched;
            binary += r.binary_skipped;
            matches.push(...r.matches);
            cursor = r.cursor;
            pages++;
            if (!cursor) break;
          }
          expect({ case: name(c), limit, searched: searched - again, binary, touched: [...touched].sort(compareUtf8) }).toEqual({
            case: name(c),
            limit,
            searched: scan.r.files_searched,
            binary: scan.r.binary_skipped,
            touched: scan.touched,
          });
          expect(matches).toEqual(scan.r.matches);
          expect(pages).toBeGreaterThanOrEqual("max_files" in limit ? 5 : Math.min(2, scan.r.matches.length));
        }
      }
    }, 240_000);

    test("the full index settles most files of a selective query, and the lease still holds each searched file's true blob", async () => {
      await setup();
      await setIndex(root, "full");
      const ws = openWorkspace(root);
      const c = selective;
      const filter = indexFilter(ws.trigrams, { pattern: c.pattern, fixedStrings: c.fixed, caseInsensitive: c.ci });
      expect(filter).not.toBeNull();
      const oids = plainIndexOids((await startIndexListing(ws.repo, ["." as never])).stdout);
      const settled = [...filter!.byGitOids(oids)].filter((v) => v === NO_MATCH).length;
      expect(settled).toBeGreaterThan(oids.length / 2);
      // with the blob map of captures, and without it (then the index's own SHA-256 of a settled file is recorded);
      // regression (INTERNAL "the blob store no longer knows git blob"): also with the index listing kept between
      // calls, as a server keeps it, whose entries remember what the earlier workspace's map knew
      const map0 = readFileSync(join(ws.repo.stateDir, "cache", "gitblobs.bin"));
      for (const keep of [false, true]) {
        keepIndexListings(keep);
        writeFileSync(join(ws.repo.stateDir, "cache", "gitblobs.bin"), map0);
        try {
          for (const map of ["known", "forgotten"]) {
            if (map === "forgotten") rmSync(join(ws.repo.stateDir, "cache", "gitblobs.bin"), { force: true });
            const fresh = openWorkspace(root);
            const r = await snapshotGrep(fresh, { mode: "worktree", pattern: c.pattern, fixed_strings: c.fixed, max_matches: 1_000_000, maxBytes: 64 * 1024 * 1024 });
            const touched = fresh.leases.get((r as { lease_id: string }).lease_id).touched;
            expect(touched.size).toBe(r.files_searched);
            for (const [p, blob] of touched) expect({ keep, map, p, blob }).toEqual({ keep, map, p, blob: blobIdOf(readFileSync(join(root, p))) });
          }
        } finally {
          keepIndexListings(false);
        }
      }
    }, 120_000);
  });
}

repositoryCases(
  "awkward files (CRLF, BOM, long lines, Unicode, late NUL), edited after the commit",
  async (root) => {
    buildTree(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-q", "-m", "tree"]);
    writeFileSync(join(root, "no-final-newline.txt"), "foo bar\nedited foo TODO: here\n");
    rmSync(join(root, "only-newline.txt"));
    writeFileSync(join(root, "src/new-untracked.ts"), "import foo from 'x'\nTODO: untracked foo\n");
    writeFileSync(join(root, "bom.txt"), new Uint8Array([0x66, 0x6f, 0x6f, 0, 0x0a]));
  },
  CASES,
  { pattern: "TODO: across", fixed: true },
);

repositoryCases("a generated monorepo (modified, deleted and untracked files)", async (root) => {
  await generateRepo({ out: root, files: 400, seed: 3 });
}, GENERATED_CASES, { pattern: "fetchUser", fixed: true });

repositoryCases("generated release trees (blobs shared between paths)", async (root) => {
  await generateRepo({ out: root, files: 800, releases: 4, layout: "releases", seed: 5 });
}, GENERATED_CASES, { pattern: "fetchUser", fixed: true });
