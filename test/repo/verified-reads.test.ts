import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerifiedReads } from "../../src/repo/verified-reads";
import { tmpDir } from "../helpers/tmp-repo";

const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

describe("VerifiedReads (the work tree read on workers, without the native module)", () => {
  test("a file is kept only when it holds exactly the expected bytes: another size, other bytes, a symlink, a FIFO, a directory or nothing is null", async () => {
    await using dir = tmpDir("ws-verified-reads-");
    const body = "the expected bytes\n".repeat(500);
    writeFileSync(join(dir.path, "same.txt"), body);
    writeFileSync(join(dir.path, "empty.txt"), "");
    writeFileSync(join(dir.path, "longer.txt"), body + "x");
    writeFileSync(join(dir.path, "other.txt"), body.replace("expected", "EXPECTED"));
    symlinkSync("same.txt", join(dir.path, "link.txt"));
    expect(Bun.spawnSync(["mkfifo", join(dir.path, "pipe.txt")]).exitCode).toBe(0);
    mkdirSync(join(dir.path, "dir.txt"));
    const want = (name: string, bytes = body) => ({ abs: join(dir.path, name), size: Buffer.byteLength(bytes), sha256: sha256(bytes) });
    const pool = new VerifiedReads(2);
    try {
      const found = await pool.read([
        want("same.txt"),
        want("empty.txt", ""),
        want("longer.txt"),
        want("other.txt"),
        want("link.txt"),
        want("pipe.txt"),
        want("dir.txt"),
        want("missing.txt"),
        { ...want("same.txt"), sha256: sha256(body).toUpperCase() }, // not the digest's form: never a match
        { ...want("same.txt"), sha256: sha256(body).slice(1) }, // a digest one character short shifts nothing after it
        want("same.txt"),
      ]);
      expect(found.map((b) => (b === null ? null : Buffer.from(b).toString()))).toEqual([body, "", null, null, null, null, null, null, null, null, body]);
      expect(found[0]!.byteLength).toBe(body.length);
    } finally {
      pool.close();
    }
  }, 20_000);

  test("many batches at once over two workers: each answer is its own batch's, in order", async () => {
    await using dir = tmpDir("ws-verified-reads-");
    const bodies: string[] = [];
    for (let k = 0; k < 600; k++) {
      bodies.push(`file ${k}\n`.repeat(1 + (k % 97)));
      writeFileSync(join(dir.path, `f${k}`), bodies[k]!);
    }
    const pool = new VerifiedReads(2);
    try {
      const batches = Array.from({ length: 12 }, (_, b) =>
        // every fifth file asked with another's hash: null there, whatever the batch
        bodies.slice(b * 50, b * 50 + 50).map((s, k) => ({ abs: join(dir.path, `f${b * 50 + k}`), size: s.length, sha256: sha256(k % 5 === 4 ? "not it" : s) })),
      );
      const answers = await Promise.all(batches.map((items) => pool.read(items)));
      answers.forEach((found, b) =>
        found.forEach((bytes, k) => expect(bytes === null ? null : Buffer.from(bytes).toString()).toBe(k % 5 === 4 ? null : bodies[b * 50 + k]!)),
      );
    } finally {
      pool.close();
    }
  }, 20_000);

  test("closed with batches still out, every file of them is null (the caller reads the store) and no later read waits", async () => {
    await using dir = tmpDir("ws-verified-reads-");
    const big = "x".repeat(1 << 20);
    for (let k = 0; k < 64; k++) writeFileSync(join(dir.path, `f${k}`), big);
    const pool = new VerifiedReads(1);
    const items = Array.from({ length: 64 }, (_, k) => ({ abs: join(dir.path, `f${k}`), size: big.length, sha256: sha256(big) }));
    const out = [pool.read(items), pool.read(items), pool.read(items)];
    pool.close();
    const answers = await Promise.all(out);
    // the worker was stopped before it answered the later batches (it may have answered the first)
    expect(answers[2]!.every((b) => b === null)).toBe(true);
    expect(answers.flat().every((b) => b === null || b.byteLength === big.length)).toBe(true);
    expect(await pool.read(items.slice(0, 2))).toEqual([null, null]);
  }, 20_000);
});
