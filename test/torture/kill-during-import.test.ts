/**
 * An import killed at a random moment (kill -9 of the compiled CLI, while the native threads create its staged
 * blobs in batches, or while it publishes them) leaves the store usable: no snapshot but the bundle's whole one,
 * no blob in the store whose bytes are not its id (a staged file is only ever moved in whole, after every batch
 * was written), and the dead process's staging directory is removed by the next process. The next import of
 * the same bundle succeeds, and the snapshot exports again byte for byte.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash";
import { cli, requireBinary } from "../helpers/binary";
import { tornLooseBlobs } from "../helpers/loose-blobs";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";
import { attempts, budgetMs } from "./scale";

describe("kill -9 during an import", () => {
  test(
    "at random moments: the store holds whole blobs only, nothing is left staged, the next import succeeds",
    async () => {
      const bin = requireBinary();
      await using repo = await tmpRepo({ git: false });
      // thousands of small blobs (the batched path) and a few large ones (written as read)
      for (let i = 0; i < 4000; i++) repo.write(`src/m${i % 40}/f${i}.txt`, `module ${i}\n`.repeat(1 + (i % 300)));
      for (let i = 0; i < 3; i++) repo.write(`assets/a${i}.bin`, new Uint8Array((2 << 20) + i).fill(i + 7));
      const created = cli(["snapshot", "create", "--root", repo.root]);
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      const bundle = repo.beside(".tar");
      expect(cli(["snapshot", "export", id, "-o", bundle, "--root", repo.root]).code).toBe(0);
      const want = sha256Hex(readFileSync(bundle));

      // how long a whole import takes here, to spread the kills over it
      await using timing = tmpDir("ws-import-kill-");
      const t0 = performance.now();
      expect(cli(["snapshot", "import", bundle, "--root", timing.path]).code).toBe(0);
      const whole = performance.now() - t0;

      let seed = 5;
      const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
      const tries = attempts(6, 40);
      let killedMidway = 0;
      for (let t = 0; t < tries; t++) {
        await using target = tmpDir("ws-import-kill-");
        const child = Bun.spawn([bin, "snapshot", "import", bundle, "--root", target.path], { stdout: "ignore", stderr: "ignore" });
        await Bun.sleep(Math.floor(next() * whole));
        child.kill(9);
        const code = await child.exited;
        if (code !== 0) killedMidway++;
        // what the dead process left: whole blobs only, and no snapshot unless the import got that far
        expect([t, tornLooseBlobs(target.path)]).toEqual([t, []]);
        const snapshots = existsSync(join(target.path, ".mcp", "snapshots")) ? readdirSync(join(target.path, ".mcp", "snapshots")) : [];
        expect(snapshots.every((f) => f.startsWith(id.slice(7)))).toBe(true);
        // the next process removes the dead one's staging directory, and imports the bundle whole
        const again = cli(["snapshot", "import", bundle, "--root", target.path, "--json"]);
        expect([t, again.code, again.stderr]).toEqual([t, 0, ""]);
        expect(again.json().snapshot_id).toBe(id);
        expect([t, readdirSync(join(target.path, ".mcp", "tmp")).filter((n) => n.endsWith("-import"))]).toEqual([t, []]);
        const out = join(target.path, "again.tar");
        expect(cli(["snapshot", "export", id, "-o", out, "--root", target.path]).code).toBe(0);
        expect(sha256Hex(readFileSync(out))).toBe(want);
      }
      // most kills land while the import runs (a delay drawn over its whole duration)
      expect(killedMidway).toBeGreaterThan(0);
    },
    budgetMs(120_000, 900_000),
  );
});
