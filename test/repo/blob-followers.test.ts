/**
 * A blob several clean tracked paths hold is read once in a capture; the
 * other paths take its outcome where git's index vouches for them (git
 * status did not name them, and the capture's trust cutoff is set: no content
 * conversion), as it vouches for a blob a warm capture knows, and are read
 * like any file otherwise.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readLiveTree } from "../../src/ops/live/live-tree";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { openWorkspace, type Workspace } from "../../src/ops/workspace";
import { FollowerSettler, splitFollowers, splitFromPlan } from "../../src/repo/blob-followers";
import { captureEntries } from "../../src/repo/capture";
import type { HashItem, HashOutcome } from "../../src/repo/hash-files";
import { toManifestEntry } from "../../src/repo/manifest";
import { nativeModule } from "../../src/repo/native";
import { RACY_MARGIN_MS } from "../../src/repo/stat-cache";
import { plainIndexItemsAt, startIndexListing } from "../../src/repo/tree-scan";
import { Prehash } from "../../src/repo/prehash";
import { ROOT } from "../../src/core/repo-path";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

const FUTURE = () => Date.now() + 60_000; // every file counts as unchanged since git looked (capture-trust.test.ts)

function freshStore(repo: TmpRepo): Workspace {
  rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
  return openWorkspace(repo.root);
}

async function contents(ws: Workspace, entries: { path: string; blob: string }[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of entries) out[e.path] = new TextDecoder().decode(await ws.blobs.read(e.blob as never));
  return out;
}

describe("blobs shared by many paths", () => {
  test("every path gets its blob, the map learns each blob once, and the entries equal a capture that verifies every file", async () => {
    await using repo = await tmpRepo();
    for (let r = 0; r < 5; r++) {
      for (let i = 0; i < 30; i++) repo.write(`release-${r}/src/f${i}.ts`, i === r ? `edited in ${r}\n` : `shared file ${i}\n`.repeat(i + 1));
      repo.write(`release-${r}/bin/run.sh`, "#!/bin/sh\necho run\n", 0o755);
    }
    repo.write("release-0/src/same-as-run.txt", "#!/bin/sh\necho run\n"); // the same blob under another mode
    repo.commit();
    const ws = freshStore(repo);
    const tree = await readLiveTree(ws);
    const trusted = await captureEntries(ws.repo, ws.blobs, tree.entries, { gitComparedAt: FUTURE() });
    const verifying = freshStore(repo);
    const verified = await captureEntries(verifying.repo, verifying.blobs, (await readLiveTree(verifying)).entries);
    expect(trusted.entries).toEqual(verified.entries);
    expect(trusted.entries.length).toBe(5 * 31 + 1);
    const files = await contents(ws, trusted.entries);
    expect(files["release-3/src/f3.ts"]).toBe("edited in 3\n");
    expect(files["release-4/src/f7.ts"]).toBe("shared file 7\n".repeat(8));
    expect(trusted.entries.find((e) => e.path === "release-0/src/same-as-run.txt")?.mode).toBe("100644");
    expect(trusted.entries.find((e) => e.path === "release-2/bin/run.sh")?.mode).toBe("100755");
    const distinct = new Set(repo.git("ls-files", "-s").split("\n").filter(Boolean).map((l) => l.split(" ")[1])).size;
    expect(statSync(join(repo.root, ".mcp", "cache", "gitblobs.bin")).size).toBe(distinct * 72);
  });

  test("a path changed after git status looked is taken as the status saw it, as a warm capture takes a known blob; the next status names it and it is read", async () => {
    await using repo = await tmpRepo();
    repo.write("a/copy.txt", "the same bytes\n");
    repo.write("b/copy.txt", "the same bytes\n");
    repo.commit();
    const ws = freshStore(repo);
    const tree = await readLiveTree(ws);
    // the file changes after git looked: the entries, and the fingerprint with them, still name the index blob
    writeFileSync(join(repo.root, "b/copy.txt"), "changed afterwards, longer\n");
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries.map((e) => ({ ...e })), { gitComparedAt: FUTURE() });
    expect(await contents(ws, captured.entries)).toEqual({ "a/copy.txt": "the same bytes\n", "b/copy.txt": "the same bytes\n" });
    // what a warm capture does with the same status: the known blob, without a look at the file
    const warm = await captureEntries(ws.repo, ws.blobs, tree.entries.map((e) => ({ ...e })), { gitComparedAt: FUTURE() });
    expect(warm.entries).toEqual(captured.entries);
    const again = await captureEntries(ws.repo, ws.blobs, (await readLiveTree(ws)).entries, { gitComparedAt: FUTURE() });
    expect(await contents(ws, again.entries)).toEqual({ "a/copy.txt": "the same bytes\n", "b/copy.txt": "changed afterwards, longer\n" });
  });

  test("a blob whose first path changed after git looked vouches for no other path: they are read, each as it is", async () => {
    await using repo = await tmpRepo();
    for (const d of ["a", "b", "c"]) repo.write(`${d}/copy.txt`, "the same bytes\n");
    repo.commit();
    const ws = freshStore(repo);
    const tree = await readLiveTree(ws);
    // files older than the cutoff are trusted; the leader, changed after it, is verified and is not its blob
    const comparedAt = Date.now() + RACY_MARGIN_MS + 20;
    await Bun.sleep(60);
    writeFileSync(join(repo.root, "a/copy.txt"), "THE SAME BYTES\n"); // same size, other bytes
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries.map((e) => ({ ...e })), { gitComparedAt: comparedAt });
    expect(await contents(ws, captured.entries)).toEqual({ "a/copy.txt": "THE SAME BYTES\n", "b/copy.txt": "the same bytes\n", "c/copy.txt": "the same bytes\n" });
    const oid = repo.git("rev-parse", "HEAD:b/copy.txt").trim();
    expect(ws.blobs.gitMap.get(oid)?.size).toBe("the same bytes\n".length);
  });

  test("without a cutoff no path is taken from another: each is read and verified", async () => {
    await using repo = await tmpRepo();
    repo.write("a/copy.txt", "the same bytes\n");
    repo.write("b/copy.txt", "the same bytes\n");
    repo.commit();
    const ws = freshStore(repo);
    const tree = await readLiveTree(ws);
    writeFileSync(join(repo.root, "b/copy.txt"), "THE SAME BYTES\n"); // same size, other bytes
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries.map((e) => ({ ...e })));
    expect(await contents(ws, captured.entries)).toEqual({ "a/copy.txt": "the same bytes\n", "b/copy.txt": "THE SAME BYTES\n" });
  });
});

describe("regression: a read ahead's follower took the bytes of a modified first path", () => {
  test("a blob's first path modified long before the capture (its ctime older than the cutoff) vouches for no other path: each holds its own bytes", async () => {
    await using repo = await tmpRepo();
    // the first path of the blob (in byte order) is the one modified; the others hold the committed bytes
    for (const d of ["a", "b", "c"]) repo.write(`${d}/copy.txt`, "the committed bytes\n");
    for (const d of ["a", "b"]) repo.write(`${d}/other.txt`, "other bytes\n");
    repo.commit();
    repo.write("a/copy.txt", "modified, longer, and older than the cutoff\n");
    repo.write("a/other.txt", "OTHER BYTES\n"); // the same size
    await Bun.sleep(2100);
    const ws = freshStore(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const entries = ws.snapshots.load(snap.snapshot_id).entries;
    expect(await contents(ws, entries)).toEqual({
      "a/copy.txt": "modified, longer, and older than the cutoff\n",
      "a/other.txt": "OTHER BYTES\n",
      "b/copy.txt": "the committed bytes\n",
      "b/other.txt": "other bytes\n",
      "c/copy.txt": "the committed bytes\n",
    });
    const oid = repo.git("rev-parse", "HEAD:b/copy.txt").trim();
    expect(ws.blobs.gitMap.get(oid)?.size).toBe("the committed bytes\n".length);
  });
});

describe("the split into each blob's first path and the others", () => {
  test("equals a split by the whole blob id, blob ids sharing their first 48 bits included (property)", () => {
    const oids = ["a".repeat(40), `${"a".repeat(12)}${"b".repeat(28)}`, `${"a".repeat(12)}${"c".repeat(28)}`, "d".repeat(40), "e".repeat(64), `${"e".repeat(12)}${"f".repeat(52)}`];
    fc.assert(
      fc.property(fc.array(fc.record({ oid: fc.integer({ min: 0, max: 5 }), mode: fc.constantFrom("100644", "100755", "120000", undefined) }), { maxLength: 80 }), (raw) => {
        const items: HashItem[] = raw.map((r, index) => ({ index, path: `p${index}`, gitOid: r.mode === undefined ? undefined : oids[r.oid], mode: r.mode }));
        const split = splitFollowers(items);
        const seen = new Map<string, number>();
        const want = { leaders: [] as HashItem[], followers: [] as HashItem[], leaderOf: [] as number[] };
        for (const item of items) {
          const clean = item.gitOid !== undefined && (item.mode === "100644" || item.mode === "100755");
          const lead = clean ? seen.get(item.gitOid as string) : undefined;
          if (lead === undefined) {
            if (clean) seen.set(item.gitOid as string, want.leaders.length);
            want.leaders.push(item);
          } else {
            want.followers.push(item);
            want.leaderOf.push(lead);
          }
        }
        expect(split).toEqual(want);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("followers settled as their leaders' outcomes come", () => {
  test("outcomes given in order, some only at the end, settle the followers as outcomes given all at the end do (property)", () => {
    const oids = ["a", "b", "c", "d", "e"].map((c) => c.repeat(40));
    fc.assert(
      fc.property(
        fc.array(fc.record({ oid: fc.integer({ min: 0, max: 4 }), clean: fc.boolean() }), { maxLength: 60 }),
        fc.array(fc.constantFrom("same", "other", "vanished", "late"), { minLength: 5, maxLength: 5 }),
        fc.integer({ min: 1, max: 7 }),
        (raw, kinds, step) => {
          const items: HashItem[] = raw.map((r, index) => ({ index, path: `p${index}`, gitOid: r.clean ? oids[r.oid] : undefined, mode: r.clean ? "100644" : undefined }));
          const split = splitFollowers(items);
          const outcomeOf = (item: HashItem, final: boolean): HashOutcome | null => {
            const kind = item.gitOid ? kinds[oids.indexOf(item.gitOid)] : "same";
            if (kind === "late" && !final) return null;
            if (kind === "vanished") return { index: item.index, kind: "vanished" };
            const gitOid = kind === "other" ? "f".repeat(40) : (item.gitOid ?? "");
            return { index: item.index, kind: "ok", sha256: `${item.index}`.padStart(64, "0"), gitOid, mode: "100644", size: item.index, mtimeMs: 0, ctimeMs: 0, ino: 0, hashedAt: 0 };
          };
          const finals = split.leaders.map((l) => outcomeOf(l, true) as HashOutcome);
          const atEnd = new FollowerSettler(split).finish(finals);
          const early = new FollowerSettler(split);
          for (let p = 0; p < split.leaders.length; p += step) {
            for (const l of split.leaders.slice(p, p + step)) early.leader(l, outcomeOf(l, false));
            early.advance();
          }
          const asGiven = early.finish(finals);
          const byIndex = <T extends { index: number }>(xs: T[]) => [...xs].sort((x, y) => x.index - y.index);
          expect(byIndex(asGiven.outcomes)).toEqual(byIndex(atEnd.outcomes));
          expect(byIndex(asGiven.again)).toEqual(byIndex(atEnd.again));
          // every follower is settled exactly once, and a vouched one holds its leader's bytes
          expect(asGiven.outcomes.length + asGiven.again.length).toBe(split.followers.length);
          for (const o of asGiven.outcomes) {
            const leader = items[o.leadAt] as HashItem;
            expect(o.gitOid).toBe(leader.gitOid as string);
            expect(o.sha256).toBe(`${leader.index}`.padStart(64, "0"));
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe("the split planned natively from the listing (src/native/listing_plan.c)", () => {
  const m = nativeModule();
  /** blob ids in hex of a SHA-1 (40 digits) or SHA-256 (64) repository; two share their first 32 bits */
  const idsOf = (hex: number) => ["a", "b", "c", "d"].map((c) => c.repeat(hex)).concat(`${"a".repeat(8)}${"e".repeat(hex - 8)}`);
  /** A record as git writes it, or bent: the planner and the TypeScript parse must skip or keep the same ones. */
  type Rec = { tag: string; mode: string; id: string; stage: string; name: Uint8Array; bent: "no tab" | "two spaces" | "no fields" | null };
  const enc = (s: string) => new TextEncoder().encode(s);
  const recordOf = (ids: string[]) => fc.record({
    tag: fc.constantFrom("H", "H", "H", "H", "S", "h", "M"),
    mode: fc.constantFrom("100644", "100644", "100755", "120000", "160000"),
    id: fc.integer({ min: 0, max: ids.length - 1 }).map((k) => ids[k] as string),
    stage: fc.constantFrom("0", "0", "0", "0", "1", "2"),
    name: fc.oneof(
      { weight: 8, arbitrary: fc.stringMatching(/^[a-z]{1,3}(\/[a-z]{1,3}){0,2}$/).map(enc) },
      // names the parse leaves out: reserved, not UTF-8
      { weight: 1, arbitrary: fc.constantFrom(".mcp/state", "x/.git/config", ".GIT/y", ".mcp").map(enc) },
      { weight: 1, arbitrary: fc.constantFrom(Uint8Array.of(0x61, 0xff, 0x62), Uint8Array.of(0xc3, 0x28)) },
      { weight: 1, arbitrary: fc.constantFrom("caf\u00e9", "\u{1f600}/x", "a b\tc").map(enc) },
    ),
    bent: fc.option(fc.constantFrom("no tab" as const, "two spaces" as const, "no fields" as const), { freq: 8 }),
  });
  const bytesOf = (r: Rec): Uint8Array => {
    const head = r.bent === "no fields" ? "garbage" : r.bent === "two spaces" ? `${r.tag}  ${r.mode} ${r.id} ${r.stage}` : `${r.tag} ${r.mode} ${r.id} ${r.stage}`;
    return Buffer.concat([enc(head), enc(r.bent === "no tab" ? " " : "\t"), r.name, Uint8Array.of(0)]);
  };
  const reserved = (name: Uint8Array) => {
    const s = new TextDecoder().decode(name);
    return s === ".mcp" || s.startsWith(".mcp/") || s.split("/").some((seg) => seg.toLowerCase() === ".git");
  };
  const utf8 = (name: Uint8Array) => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(name);
      return true;
    } catch {
      return false;
    }
  };

  for (const hex of [40, 64])
  test.skipIf(m === null)(`the planner keeps the records the parse keeps, leads each blob by its first, and the split names every item's leader (property, ${hex}-digit ids)`, async () => {
    await using dir = tmpDir("ws-plan-");
    fc.assert(
      fc.property(fc.array(recordOf(idsOf(hex)), { maxLength: 60 }), (recs) => {
        const listing = Buffer.concat(recs.map(bytesOf));
        const [job, plan] = (m as NonNullable<typeof m>).hashStartListing(dir.path, listing, 0, 1 << 20);
        if (job) (m as NonNullable<typeof m>).release(job);
        // what git's rules make of the records: the plain ones, each blob's first, the items a capture reads
        const plain = recs.filter((r) => !r.bent && r.tag === "H" && r.stage === "0" && (r.mode === "100644" || r.mode === "100755"));
        const first = new Map<string, number>();
        const leaderOf = plain.map((r) => {
          if (!first.has(r.id)) first.set(r.id, first.size);
          return first.get(r.id) as number;
        });
        const leaderPlain = [...first.keys()].map((id) => plain.findIndex((r) => r.id === id));
        expect([...plan]).toEqual([plain.length, first.size, ...leaderOf, ...leaderPlain]);
        expect(job === null).toBe(first.size === 0);
        const parsed = plainIndexItemsAt(listing);
        if (!parsed) throw new Error("a listing of one object format is always parsed");
        expect(parsed.plain).toBe(plain.length);
        const kept = plain.map((r, p) => ({ r, p })).filter(({ r }) => utf8(r.name) && !reserved(r.name));
        expect(parsed.items.map((i) => i.path)).toEqual(kept.map(({ r }) => new TextDecoder().decode(r.name)));
        expect([...parsed.plainAt]).toEqual(kept.map(({ p }) => p));
        const split = splitFromPlan(parsed.items, parsed.plainAt, plan);
        if (!split) throw new Error("the plan matches the parse");
        // a leader is an item when the blob's first record is one; a placeholder (index -1) otherwise
        expect(split.leaders.map((l) => l.index)).toEqual(leaderPlain.map((p) => kept.findIndex((k) => k.p === p)));
        for (let j = 0; j < split.followers.length; j++) {
          const f = split.followers[j] as HashItem;
          const lead = split.leaders[split.leaderOf[j] as number] as HashItem;
          expect(lead.gitOid).toBe(f.gitOid as string);
          if (lead.index >= 0) expect(lead.index).toBeLessThan(f.index);
        }
        expect(split.leaders.filter((l) => l.index >= 0).length + split.followers.length).toBe(parsed.items.length);
      }),
      { numRuns: 800 },
    );
  });

  test("a listing whose ids are of two lengths, or of neither, is left to the TypeScript split (the planner counts only the first plain record's length)", () => {
    const mixed = enc(`H 100644 ${"a".repeat(64)} 0\tx.txt\0H 100644 ${"b".repeat(40)} 0\ty.txt\0`);
    expect(plainIndexItemsAt(mixed)).toBeNull();
    expect(plainIndexItemsAt(enc(`H 100644 ${"a".repeat(50)} 0\tx.txt\0`))).toBeNull();
    expect(plainIndexItemsAt(enc(`H 100644 ${"a".repeat(64)} 0\tx.txt\0`))?.items.map((i) => i.gitOid)).toEqual(["a".repeat(64)]);
  });

  test("a cold capture reads each blob once by its first path, and a blob whose first path is not UTF-8 has its others read: every path holds its own bytes", async () => {
    await using repo = await tmpRepo();
    for (let r = 0; r < 4; r++) for (let i = 0; i < 25; i++) repo.write(`r${r}/f${i}.txt`, `blob ${i % 9}\n`.repeat(1 + (i % 9)));
    // the first path of a blob in byte order is a name that is not UTF-8: skipped, the blob's other paths read
    writeFileSync(Buffer.concat([Buffer.from(repo.root + "/a"), Buffer.from([0xff]), Buffer.from(".txt")]), "the odd one\n");
    repo.write("b.txt", "the odd one\n");
    repo.write("c.txt", "the odd one\n");
    repo.commit();
    repo.write("r1/f3.txt", "modified\n");
    const ws = freshStore(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    expect(snap.skipped.non_utf8).toBe(1);
    const entries = ws.snapshots.load(snap.snapshot_id).entries;
    const want: Record<string, string> = { "b.txt": "the odd one\n", "c.txt": "the odd one\n" };
    for (let r = 0; r < 4; r++) for (let i = 0; i < 25; i++) want[`r${r}/f${i}.txt`] = `blob ${i % 9}\n`.repeat(1 + (i % 9));
    want["r1/f3.txt"] = "modified\n";
    expect(await contents(ws, entries)).toEqual(want);
    // the TypeScript path captures the same snapshot
    const plainWs = freshStore(repo);
    const plainCapture = await captureEntries(plainWs.repo, plainWs.blobs, (await readLiveTree(plainWs)).entries);
    expect(entries).toEqual(plainCapture.entries.map((e) => toManifestEntry(e)));
  });
});

