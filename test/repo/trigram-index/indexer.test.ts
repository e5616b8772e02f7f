/**
 * The index on disk and the indexer that keeps it up with git's index: what
 * a pass indexes and leaves (files that differ from their blob), the disk
 * budget, stale segments, and a damaged or missing segment, which is a cache
 * miss (removed, indexed again), never an error. Two processes' indexes of
 * one repository see each other's segments.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openRoot } from "../../../src/repo/root";
import { ensureStateDir } from "../../../src/repo/state-dir";
import { TrigramIndexer } from "../../../src/repo/trigram-index/indexer";
import { BINARY, NO_MATCH, READ, TRIGRAM_DIR, TrigramIndex } from "../../../src/repo/trigram-index/store";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

const tri = (s: string) => ((s.charCodeAt(0) << 16) | (s.charCodeAt(1) << 8) | s.charCodeAt(2)) >>> 0;
/** The query "holds every trigram of `word`". */
const holding = (word: string) => [[Array.from({ length: word.length - 2 }, (_, i) => [tri(word.slice(i, i + 3))])]];

function oidOf(repo: TmpRepo, path: string): string {
  return repo.git("rev-parse", `:${path}`).trim();
}

function open(repo: TmpRepo, opts: { diskBudget?: number; memoryBudget?: number; known?: (oid: string) => string | undefined } = {}) {
  const r = openRoot(repo.root);
  ensureStateDir(r.stateDir);
  const index = new TrigramIndex(r.stateDir);
  const indexer = new TrigramIndexer(r, index, { diskBudget: opts.diskBudget ?? 1 << 30, memoryBudget: opts.memoryBudget ?? 64 << 20, background: false, known: opts.known });
  return { r, index, indexer };
}

/** 5,000 files of 2,500 blobs under long paths: about 1.3 MB of listing, parsed in pieces (about 1 MB each). */
async function longListing(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  const dir = `${"deep-directory-name/".repeat(9)}leaf`;
  for (let i = 0; i < 5000; i++) repo.write(`${dir}/file-${String(i).padStart(5, "0")}.txt`, `content ${i % 2500} of a file\n`);
  repo.commit();
  expect(repo.git("ls-files", "-s", "-z").length).toBeGreaterThan(1.2e6);
  return repo;
}

async function fixture(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  repo.write("src/a.ts", "export function handleRequest() {}\n");
  repo.write("src/b.ts", "export function other() {}\n");
  repo.write("src/copy.ts", "export function handleRequest() {}\n");
  repo.write("img.png", new Uint8Array([0x89, 0x50, 0, 1, 2]));
  repo.write("notes.md", "nothing to see\n");
  repo.commit();
  return repo;
}

