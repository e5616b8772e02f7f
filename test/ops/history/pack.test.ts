/**
 * History pack files (src/ops/history/pack.ts): written whole with exactly the permission bits asked for, whatever
 * the process's umask, and read back object by object.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readPackedObject, readPackIndex } from "../../../src/ops/history/pack";
import { PACK_ITEMS } from "../../fixtures/pack-writer";
import { tmpDir } from "../../helpers/tmp-repo";

/** Writes the packs in a process of its own, started under the umask to test (the umask is read once a process). */
const WRITER = join(import.meta.dir, "..", "..", "fixtures", "pack-writer.ts");

describe("writePackFile", () => {
  test("the exact mode asked for under any umask (set again only where the umask cleared bits of it), plain or synchronous", async () => {
    await using d = tmpDir("ws-pack-");
    for (const umask of ["077", "022", "027", "000"]) {
      const dir = join(d.path, umask);
      mkdirSync(dir);
      const r = Bun.spawnSync(["bash", "-c", `umask ${umask} && exec "$0" "$@"`, process.execPath, WRITER, dir], { stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      const written = JSON.parse(r.stdout.toString()) as { file: string; perm: number; size: number }[];
      expect(written.length).toBe(6);
      for (const { file, perm, size } of written) {
        expect(statSync(file).mode & 0o777).toBe(perm);
        expect(statSync(file).size).toBe(size);
        const index = readPackIndex(file);
        for (const it of PACK_ITEMS) expect(Buffer.from(readPackedObject(file, index, it.rel)!).equals(Buffer.from(it.bytes))).toBe(true);
      }
    }
  });
});
