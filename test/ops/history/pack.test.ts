/**
 * History pack files (src/ops/history/pack.ts): written whole with exactly the permission bits asked for, whatever
 * the process's umask, and read back object by object.
 */
import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { readPackedObject, readPackIndex, writePackFile } from "../../../src/ops/history/pack";
import { tmpDir } from "../../helpers/tmp-repo";

describe("writePackFile", () => {
  test("the exact mode asked for under any umask (set again only where the umask cleared bits of it), plain or synchronous", async () => {
    await using d = tmpDir("ws-pack-");
    const items = [
      { rel: "diffs/c/a.diff", bytes: new Uint8Array([1, 2, 3]) },
      { rel: "checkpoints/c/b.chkpt", bytes: new Uint8Array(70_000).fill(7) },
    ];
    let n = 0;
    for (const umask of [0o077, 0o022, 0o027, 0o000]) {
      for (const perm of [0o644, 0o600, 0o640]) {
        for (const sync of [false, true]) {
          const file = join(d.path, `p${n++}.pack`);
          const previous = process.umask(umask);
          let size: number;
          try {
            size = await writePackFile(file, items, perm, { sync });
          } finally {
            process.umask(previous);
          }
          expect(statSync(file).mode & 0o777).toBe(perm);
          expect(statSync(file).size).toBe(size);
          const index = readPackIndex(file);
          for (const it of items) expect(Buffer.from(readPackedObject(file, index, it.rel)!).equals(Buffer.from(it.bytes))).toBe(true);
        }
      }
    }
  });
});