describe("a capture tells its entries as they are known (the manifest written while the rest is read)", () => {
  test("the entries told, in order, are the entries returned: shared blobs, modified, untracked, a file gone and a FIFO among them", async () => {
    await using repo = await tmpRepo();
    for (let r = 0; r < 3; r++) for (let i = 0; i < 40; i++) repo.write(`r${r}/f${String(i).padStart(2, "0")}.txt`, `blob ${i % 11}\n`.repeat(1 + (i % 11)));
    repo.commit();
    await Bun.sleep(2100); // older than the cutoff: the read ahead takes clean files as their index blobs
    repo.write("r0/f03.txt", "modified\n");
    repo.write("r1/new.txt", "untracked\n");
    repo.write("r2/gone.txt", "untracked, then gone\n");
    repo.write("r2/fifo.txt", "untracked, then a FIFO\n");
    const ws = freshStore(repo);
    const listing = startIndexListing(ws.repo, [ROOT]);
    const prehash = new Prehash(ws.repo, ws.blobs, listing, [ROOT], Date.now());
    const tree = await readLiveTree(ws, [ROOT], listing);
    // after git status looked: one file gone, one turned into a FIFO (never read as content)
    rmSync(join(repo.root, "r2/gone.txt"));
    rmSync(join(repo.root, "r2/fifo.txt"));
    Bun.spawnSync(["mkfifo", join(repo.root, "r2/fifo.txt")]);
    const told: { path: string; blob: string }[] = [];
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, { gitComparedAt: tree.gitComparedAt, prehash, onEntry: (e) => told.push(e) });
    expect(captured.vanished).toEqual(["r2/gone.txt"]);
    expect(captured.unreadable).toEqual(["r2/fifo.txt"]);
    expect(told).toEqual(captured.entries);
    expect(told.length).toBe(3 * 40 + 1);
    const files = await contents(ws, told);
    expect(files["r0/f03.txt"]).toBe("modified\n");
    expect(files["r1/new.txt"]).toBe("untracked\n");
    expect(files["r2/f10.txt"]).toBe("blob 10\n".repeat(11));
    await prehash.cancel();
  });
});
