/**
 * An import into a repository whose disk fills while its blobs are staged (on the native threads, in
 * batches, and the large ones as they are read): the compiled CLI answers with the disk-full error (exit 1,
 * never INTERNAL), the store is as it was (no snapshot, no blob, no staging directory left), and the same
 * bundle imports whole once there is room. A real full file system: a small tmpfs mounted for the test (root
 * on Linux, as the disk-full torture test).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";

const disk = tmpfsForTests("16m", "ws-import-full-");

function stateFiles(root: string, sub: string): string[] {
  const dir = join(root, ".mcp", sub);
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).sort() : [];
}

describe.skipIf(!disk.canMount)("snapshot import on a full disk", () => {
  test("the disk filling while blobs are staged is the disk-full error; nothing is stored; the bundle imports once there is room", async () => {
    expect(disk.mounted).toBe(true);
    await using repo = await tmpRepo({ git: false });
    // about 6 MB of distinct blobs (the mount has 16): hundreds of small ones (batched) and two past a batch's limit
    for (let i = 0; i < 400; i++) repo.write(`src/m${i % 30}/f${i}.txt`, `module ${i}\n`.repeat(900));
    for (let i = 0; i < 2; i++) repo.write(`assets/big${i}.bin`, new Uint8Array((1 << 20) + 4096).fill(i + 1));
    const created = cli(["snapshot", "create", "--root", repo.root]);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    const bundle = join(repo.root, "bundle.tar");
    expect(cli(["snapshot", "export", id, "-o", bundle, "--root", repo.root]).code).toBe(0);

    const target = join(disk.path, "target");
    mkdirSync(target);
    for (const leftKb of [600, 2500, 4500]) {
      disk.leave(leftKb);
      const r = cli(["snapshot", "import", bundle, "--root", target, "--json"]);
      expect([leftKb, r.code]).toEqual([leftKb, 1]);
      expect([leftKb, r.json().error]).toMatchObject([leftKb, { code: "TOO_LARGE", details: { reason: "disk_full", errno: "ENOSPC" } }]);
      expect(r.json().error.message).toContain("the disk is full");
      expect([leftKb, stateFiles(target, "snapshots"), stateFiles(target, "blobs"), stateFiles(target, "tmp")]).toEqual([leftKb, [], [], []]);
    }
    disk.unfill();
    const ok = cli(["snapshot", "import", bundle, "--root", target, "--json"]);
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect(ok.json()).toMatchObject({ snapshot_id: id, files: 402, created: true });
    expect(stateFiles(target, "tmp")).toEqual([]);
  });
});
