/**
 * A cold `snapshot create` killed at a random moment (kill -9 of the compiled CLI: while the read ahead hashes
 * the blobs many paths share, while the modified and untracked files are stored, while the manifest is staged
 * and flushed, or between the renames of the manifest and its metadata) leaves a store the next process can
 * use: every snapshot whose metadata is in place has its whole manifest, whose hash with the fingerprint is the
 * snapshot's id; no blob file whose bytes are not its name; the dead process's temp files are removed by the
 * next one; and the next capture gives the id an undisturbed capture gives, and reads back every path's bytes.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { snapshotIdOf } from "../../src/repo/manifest";
import { cli, requireBinary } from "../helpers/binary";
import { tornLooseBlobs } from "../helpers/loose-blobs";
import { tmpRepo } from "../helpers/tmp-repo";
import { attempts, budgetMs } from "./scale";

/** The snapshots whose metadata is in place but whose manifest is missing or is not what the id names. */
function brokenSnapshots(root: string): string[] {
  const dir = join(root, ".mcp", "snapshots");
  if (!existsSync(dir)) return [];
  const bad: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const hex = name.slice(0, -5);
    const meta = JSON.parse(readFileSync(join(dir, name), "utf8")) as { snapshot_id: string; fingerprint: Parameters<typeof snapshotIdOf>[0] };
    const manifest = join(dir, `${hex}.manifest`);
    if (!existsSync(manifest) || meta.snapshot_id !== `sha256:${hex}` || snapshotIdOf(meta.fingerprint, readFileSync(manifest)) !== meta.snapshot_id) bad.push(hex);
  }
  return bad;
}


describe("kill -9 during a cold snapshot", () => {
  test(
    "at random moments: every snapshot in place is whole, no blob is torn, nothing of the dead process stays, the next capture is the undisturbed one",
    async () => {
      const bin = requireBinary();
      await using repo = await tmpRepo();
      // six releases of one tree side by side (most paths share their blob with five others), then edits
      for (let r = 0; r < 6; r++) for (let i = 0; i < 400; i++) repo.write(`v${r}/m${i % 20}/f${i}.ts`, `export const v${i % 97} = ${i};\n`.repeat(1 + (i % 40)));
      repo.commit();
      for (let i = 0; i < 400; i += 37) repo.write(`v0/m${i % 20}/f${i}.ts`, `edited ${i}\n`); // first paths of shared blobs
      for (let i = 0; i < 30; i++) repo.write(`new/u${i}.txt`, `untracked ${i}\n`.repeat(i + 1));
      await Bun.sleep(2100); // older than a capture's cutoff: the read ahead trusts what git's index vouches for

      const fresh = () => rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
      fresh();
      const t0 = performance.now();
      const first = cli(["snapshot", "create", "--root", repo.root]);
      const whole = performance.now() - t0;
      expect(first.code).toBe(0);
      const id = first.stdout.trim();

      let seed = 11;
      const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
      const tries = attempts(6, 40);
      let killedMidway = 0;
      for (let t = 0; t < tries; t++) {
        fresh();
        const child = Bun.spawn([bin, "snapshot", "create", "--root", repo.root], { stdout: "ignore", stderr: "ignore" });
        await Bun.sleep(Math.floor(next() * whole));
        child.kill(9);
        if ((await child.exited) !== 0) killedMidway++;
        expect([t, brokenSnapshots(repo.root), tornLooseBlobs(repo.root)]).toEqual([t, [], []]);
        const snapshots = existsSync(join(repo.root, ".mcp", "snapshots")) ? readdirSync(join(repo.root, ".mcp", "snapshots")) : [];
        expect(snapshots.every((f) => f.startsWith(id.slice(7)))).toBe(true);
        // the next process removes the dead one's temp files and captures the same state again
        const again = cli(["snapshot", "create", "--root", repo.root]);
        expect([t, again.code, again.stdout.trim()]).toEqual([t, 0, id]);
        expect([t, readdirSync(join(repo.root, ".mcp", "tmp")).filter((n) => n.startsWith(`${child.pid}-`))]).toEqual([t, []]);
        for (const path of ["v0/m0/f0.ts", "v3/m0/f0.ts", "v0/m17/f37.ts", "v5/m17/f37.ts", "new/u7.txt"]) {
          const shown = cli(["snapshot", "file", path, "--snapshot", id, "--root", repo.root]);
          expect([t, path, shown.stdout]).toEqual([t, path, readFileSync(join(repo.root, path), "utf8")]);
        }
      }
      expect(killedMidway).toBeGreaterThan(0);
    },
    budgetMs(120_000, 900_000),
  );
});
