import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CatFileBatch } from "../../src/repo/cat-file";
import { tmpRepo } from "../helpers/tmp-repo";

describe("CatFileBatch", () => {
  test("many reads in flight at once come back in order with the right bytes; a missing object fails only its own read", async () => {
    await using repo = await tmpRepo();
    const contents = Array.from({ length: 300 }, (_, i) => `file ${i}\n${"x".repeat(i * 37)}\n`);
    contents.forEach((c, i) => repo.write(`f${i}.txt`, c));
    repo.commit();
    const oids = contents.map((_, i) => repo.git("rev-parse", `HEAD:f${i}.txt`).trim());
    const batch = new CatFileBatch(join(repo.root, ".git"));
    try {
      const missing = "0".repeat(40);
      const reads = oids.map((oid) => batch.read(oid));
      const bad = batch.read(missing);
      const after = batch.read(oids[7] as string);
      const got = await Promise.all(reads);
      got.forEach((bytes, i) => expect(new TextDecoder().decode(bytes)).toBe(contents[i] as string));
      expect((await bad.catch((e) => e)).code).toBe("NOT_FOUND");
      expect(new TextDecoder().decode(await after)).toBe(contents[7] as string);
    } finally {
      batch.close();
    }
  });
});
