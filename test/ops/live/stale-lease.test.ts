import { describe, expect, test } from "bun:test";
import { blobIdOf } from "../../../src/core/hash";
import { liveFingerprint } from "../../../src/ops/live/live-tree";
import { readFile } from "../../../src/ops/snapshot/file";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { listEntries } from "../../../src/ops/snapshot/list";
import { indexFilter, NO_MATCH } from "../../../src/ops/grep";
import { TrigramIndexer } from "../../../src/repo/trigram-index/indexer";
import { failure } from "../../helpers/errors";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

/** The lease of a worktree answer. */
const leaseOf = (out: object) => (out as { lease_id: string }).lease_id;

const staleLease = (call: Promise<unknown>) => failure(call, "STALE_LEASE");

describe("STALE_LEASE says what changed", () => {
  test("the files the lease read that changed (path, blob read, blob now), how many other paths changed, and the current fingerprint", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("c.txt", "c\n");
    repo.commit();
    using ws = wsOf(repo);
    const first = await readFile(ws, { mode: "worktree", path: "a.txt" });
    const lease = leaseOf(first);
    await readFile(ws, { mode: "worktree", path: "b.txt", lease_id: lease });
    repo.write("a.txt", "A\n");
    repo.write("c.txt", "C\n"); // changed, but not read under the lease
    repo.write("build/out.js", "x\n"); // a build writing an untracked file
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "b.txt", lease_id: lease }));
    expect(err.details.fingerprint).toEqual(await liveFingerprint(ws));
    expect(err.details.changed).toEqual([{ path: "a.txt", read_blob: blobIdOf("a\n"), current_blob: blobIdOf("A\n") }]);
    expect(err.details.changed_total).toBe(1);
    expect(err.details.untouched_changed).toBe(2); // c.txt and the untracked build/ directory
    expect(err.message).toContain("a.txt");
  });

  test("when none of the files it read changed, it says so: a fresh lease is all that is needed", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    repo.write("dist/bundle.js", "built\n");
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "a.txt", lease_id: leaseOf(read) }));
    expect(err.details.changed).toEqual([]);
    expect(err.details.changed_total).toBe(0);
    expect(err.details.untouched_changed).toBe(1);
    expect(err.message).toContain("nothing needs reading again");
  });

  test("a file already modified when read, modified again (its status unchanged), is named", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    repo.write("a.txt", "dirty once\n");
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    repo.write("a.txt", "dirty twice\n");
    repo.write("new.txt", "n\n"); // moves the fingerprint
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "a.txt", lease_id: leaseOf(read) }));
    expect(err.details.changed).toEqual([{ path: "a.txt", read_blob: blobIdOf("dirty once\n"), current_blob: blobIdOf("dirty twice\n") }]);
  });

  test("a checkout of another branch: the files read that differ are named, found through the index trees", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.write("c.txt", "c\n");
    repo.commit("base");
    repo.git("checkout", "-q", "-b", "other");
    repo.write("b.txt", "b on other\n");
    repo.write("c.txt", "c on other\n");
    repo.commit("other");
    repo.git("checkout", "-q", "main");
    using ws = wsOf(repo);
    const lease = leaseOf(await readFile(ws, { mode: "worktree", path: "a.txt" }));
    await readFile(ws, { mode: "worktree", path: "b.txt", lease_id: lease });
    repo.git("checkout", "-q", "other");
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "a.txt", lease_id: lease }));
    expect(err.details.changed).toEqual([{ path: "b.txt", read_blob: blobIdOf("b\n"), current_blob: blobIdOf("b on other\n") }]);
    expect(err.details.untouched_changed).toBe(1); // c.txt
  });

  test("a whole-tree grep's lease (clean files recorded by their index blob) names the one file that changed", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 50; i++) repo.write(`src/f${i}.ts`, `export const v${i} = ${i};\n`);
    repo.commit();
    using ws = wsOf(repo);
    const grep = await snapshotGrep(ws, { mode: "worktree", pattern: "export" });
    repo.write("src/f7.ts", "export const v7 = 70;\n");
    const err = await staleLease(listEntries(ws, { mode: "worktree", path: "src", lease_id: leaseOf(grep) }));
    expect(err.details.changed).toEqual([{ path: "src/f7.ts", read_blob: blobIdOf("export const v7 = 7;\n"), current_blob: blobIdOf("export const v7 = 70;\n") }]);
    expect(err.details.untouched_changed).toBe(0);
  });

  test("outside git: the listing the fingerprint hashes tells which files changed", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "a.txt" });
    repo.write("a.txt", "a, longer\n");
    repo.write("new.txt", "n\n");
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "b.txt", lease_id: leaseOf(read) }));
    expect(err.details.changed).toEqual([{ path: "a.txt", read_blob: blobIdOf("a\n"), current_blob: blobIdOf("a, longer\n") }]);
    expect(err.details.untouched_changed).toBe(1);
  });

  test("an unknown lease (a restarted server) is STALE_LEASE with the current fingerprint", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "a.txt", lease_id: `lease_${"0".repeat(32)}` }));
    expect(err.details.fingerprint).toEqual(await liveFingerprint(ws));
  });
});

