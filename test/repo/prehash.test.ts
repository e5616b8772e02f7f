/**
 * Where a capture's candidate is among the files read ahead (PrehashList.find): the same answer as a map of
 * every path, whether the candidates follow the items closely (the usual case), skip long runs of them (files
 * git status named), or name paths that are not there at all (symlinks, blobs the store knew).
 */
import { describe, expect, test } from "bun:test";
import { compareUtf8 } from "../../src/core/byte-order";
import type { HashItem } from "../../src/repo/hash-files";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../src/core/repo-path";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { closeWorkspace, openWorkspace } from "../../src/ops/workspace";
import { Prehash, PrehashList } from "../../src/repo/prehash";
import { startIndexListing } from "../../src/repo/tree-scan";
import { tmpRepo } from "../helpers/tmp-repo";

describe("PrehashList.find", () => {
  test("every answer equals a map's, over random gaps, misses and repeats", () => {
    let seed = 11;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let round = 0; round < 300; round++) {
      const paths = [...new Set(Array.from({ length: 1 + next(200) }, () => `d${next(20)}/f${next(500)}.txt`))].sort(compareUtf8);
      const items: HashItem[] = paths.map((path, index) => ({ index, path, gitOid: "0".repeat(40), mode: "100644" }));
      const where = new Map(paths.map((p, k) => [p, k]));
      const list = new PrehashList(items);
      // candidates in byte order: most items, runs of them skipped (short and longer than the look-ahead), and
      // paths that are not items, now and then one asked again
      const asked: string[] = [];
      for (let k = 0; k < paths.length; k++) {
        const r = next(20);
        if (r === 0) k += 1 + next(30);
        else if (r === 1) asked.push(`${paths[k]}-not-there`);
        else if (r === 2 && asked.length > 0) asked.push(asked[asked.length - 1] as string);
        if (k < paths.length) asked.push(paths[k] as string);
      }
      for (const p of asked) expect([p, list.find(p)]).toEqual([p, where.get(p)]);
    }
  });

  test("paths asked out of order are still found (a map made once)", () => {
    const items: HashItem[] = ["a", "b", "c", "d", "e"].map((path, index) => ({ index, path }));
    const list = new PrehashList(items);
    expect(["e", "a", "c", "b", "zz", "d"].map((p) => list.find(p))).toEqual([4, 0, 2, 1, undefined, 3]);
  });
});

describe("a read ahead started from the listing, cancelled at any moment (the state was captured already)", () => {
  test("cancel settles everything, the reading stops, no rejection goes unhandled, and a capture afterwards is whole", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 400; i++) repo.write(`d${i % 13}/f${i}.txt`, `content ${i % 50}\n`.repeat(1 + (i % 40)));
    repo.commit();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      // cancelled before the listing is in, as it comes, while the split is made, while the files are read
      for (const wait of [-1, 0, 1, 2, 5, 20]) {
        rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
        const ws = openWorkspace(repo.root);
        const listing = startIndexListing(ws.repo, [ROOT]);
        const prehash = new Prehash(ws.repo, ws.blobs, listing, [ROOT], Date.now() - 5000);
        if (wait >= 0) await listing;
        for (let t = 0; t < wait; t++) await new Promise((r) => setImmediate(r));
        await prehash.cancel();
        const outcome = await prehash.outcomes.then(
          (o) => o.length,
          (e: Error) => e.message,
        );
        expect([400, "read ahead cancelled"]).toContain(outcome);
        closeWorkspace(ws);
      }
      await Bun.sleep(50);
      expect(unhandled).toEqual([]);
      // the store those cancels left behind captures the tree whole
      const ws = openWorkspace(repo.root);
      const snap = await createSnapshot(ws, { paths: ["."] });
      expect(snap.manifest_stats.files).toBe(400);
      closeWorkspace(ws);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
