import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileHasher, type HashItem, type HashOutcome } from "../../src/repo/hash-files";
import { joinPaths, nativeModule, nativeSummary, statRecordsOf, waitReady, type NativeModule } from "../../src/repo/native";
import { hashNatively } from "../../src/repo/native-hash";
import { runGit, tmpRepo } from "../helpers/tmp-repo";

/**
 * The native module must be there wherever it can be built: a build that
 * silently fell back to TypeScript would pass every other test while losing
 * the fast paths. WORKSNAP_BUILD_NATIVE=0 (or WORKSNAP_NATIVE=0) says so on purpose.
 */
const off = process.env.WORKSNAP_BUILD_NATIVE === "0" || process.env.WORKSNAP_NATIVE === "0";
const m = nativeModule();

test("the native module is built and loads (or is switched off on purpose)", () => {
  if (off) expect(m).toBeNull();
  else {
    expect(nativeSummary()).toMatch(/^native: on \(sha256 (sha-ni|portable), \d+ threads\)$/);
    expect(m).not.toBeNull();
  }
});

const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const gitBlob = (b: Uint8Array) => new Bun.CryptoHasher("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

function bytes(len: number, seed: number): Uint8Array {
  const b = new Uint8Array(len);
  let x = seed * 2654435761 + len;
  for (let i = 0; i < len; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

describe.skipIf(m === null)("native hashing", () => {
  const mod = m as NativeModule;
  afterAll(() => mod.accelerate(true));

  for (const accelerated of [true, false]) {
    test(`SHA-256 and git blob ids equal the runtime's, every length around the block and padding edges (${accelerated ? "SHA extensions where present" : "portable C"})`, () => {
      mod.accelerate(accelerated);
      const lengths = [...Array.from({ length: 300 }, (_, i) => i), 511, 512, 513, 1000, 4095, 4096, 4097, 65_536 + 55, 1_000_003];
      for (const len of lengths) {
        const b = bytes(len, accelerated ? 1 : 2);
        expect({ len, sha: mod.sha256(b).toString("hex") }).toEqual({ len, sha: sha256(b) });
        expect({ len, git: mod.gitBlobId(b).toString("hex") }).toEqual({ len, git: gitBlob(b) });
      }
      mod.accelerate(true);
    });
  }

  test("a hash job reads, hashes and stats every file as FileHasher does; gone and directory paths are vanished, a FIFO is special and never waited on", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "alpha\n");
    repo.write("empty", "");
    repo.write("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755);
    repo.write("crlf.txt", "one\r\ntwo\r\n");
    repo.write("big.bin", bytes(300_000, 7));
    repo.write("gone.txt", "soon gone");
    repo.write("dir-now", "will be a directory");
    repo.write("fifo-now", "will be a FIFO");
    repo.commit();
    rmSync(join(repo.root, "gone.txt"));
    rmSync(join(repo.root, "dir-now"));
    mkdirSync(join(repo.root, "dir-now"));
    rmSync(join(repo.root, "fifo-now"));
    Bun.spawnSync(["mkfifo", join(repo.root, "fifo-now")]);
    const items = indexItems(repo.root);
    // a low stream threshold sends big.bin down the streamed path
    const opts = { root: repo.root, stateDir: join(repo.root, ".mcp"), trustCleanBefore: 0 };
    const nat = await hashNatively(mod, { ...opts, streamThreshold: 64 * 1024 }, items);
    expect(nat.fallback).toEqual([]);
    // the TypeScript twin opens without waiting too (O_NONBLOCK), so it answers for the FIFO as well
    const js = new FileHasher(opts);
    const expected = items.map((i) => comparable(js.hash(i)));
    expect(nat.outcomes.map(comparable).sort(byIndex)).toEqual(expected.sort(byIndex));
    const byPath = new Map(nat.outcomes.map((o) => [items[o.index]!.path, o]));
    expect(byPath.get("gone.txt")!.kind).toBe("vanished");
    expect(byPath.get("dir-now")!.kind).toBe("vanished");
    expect(byPath.get("fifo-now")!.kind).toBe("special");
    const big = byPath.get("big.bin") as Extract<HashOutcome, { kind: "ok" }>;
    expect(big.sha256).toBe(sha256(bytes(300_000, 7)));
    expect(big.gitOid).toBe(items.find((i) => i.path === "big.bin")!.gitOid!);
  });

  test("trusted files skip git's hash; an untrusted file whose bytes are not its index blob goes back for the TypeScript path to store", async () => {
    await using repo = await tmpRepo();
    repo.write("same.txt", "same\n");
    repo.write("changed.txt", "before\n");
    repo.commit();
    const items = indexItems(repo.root);
    writeFileSync(join(repo.root, "changed.txt"), "after!\n"); // same size: only a hash tells
    const opts = { root: repo.root, stateDir: join(repo.root, ".mcp"), streamThreshold: 1 << 20 };
    const verified = await hashNatively(mod, { ...opts, trustCleanBefore: 0 }, items);
    expect(verified.fallback.map((i) => i.path)).toEqual(["changed.txt"]);
    expect(verified.outcomes.map((o) => items[o.index]!.path)).toEqual(["same.txt"]);
    // trusting everything (a cutoff in the future) takes the index's word for both
    const trusting = await hashNatively(mod, { ...opts, trustCleanBefore: Date.now() + 60_000 }, items);
    expect(trusting.fallback).toEqual([]);
    expect(trusting.outcomes).toHaveLength(2);
  });

  test("in a SHA-256 repository the job computes git's SHA-256 blob ids, read whole and streamed, as FileHasher does; bytes that are not the index blob go back", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.git("init", "-q", "--object-format=sha256", "-b", "main");
    repo.write("a.txt", "alpha\n");
    repo.write("empty", "");
    repo.write("big.bin", bytes(300_000, 9));
    repo.write("changed.txt", "before\n");
    repo.commit();
    writeFileSync(join(repo.root, "changed.txt"), "after!\n"); // same size: only git's hash tells
    const items = indexItems(repo.root);
    expect(items.every((i) => i.gitOid!.length === 64)).toBe(true);
    const opts = { root: repo.root, stateDir: join(repo.root, ".mcp"), trustCleanBefore: 0 };
    const nat = await hashNatively(mod, { ...opts, streamThreshold: 64 * 1024 }, items); // big.bin streamed
    expect(nat.fallback.map((i) => i.path)).toEqual(["changed.txt"]);
    const js = new FileHasher(opts);
    const expected = items.filter((i) => i.path !== "changed.txt").map((i) => comparable(js.hash(i)));
    expect(nat.outcomes.map(comparable).sort(byIndex)).toEqual(expected.sort(byIndex));
    const big = nat.outcomes.find((o) => items[o.index]!.path === "big.bin") as Extract<HashOutcome, { kind: "ok" }>;
    expect(big.gitOid).toBe(runGit(repo.root, ["hash-object", "big.bin"]).trim());
    // the job's records carry all 32 bytes: a SHA-1 job over the same files agrees with no id (all go back)
    const asSha1 = mod.hashStart(repo.root, joinPaths(items.map((i) => i.path)), items.length, 0, 1 << 20, 20);
    await waitReady(mod, asSha1, items.length);
    const records = mod.hashRecords(asSha1, 0, items.length);
    mod.release(asSha1);
    const L = mod.layout;
    const a = items.findIndex((i) => i.path === "a.txt");
    expect(records.toString("hex", a * L.HASH_RECORD + L.HR_GIT, a * L.HASH_RECORD + L.HR_GIT + 20)).toBe(gitBlob(Buffer.from("alpha\n")));
  });

  test("a released job stops taking files and its handle refuses further calls", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`f${i}.txt`, `file ${i}\n`);
    repo.commit();
    const items = indexItems(repo.root);
    const job = mod.hashStart(repo.root, joinPaths(items.map((i) => i.path)), items.length, 0, 1 << 20, 20);
    mod.release(job);
    mod.release(job); // idempotent
    expect(() => mod.ready(job)).toThrow(/not a live job/);
    const again = mod.hashStart(repo.root, joinPaths(items.map((i) => i.path)), items.length, 0, 1 << 20, 20);
    expect(await waitReady(mod, again, items.length)).toBe(items.length);
    mod.release(again);
  });

  test("an lstat job asked while a long hash job runs is answered before that job's files are all taken (it goes first)", async () => {
    await using repo = await tmpRepo();
    const body = Buffer.alloc(256 * 1024, 0x61);
    for (let i = 0; i < 1200; i++) writeFileSync(join(repo.root, `big-${i}.bin`), body); // 300 MB to hash
    for (let i = 0; i < 300; i++) repo.write(`small/s${i}.txt`, `${i}\n`);
    const paths = Array.from({ length: 1200 }, (_, i) => `big-${i}.bin`);
    const job = mod.hashStart(repo.root, joinPaths(paths), paths.length, 0, 1 << 20, 20);
    try {
      const asked = Array.from({ length: 300 }, (_, i) => `small/s${i}.txt`);
      const records = await statRecordsOf(mod, repo.root, asked);
      const hashed = mod.ready(job);
      expect(hashed).toBeLessThan(paths.length / 2);
      for (let k = 0; k < asked.length; k++) expect(records[k * mod.layout.STAT_RECORD + mod.layout.SJ_STATUS]).toBe(0);
      expect(await waitReady(mod, job, paths.length)).toBe(paths.length);
    } finally {
      mod.release(job);
    }
  });

  test("a tracked file replaced by a symlink is not followed: it has vanished", async () => {
    await using repo = await tmpRepo();
    repo.write("real.txt", "real\n");
    repo.commit();
    const items = indexItems(repo.root);
    rmSync(join(repo.root, "real.txt"));
    symlinkSync("/etc/passwd", join(repo.root, "real.txt"));
    const out = await hashNatively(mod, { root: repo.root, stateDir: join(repo.root, ".mcp"), trustCleanBefore: 0, streamThreshold: 1 << 20 }, items);
    expect(out.outcomes.map((o) => o.kind)).toEqual(["vanished"]);
  });

  // root reads anything: as root this is covered through the CLI, run as nobody (test/cli/native-paths.test.ts)
  test.skipIf(process.getuid?.() === 0)("an unreadable tracked file is denied, not skipped", async () => {
    await using repo = await tmpRepo();
    repo.write("secret.txt", "s\n");
    repo.commit();
    chmodSync(join(repo.root, "secret.txt"), 0o000);
    const out = await hashNatively(mod, { root: repo.root, stateDir: join(repo.root, ".mcp"), trustCleanBefore: 0, streamThreshold: 1 << 20 }, indexItems(repo.root));
    expect(out.outcomes.map((o) => o.kind)).toEqual(["denied"]);
  });
});

function indexItems(root: string): HashItem[] {
  return runGit(root, ["ls-files", "-s", "-z"])
    .split("\0")
    .filter(Boolean)
    .map((rec, index) => {
      const [meta, path] = rec.split("\t") as [string, string];
      const [mode, oid] = meta.split(" ") as [string, string];
      return { index, path, gitOid: oid, mode };
    });
}

/** An outcome without the fields that legitimately differ between two reads (the read time). */
function comparable(o: HashOutcome): Record<string, unknown> {
  if (o.kind !== "ok") return { index: o.index, kind: o.kind };
  const { hashedAt: _h, ...rest } = o;
  return rest;
}

function byIndex(a: { index?: unknown }, b: { index?: unknown }): number {
  return (a.index as number) - (b.index as number);
}
