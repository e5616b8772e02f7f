/**
 * An export killed at a random moment (kill -9 of the compiled CLI, while its native threads read the work tree
 * into blocks, its writer thread writes from them and its syncer flushes behind) never leaves a partial bundle
 * where it was asked to write: the file named by `-o` holds the previous bundle or the whole new one, and the
 * dead process's temporary file is removed by the next process. The next export writes the bundle whole.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash";
import { cli, requireBinary } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";
import { attempts, budgetMs } from "./scale";

describe("kill -9 during an export", () => {
  test(
    "at random moments: the output is the previous file or the whole bundle, the temporary file goes, the next export is whole",
    async () => {
      const bin = requireBinary();
      await using repo = await tmpRepo();
      // windows of small files, and large files read whole into blocks of their own: about 60 MB of bundle
      for (let i = 0; i < 4000; i++) repo.write(`src/m${i % 40}/f${i}.txt`, `module ${i}\n`.repeat(1 + (i % 900)));
      for (let i = 0; i < 3; i++) repo.write(`assets/a${i}.bin`, new Uint8Array((9 << 20) + i).map((_, k) => (k * (i + 3)) & 255));
      repo.commit();
      const created = cli(["snapshot", "create", "--root", repo.root]);
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      const out = repo.beside(".tar");
      const previous = new TextEncoder().encode("the bundle an earlier export left here\n");
      const tmp = join(repo.root, ".mcp", "tmp");
      const temps = () => readdirSync(tmp).filter((n) => !n.startsWith("carry-"));

      // how long a whole export takes here, to spread the kills over it
      const t0 = performance.now();
      expect(cli(["snapshot", "export", id, "-o", out, "--root", repo.root]).code).toBe(0);
      const whole = performance.now() - t0;
      const want = sha256Hex(readFileSync(out));

      let seed = 11;
      const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
      const tries = attempts(6, 40);
      let killedMidway = 0;
      for (let t = 0; t < tries; t++) {
        writeFileSync(out, previous);
        const child = Bun.spawn([bin, "snapshot", "export", id, "-o", out, "--root", repo.root], { stdout: "ignore", stderr: "ignore" });
        await Bun.sleep(Math.floor(next() * whole));
        child.kill(9);
        if ((await child.exited) !== 0) killedMidway++;
        const left = sha256Hex(readFileSync(out));
        expect([t, left === sha256Hex(previous) || left === want]).toEqual([t, true]);
        // the next process removes the dead one's temporary file, and writes the bundle whole
        const again = cli(["snapshot", "export", id, "-o", out, "--root", repo.root]);
        expect([t, again.code]).toEqual([t, 0]);
        expect([t, sha256Hex(readFileSync(out))]).toEqual([t, want]);
        expect([t, temps()]).toEqual([t, []]);
      }
      // most kills land while the export runs (a delay drawn over its whole duration)
      expect(killedMidway).toBeGreaterThan(0);
    },
    budgetMs(120_000, 900_000),
  );
});
