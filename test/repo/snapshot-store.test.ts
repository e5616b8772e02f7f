/**
 * The snapshot store: loaded snapshots are kept within a budget of entries
 * (regression: nine snapshots of a 90k-file tree were kept with their
 * manifest text, about 430 MB of a server's heap), the manifest's text is
 * read from disk when asked for, and a blob held at several paths is one
 * string in the loaded entries.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../src/core/errors";
import type { Fingerprint } from "../../src/repo/fingerprint";
import { manifestJson, snapshotIdOf, type ManifestEntry } from "../../src/repo/manifest";
import { manifestStats, SnapshotStore } from "../../src/repo/snapshot-store";
import { ensureStateDir } from "../../src/repo/state-dir";
import { starvedOutcomes } from "../helpers/starved";
import { tmpDir } from "../helpers/tmp-repo";

const FP: Fingerprint = { head_oid: "0".repeat(40), index_oid: "1".repeat(40), status_hash: `sha256:${"2".repeat(64)}` };

/** Saves a snapshot of `n` entries whose blobs repeat every `distinct` paths; its id. */
async function saveSnapshot(store: SnapshotStore, tag: string, n: number, distinct = n) {
  const entries: ManifestEntry[] = [];
  for (let i = 0; i < n; i++) entries.push({ path: `${tag}/f${String(i).padStart(6, "0")}.txt`, blob: `sha256:${(i % distinct).toString(16).padStart(64, "0")}` });
  const manifest = manifestJson(entries);
  const id = snapshotIdOf(FP, manifest);
  await store.save({ snapshot_id: id, fingerprint: FP, created_at: "2026-01-01T00:00:00.000Z", manifest_stats: manifestStats(n, 0), paths: [tag] }, manifest);
  return { id, manifest, entries };
}