describe("STALE_LEASE after a line range of a large file", () => {
  test("only the prefix the lease read counts: a change inside it is named (with the bytes read), a change beyond it is not", async () => {
    await using repo = await tmpRepo();
    const line = "x".repeat(99) + "\n";
    const big = "head\n" + line.repeat(100_000); // 10 MB: a range reads only as far as it needs
    repo.write("big.txt", big);
    repo.write("small.txt", "s\n");
    repo.commit();
    using ws = wsOf(repo);
    const read = await readFile(ws, { mode: "worktree", path: "big.txt", start_line: 1, end_line: 2 });
    expect(read.blob).toBeUndefined();
    repo.write("big.txt", `${big}tail\n`); // beyond what was read
    const beyond = await staleLease(readFile(ws, { mode: "worktree", path: "small.txt", lease_id: leaseOf(read) }));
    expect(beyond.details.changed).toEqual([]);
    const again = await readFile(ws, { mode: "worktree", path: "big.txt", start_line: 1, end_line: 2 });
    repo.write("big.txt", `HEAD\n${line.repeat(100_000)}`); // inside it (big.txt stays modified: an untracked file moves the fingerprint)
    repo.write("new.txt", "n\n");
    const inside = await staleLease(readFile(ws, { mode: "worktree", path: "small.txt", lease_id: leaseOf(again) }));
    expect(inside.details.changed).toMatchObject([{ path: "big.txt" }]);
    expect((inside.details.changed as { read_bytes: number }[])[0]?.read_bytes).toBeGreaterThan(0);
  });

  test("a whole-tree grep the trigram index answered: a file it ruled out unread, changed afterwards, is named as read with the blob it held", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`src/m${String(i).padStart(2, "0")}.ts`, `export const value${i} = ${i};\n`);
    repo.write("src/hit.ts", "export function handleRequest() {}\n");
    repo.commit();
    using ws = wsOf(repo);
    await new TrigramIndexer(ws.repo, ws.trigrams, { diskBudget: 1 << 30, memoryBudget: 64 << 20, background: false }).update();
    const filter = indexFilter(ws.trigrams, { pattern: "handleRequest", fixedStrings: true });
    const ruledOut = "src/m07.ts";
    expect([...filter!.byGitOids([repo.git("rev-parse", `:${ruledOut}`).trim()])]).toEqual([NO_MATCH]);
    // two searches under one lease (their touches merged), the second cut into pages
    const first = await snapshotGrep(ws, { mode: "worktree", pattern: "handleRequest", fixed_strings: true });
    expect(first.matches.map((m) => m.path)).toEqual(["src/hit.ts"]);
    const lease = leaseOf(first);
    await snapshotGrep(ws, { mode: "worktree", pattern: "value1", fixed_strings: true, max_matches: 3, lease_id: lease });
    repo.write(ruledOut, "export const value7 = 70;\n");
    const err = await staleLease(readFile(ws, { mode: "worktree", path: "src/hit.ts", lease_id: lease }));
    expect(err.details.changed).toEqual([{ path: ruledOut, read_blob: blobIdOf("export const value7 = 7;\n"), current_blob: blobIdOf("export const value7 = 70;\n") }]);
    expect(err.details.untouched_changed).toBe(0);
  });
});