describe("the trigram indexer", () => {
  test("coverage after a pass that kept its listing: the same as from a listing of its own, and from a new listing once git's index changed", async () => {
    await using repo = await fixture();
    repo.write("src/dup.ts", "export function handleRequest() {}\n"); // a blob two paths hold
    repo.write("big.txt", "x".repeat(100)); // not indexed: over the file limit below
    repo.commit("more");
    const { r, index, indexer } = open(repo);
    const own = new TrigramIndexer(r, index, { diskBudget: 1 << 30, memoryBudget: 64 << 20, background: false, fileLimit: 50 });
    await own.update({ forCoverage: true });
    const kept = await own.coverage();
    expect(kept).toEqual(await indexer.coverage());
    expect(kept).toMatchObject({ index_blobs: 5, index_blobs_covered: 4 });
    await own.update({ forCoverage: true });
    repo.write("new.ts", "new\n");
    repo.git("add", "new.ts"); // git's index changes after the pass listed it
    expect(await own.coverage()).toMatchObject({ index_blobs: 6, index_blobs_covered: 4 });
  });

  test("indexes every blob of git's index once; a query tells what cannot match and what is binary", async () => {
    await using repo = await fixture();
    const { index, indexer } = open(repo);
    const pass = await indexer.update();
    expect(pass).toMatchObject({ missing: 4, indexed: 4, left: 0, full: false, segments: 1 });
    expect(await indexer.coverage()).toMatchObject({ index_blobs: 4, index_blobs_covered: 4, blobs_indexed: 4, segments_total: 1 });
    const sel = index.select(holding("handleRequest"));
    expect(sel.verdict(index.handleOfOid(oidOf(repo, "src/a.ts")))).toBe(READ);
    expect(sel.verdict(index.handleOfOid(oidOf(repo, "src/b.ts")))).toBe(NO_MATCH);
    expect(sel.verdict(index.handleOfOid(oidOf(repo, "img.png")))).toBe(BINARY);
    expect(sel.verdict(index.handleOfOid("0".repeat(40)))).toBe(READ); // not indexed: read it
    // the same blob by its SHA-256
    const sha = new Bun.CryptoHasher("sha256").update("nothing to see\n").digest("hex");
    expect(sel.verdict(index.handleOfBlob(`sha256:${sha}`))).toBe(NO_MATCH);
    // nothing new: a second pass indexes nothing
    expect(await indexer.update()).toMatchObject({ missing: 0, indexed: 0, segments: 0 });
  });

  test("a pass that indexed something tells its listener once; a pass with nothing to index, or only files that differ, does not", async () => {
    await using repo = await fixture();
    repo.write("src/b.ts", "export function handleRequest() { /* edited */ }\n");
    const { indexer } = open(repo);
    const told: number[] = [];
    indexer.onIndexed = (pass) => told.push(pass.indexed);
    await indexer.update();
    expect(told).toEqual([3]);
    await indexer.update(); // nothing new, and b.ts still differs from its blob
    expect(told).toEqual([3]);
    repo.commit("edit");
    await indexer.update();
    expect(told).toEqual([3, 1]);
  });

  test("a kick with git's index and the trigram index as the last pass that finished left them starts no pass; a change to either does", async () => {
    await using repo = await fixture();
    repo.write("src/b.ts", "export function handleRequest() { /* edited */ }\n"); // left out: differs from its blob
    const { indexer } = open(repo);
    const other = open(repo);
    const kicked = async () => {
      indexer.kick();
      await indexer.idle();
      return indexer.last;
    };
    const first = await kicked();
    expect(first).toMatchObject({ missing: 4, indexed: 3 });
    expect(await kicked()).toBe(first); // nothing to do: no pass, no listing
    repo.write("c.ts", "export const c = 1;\n");
    repo.git("add", "c.ts");
    const second = await kicked();
    expect(second).not.toBe(first);
    expect(second).toMatchObject({ missing: 2, indexed: 1, left: 1 }); // c.ts, and b.ts tried again with the new index
    expect(await kicked()).toBe(second);
    expect(other.indexer.clear()).toBeGreaterThan(0); // another process empties the index
    const third = await kicked();
    expect(third).not.toBe(second);
    expect(third).toMatchObject({ indexed: 4 });
    expect(await kicked()).toBe(third);
  });

  test("a file that differs from its index blob is left out until it is committed; then indexed", async () => {
    await using repo = await fixture();
    repo.write("src/b.ts", "export function handleRequest() { /* edited */ }\n");
    const { index, indexer } = open(repo);
    expect(await indexer.update()).toMatchObject({ missing: 4, indexed: 3, left: 1 });
    expect(index.hasOid(oidOf(repo, "src/b.ts"))).toBe(false);
    // not tried again while git's index is the same
    expect(await indexer.update()).toMatchObject({ missing: 0, indexed: 0 });
    repo.commit("edit");
    expect(await indexer.update()).toMatchObject({ missing: 1, indexed: 1 });
    expect(index.select(holding("handleRequest")).verdict(index.handleOfOid(oidOf(repo, "src/b.ts")))).toBe(READ);
  });

  test("a damaged or missing segment is a cache miss: removed, its blobs indexed again", async () => {
    await using repo = await fixture();
    const { r, indexer } = open(repo);
    await indexer.update();
    const dir = join(r.stateDir, TRIGRAM_DIR);
    const [name] = readdirSync(dir);
    truncateSync(join(dir, name!), 100);
    const fresh = open(repo);
    fresh.index.refresh();
    expect(fresh.index.blobs).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    expect(await fresh.indexer.update()).toMatchObject({ missing: 4, indexed: 4 });
    writeFileSync(join(dir, "garbage.seg"), "not a segment");
    rmSync(join(dir, readdirSync(dir).find((n) => n !== "garbage.seg")!));
    const again = open(repo);
    expect(await again.indexer.update()).toMatchObject({ missing: 4, indexed: 4 });
    expect(readdirSync(dir).includes("garbage.seg")).toBe(false);
  });

  test("another process's segments are seen on the next look; removed ones are forgotten", async () => {
    await using repo = await fixture();
    const a = open(repo);
    const b = open(repo);
    b.index.refresh();
    expect(b.index.blobs).toBe(0);
    await a.indexer.update();
    b.index.refresh();
    expect(b.index.blobs).toBe(4);
    expect(b.index.hasOid(oidOf(repo, "src/a.ts"))).toBe(true);
    expect(a.indexer.clear()).toBe(1);
    b.index.refresh();
    expect(b.index.blobs).toBe(0);
    expect(b.index.hasOid(oidOf(repo, "src/a.ts"))).toBe(false);
  });

  test("the disk budget: nothing is built past it; segments git's index no longer holds make room", async () => {
    await using repo = await fixture();
    const { index, indexer } = open(repo, { diskBudget: 1 });
    // the first segment may overshoot; after it the budget is spent
    expect((await indexer.update()).segments).toBe(1);
    repo.write("src/new.ts", "export const added = 1;\n");
    repo.commit("add");
    expect(await indexer.update()).toMatchObject({ missing: 1, indexed: 0, full: true });
    // everything replaced: the old segment's blobs are gone from git's index, so it goes
    for (const p of ["src/a.ts", "src/b.ts", "src/copy.ts", "img.png", "notes.md", "src/new.ts"]) rmSync(join(repo.root, p));
    repo.write("only.txt", "the only file left\n");
    repo.commit("replace");
    const before = index.list().map((s) => s.name);
    const pass = await indexer.update();
    expect(pass).toMatchObject({ missing: 1, indexed: 1 });
    expect(index.list().map((s) => s.name).some((n) => before.includes(n))).toBe(false);
  });

  test("the memory budget splits a pass into several segments", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`f${i}.txt`, Array.from({ length: 200 }, (_, k) => `word${i}x${k} `).join("\n"));
    repo.commit();
    const { index, indexer } = open(repo, { memoryBudget: 1 });
    const pass = await indexer.update();
    expect(pass.indexed).toBe(40);
    expect(pass.segments).toBeGreaterThan(1);
    expect(index.blobs).toBe(40);
  });
  test("a listing of several pieces: every blob indexed once and counted; a pass the disk budget stops still counts the whole listing", async () => {
    await using repo = await longListing();
    const { index, indexer } = open(repo);
    const pass = await indexer.update({ forCoverage: true });
    expect(pass).toMatchObject({ missing: 2500, indexed: 2500, left: 0, full: false });
    expect(pass.segments).toBeGreaterThan(1);
    expect(index.blobs).toBe(2500);
    expect(await indexer.coverage()).toMatchObject({ index_blobs: 2500, index_blobs_covered: 2500 });
    // small jobs (a memory budget of about 300 files' trigrams) and a disk budget spent by the first segment: the
    // pass stops after the jobs in flight, and still counts every blob of the listing
    rmSync(join(open(repo).r.stateDir, TRIGRAM_DIR), { recursive: true, force: true });
    const tight = open(repo, { diskBudget: 1, memoryBudget: 100_000 });
    const stopped = await tight.indexer.update();
    expect(stopped).toMatchObject({ missing: 2500, full: true });
    expect(stopped.segments).toBeLessThanOrEqual(2);
    expect(stopped.indexed).toBeLessThan(2500);
    expect(stopped.left).toBe(2500 - stopped.indexed);
  });

  test("regression: a job that failed while the listing was still being parsed was an unhandled rejection (a close during a pass)", async () => {
    await using repo = await longListing();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { indexer } = open(repo);
      const running = indexer.update();
      indexer.close(); // its jobs fail at once, the listing not parsed yet
      await expect(running).rejects.toThrow("indexer closed");
      await Bun.sleep(50);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  test("blobs whose SHA-256 a capture verified are checked by it alone: the same segment as git's hash gives; a file that does not hold it is left out", async () => {
    await using repo = await fixture();
    const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(join(repo.root, path))).digest("hex");
    const known = new Map(["src/a.ts", "src/b.ts", "img.png", "notes.md"].map((p) => [oidOf(repo, p), sha(p)]));
    const segments = () => {
      const dir = join(repo.root, ".mcp", TRIGRAM_DIR);
      return readdirSync(dir).sort().map((n) => [n, readFileSync(join(dir, n)).toString("hex")]);
    };
    const plain = open(repo);
    expect(await plain.indexer.update()).toMatchObject({ indexed: 4 });
    const byGitHash = segments();
    plain.indexer.clear();
    const verified = open(repo, { known: (oid) => known.get(oid) });
    expect(await verified.indexer.update()).toMatchObject({ missing: 4, indexed: 4 });
    expect(segments()).toEqual(byGitHash); // the git ids recorded as given, byte for byte
    // a pair that is wrong (the file does not hold that SHA-256): the file is not indexed under its blob id
    verified.indexer.clear();
    known.set(oidOf(repo, "notes.md"), "0".repeat(64));
    const wrong = open(repo, { known: (oid) => known.get(oid) });
    expect(await wrong.indexer.update()).toMatchObject({ missing: 4, indexed: 3, left: 1 });
    expect(wrong.index.hasOid(oidOf(repo, "notes.md"))).toBe(false);
    expect(wrong.index.hasOid(oidOf(repo, "src/b.ts"))).toBe(true);
  });
});