describe("snapshot store", () => {
  test("loaded snapshots are kept within the budget of entries; the most recent always, the least recently used leaves first", async () => {
    await using dir = tmpDir();
    ensureStateDir(dir.path);
    const store = new SnapshotStore(dir.path, 250);
    const a = await saveSnapshot(store, "a", 100);
    const b = await saveSnapshot(store, "b", 100);
    const c = await saveSnapshot(store, "c", 100);
    const big = await saveSnapshot(store, "big", 400);
    const la = store.load(a.id);
    expect(la.entries).toEqual(a.entries);
    expect(store.load(a.id)).toBe(la); // kept
    const lb = store.load(b.id);
    expect(store.load(a.id)).toBe(la); // a used last: b is the older of the two
    store.load(c.id); // 300 entries: b (least recently used) leaves
    expect(store.load(a.id)).toBe(la);
    const lb2 = store.load(b.id);
    expect(lb2).not.toBe(lb);
    expect(lb2.entries).toEqual(b.entries);
    // one snapshot over the whole budget is still kept, alone
    const lbig = store.load(big.id);
    expect(store.load(big.id)).toBe(lbig);
    expect(store.load(a.id)).not.toBe(la);
  });

  test("the manifest's text is the stored canonical manifest; an unknown id is NOT_FOUND", async () => {
    await using dir = tmpDir();
    ensureStateDir(dir.path);
    const store = new SnapshotStore(dir.path);
    const a = await saveSnapshot(store, "a", 50, 7);
    expect(store.manifest(a.id)).toBe(a.manifest);
    expect(readFileSync(join(dir.path, "snapshots", `${a.id.slice(7)}.manifest`), "utf8")).toBe(a.manifest);
    const err = (() => {
      try {
        store.manifest(`sha256:${"f".repeat(64)}`);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(WorksnapError);
    expect((err as WorksnapError).code).toBe("NOT_FOUND");
    // blobs held at several paths load as the same values, in manifest order
    const loaded = store.load(a.id).entries;
    expect(loaded.map((e) => e.blob)).toEqual(a.entries.map((e) => e.blob));
    expect(new Set(loaded.map((e) => e.blob)).size).toBe(7);
  });
});

describe("a snapshot loaded with its manifest's bytes (an export)", () => {
  test("the bytes are the stored manifest's and the entries load()'s, read once whether the snapshot was loaded before or not; an unknown id is NOT_FOUND", async () => {
    await using dir = tmpDir();
    ensureStateDir(dir.path);
    const store = new SnapshotStore(dir.path);
    const a = await saveSnapshot(store, "a", 40, 3);
    const first = store.loadWithManifest(a.id);
    expect(Buffer.from(first.manifest).toString("utf8")).toBe(a.manifest);
    expect(first.snapshot.entries).toEqual(a.entries);
    expect(new Set(first.snapshot.entries.map((e) => e.blob)).size).toBe(3);
    expect(store.load(a.id)).toBe(first.snapshot); // kept, as load() keeps it
    const again = store.loadWithManifest(a.id);
    expect(again.snapshot).toBe(first.snapshot);
    expect(Buffer.from(again.manifest).toString("utf8")).toBe(a.manifest);
    expect(() => store.loadWithManifest(`sha256:${"e".repeat(64)}`)).toThrow(WorksnapError);
  });
});

describe("a manifest staged while its id is hashed", () => {
  test("saved: the manifest's bytes under the id; staged again for a snapshot that exists: the first stays, the temp file goes", async () => {
    await using dir = tmpDir();
    ensureStateDir(dir.path);
    const store = new SnapshotStore(dir.path);
    const entries: ManifestEntry[] = [{ path: "a.txt", blob: `sha256:${"a".repeat(64)}` }];
    const text = manifestJson(entries);
    const bytes = new TextEncoder().encode(text);
    const id = snapshotIdOf(FP, bytes);
    const staged = () => {
      const writer = store.manifestWriter(FP);
      for (const e of entries) writer.add({ ...e, mode: "100644", size: 0 });
      return writer.end();
    };
    const first = staged();
    expect(await first.id).toBe(id);
    const meta = { snapshot_id: id, fingerprint: FP, created_at: "2026-01-01T00:00:00.000Z", manifest_stats: manifestStats(1, 0), paths: ["."] };
    await store.save(meta, first.staged);
    expect(store.manifest(id)).toBe(text);
    const again = await store.save({ ...meta, created_at: "2027-01-01T00:00:00.000Z" }, staged().staged);
    expect(again.created_at).toBe("2026-01-01T00:00:00.000Z");
    expect(readdirSync(join(dir.path, "tmp"))).toEqual([]);
    expect(readdirSync(join(dir.path, "snapshots")).sort()).toEqual([`${id.slice(7)}.json`, `${id.slice(7)}.manifest`]);
  });
});

describe("snapshot store out of descriptors", () => {
  test("regression (starved flood: NOT_FOUND for a snapshot that exists): a read that finds no descriptor free is that error, not a missing snapshot", async () => {
    await using dir = tmpDir();
    ensureStateDir(dir.path);
    const { id } = await saveSnapshot(new SnapshotStore(dir.path), "a", 10);
    // a process with no descriptor free asks the store
    const r = starvedOutcomes(dir.path, import.meta.dir, [["SnapshotStore", "../../src/repo/snapshot-store.ts"]], `const store = new SnapshotStore(${JSON.stringify(dir.path)});`, [
      `store.loadMeta(${JSON.stringify(id.slice(7))})`,
      `store.manifest(${JSON.stringify(id)})`,
      `store.load(${JSON.stringify(id)})`,
    ]);
    expect(r.stderr).toBe("");
    expect(r.outcomes).toEqual(["EMFILE", "EMFILE", "EMFILE"]);
    // with descriptors free, the same snapshot is read; a snapshot that is not there is NOT_FOUND
    const store = new SnapshotStore(dir.path);
    expect(store.load(id).entries.length).toBe(10);
    expect(() => store.loadMeta("f".repeat(64))).toThrow(/does not exist/);
  });
});
