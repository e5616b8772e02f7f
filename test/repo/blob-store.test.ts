import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blobIdOf } from "../../src/core/hash";
import { FsBlobStore } from "../../src/repo/fs-blob-store";
import { MemBlobStore } from "../../src/repo/mem-blob-store";
import { RepoBlobStore } from "../../src/repo/repo-blob-store";
import { ensureStateDir } from "../../src/repo/state-dir";
import { blobStoreCases } from "./blob-store.case";
import { starvedOutcomes } from "../helpers/starved";

function stateDir(): { dir: string } & AsyncDisposable {
  const dir = mkdtempSync(join(tmpdir(), "ws-blobs-"));
  ensureStateDir(dir);
  return { dir, [Symbol.asyncDispose]: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe("BlobStore conformance", () => {
  blobStoreCases("MemBlobStore", async () => ({ store: new MemBlobStore(), [Symbol.asyncDispose]: async () => {} }));
  blobStoreCases("FsBlobStore", async () => {
    const s = stateDir();
    return { store: new FsBlobStore(s.dir), [Symbol.asyncDispose]: () => s[Symbol.asyncDispose]() };
  });
  blobStoreCases("RepoBlobStore", async () => {
    const s = stateDir();
    const store = new RepoBlobStore(s.dir);
    return {
      store,
      [Symbol.asyncDispose]: async () => {
        store.close();
        await s[Symbol.asyncDispose]();
      },
    };
  });
});

describe("RepoBlobStore.sizes", () => {
  test("the size of each blob, from the git map or the loose store; null for one in neither; records another process added are seen", async () => {
    await using s = stateDir();
    const store = new RepoBlobStore(s.dir);
    const loose = await store.write(new TextEncoder().encode("loose bytes"));
    const inGit = blobIdOf(new TextEncoder().encode("in git"));
    const absent = blobIdOf(new TextEncoder().encode("nowhere"));
    expect(await store.sizes([loose, inGit, absent])).toEqual([11, null, null]);
    // another process records the blob as copied into the private git store
    new RepoBlobStore(s.dir).gitMap.add([{ oid: "a".repeat(40), sha256: inGit.slice(7), size: 6 }]);
    expect(await store.sizes([inGit, loose, absent, inGit])).toEqual([6, 11, null, 6]);
    expect(await Promise.all([inGit, loose, absent].map((id) => store.size(id)))).toEqual([6, 11, null]);
    store.close();
  });
});

describe("FsBlobStore", () => {
  test("lays blobs out as .mcp/blobs/sha256/<2 hex>/<rest>", async () => {
    await using s = stateDir();
    const store = new FsBlobStore(s.dir);
    const id = await store.write(new TextEncoder().encode("x"));
    const hex = id.slice(7);
    expect(store.pathOf(id)).toBe(join(s.dir, "blobs", "sha256", hex.slice(0, 2), hex.slice(2)));
  });

  test("a blob torn by a crash is detected on read, removed and reported, never returned", async () => {
    await using s = stateDir();
    const store = new FsBlobStore(s.dir);
    const id = await store.write(new TextEncoder().encode("the full content"));
    chmodSync(store.pathOf(id), 0o644);
    writeFileSync(store.pathOf(id), "the fu");
    const err = await store.read(id).catch((e) => e);
    expect(err.code).toBe("INTERNAL");
    expect(await store.has(id)).toBe(false);
    expect(blobIdOf("the full content")).toBe(id);
  });
});

describe("FsBlobStore out of descriptors", () => {
  test("regression (a descriptor shortage read as a missing blob): a read with no descriptor free fails as that, a missing blob is NOT_FOUND", async () => {
    await using s = stateDir();
    const bytes = new TextEncoder().encode("stored\n");
    const id = await new FsBlobStore(s.dir).write(bytes);
    const r = starvedOutcomes(s.dir, import.meta.dir, [["FsBlobStore", "../../src/repo/fs-blob-store.ts"]], `const store = new FsBlobStore(${JSON.stringify(s.dir)});`, [`store.read(${JSON.stringify(id)})`]);
    expect(r.stderr).toBe("");
    expect(r.outcomes).toEqual(["EMFILE"]);
    expect(await new FsBlobStore(s.dir).read(id)).toEqual(bytes);
    await expect(new FsBlobStore(s.dir).read(blobIdOf(new TextEncoder().encode("never stored")))).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
