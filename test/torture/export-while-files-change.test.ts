/**
 * An export reads each blob from its path in the work tree first and keeps what hashes to the blob's id. Files
 * that change while they are read must never reach the bundle: a file grown or shrunk between its stat and its
 * read (the native reads put a file of the expected size into a slot of the window's block, one byte more read to
 * see its end), rewritten in place with other bytes of the same size, replaced by a rename, or deleted and made
 * again. A process rewrites files of the tree without pause while the compiled binary exports the snapshot over
 * and over, with the native module and without it (the workers' reads): every bundle is the snapshot's, byte for
 * byte.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { cli } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

const FILES = 2_500; // past the workers' threshold without the module (2,000), and three native windows
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** A file's first bytes: sizes from empty to 96 KiB, some of them the same. */
function body(i: number): Uint8Array {
  const size = i % 11 === 0 ? 0 : i % 7 === 0 ? 96 * 1024 : ((i * 7919) % 9000) + 1;
  return new Uint8Array(size).map((_, k) => (i + k * 31) & 0xff);
}

const MUTATOR = `
import { renameSync, rmSync, truncateSync, writeFileSync, appendFileSync, openSync, writeSync, closeSync, statSync } from "node:fs";
import { join } from "node:path";
const [root, count, tally] = process.argv.slice(2);
const n = Number(count);
let x = 12345;
const next = () => (x = (x * 1103515245 + 12345) >>> 0);
let done = 0;
const parent = process.ppid;
for (;;) {
  // orphaned (the test ended without killing it: a timeout), it stops by itself
  if (done % 200 === 0 && process.ppid !== parent) process.exit(0);
  const i = next() % n;
  const p = join(root, "d" + (i % 40), "f" + i + ".bin");
  try {
    switch (next() % 5) {
      case 0: appendFileSync(p, "grown"); break;                        // longer than the blob
      case 1: truncateSync(p, Math.max(0, statSync(p).size - 3)); break; // shorter
      case 2: { const fd = openSync(p, "r+"); writeSync(fd, "XYZ", 0); closeSync(fd); break; } // same size, other bytes
      case 3: writeFileSync(p + ".tmp", "replaced " + next()); renameSync(p + ".tmp", p); break;
      case 4: rmSync(p, { force: true }); writeFileSync(p, "made again"); break;
    }
    done++;
  } catch {}
  if (done % 200 === 0) writeFileSync(tally, String(done));
}
`;

describe("export while the work tree changes", () => {
  test(
    "files grown, shrunk, rewritten, replaced and made again during the reads never reach a bundle: every export is the snapshot's bytes, with the native reads and with the workers'",
    async () => {
      await using repo = await tmpRepo();
      for (let i = 0; i < FILES; i++) repo.write(`d${i % 40}/f${i}.bin`, body(i));
      repo.commit();
      const created = cli(["snapshot", "create", "--root", repo.root]);
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      const exportTo = (name: string, env?: Record<string, string>) => {
        const out = repo.beside(name);
        const r = cli(["snapshot", "export", id, "--root", repo.root, "-o", out], { env });
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        return sha(readFileSync(out));
      };
      const reference = exportTo(".ref.tar");

      const script = repo.beside(".mutator.ts");
      const tally = repo.beside(".tally");
      await Bun.write(script, MUTATOR);
      const mutator = Bun.spawn([process.execPath, script, repo.root, String(FILES), tally], { stdout: "ignore", stderr: "ignore" });
      try {
        while (!existsSync(tally)) {
          // it has begun once it counts; a helper that died before is the test's failure, not a wait until the timeout
          expect(mutator.exitCode).toBeNull();
          await Bun.sleep(5);
        }
        const got: string[] = [];
        for (let k = 0; k < 4; k++) got.push(exportTo(`.native-${k}.tar`));
        for (let k = 0; k < 2; k++) got.push(exportTo(`.plain-${k}.tar`, { WORKSNAP_NATIVE: "0" }));
        expect(got).toEqual(got.map(() => reference));
      } finally {
        mutator.kill("SIGKILL"); // its loop never yields to a signal handler; it counts as it goes
        await mutator.exited;
      }
      // the files did change while the exports read them (thousands of rewrites)
      expect(Number(readFileSync(tally, "utf8"))).toBeGreaterThan(1000);
    },
    120_000,
  );
});
