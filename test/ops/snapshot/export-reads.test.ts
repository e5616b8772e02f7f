import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { blobIdOf } from "../../../src/core/hash";
import { ExportReads } from "../../../src/ops/snapshot/export-reads";
import type { Workspace } from "../../../src/ops/workspace";
import { AtomicFileWriter } from "../../../src/repo/atomic-stream";
import { MemBlobStore } from "../../../src/repo/mem-blob-store";
import { nativeModule } from "../../../src/repo/native";
import type { SnapshotId } from "../../../src/repo/manifest";
import { tmpDir } from "../../helpers/tmp-repo";

describe("ExportReads", () => {
  test("a blob read from the work tree is a view of its window's block, given back whole once the writer has copied it; one read from the store is never given back (the store's blob stays whole)", async () => {
    await using dir = tmpDir("ws-export-reads-");
    const same = new TextEncoder().encode("the work tree holds this blob\n".repeat(40));
    const old = new TextEncoder().encode("the snapshot's bytes, since changed in the tree\n".repeat(40));
    await Bun.write(join(dir.path, "same.txt"), same);
    await Bun.write(join(dir.path, "changed.txt"), new Uint8Array(old.length).fill(0x41)); // same size, other bytes
    const blobs = new MemBlobStore();
    const sameId = await blobs.write(same);
    const oldId = await blobs.write(old);
    const ws = { repo: { root: dir.path }, blobs } as unknown as Workspace;
    const entries = [
      { path: "changed.txt", blob: oldId, mode: "100644" as const },
      { path: "same.txt", blob: sameId, mode: "100644" as const },
    ];
    const out = new AtomicFileWriter(join(dir.path, ".mcp"), join(dir.path, "bundle"));
    const given: Uint8Array[] = [];
    const reads = new ExportReads(ws, entries, [old.length, same.length], "sha256:00" as SnapshotId, (block) => {
      given.push(block);
      out.giveBack(block);
    });
    const fromStore = await reads.take(0);
    const fromTree = await reads.take(1);
    expect([blobIdOf(fromStore), blobIdOf(fromTree)]).toEqual([oldId, sameId]);
    // none is the export's own to give back piece by piece: the native reads go back with their block
    expect([reads.isOwn(fromStore), reads.isOwn(fromTree)]).toEqual([false, false]);
    for (const bytes of [fromStore, fromTree]) out.write(bytes, reads.isOwn(bytes));
    reads.close(); // retires the window: its block handed to the writer
    const native = nativeModule() !== null;
    expect(given.length).toBe(native ? 1 : 0);
    if (native) expect(fromTree.buffer).toBe((given[0] as Uint8Array).buffer);
    const digest = await out.commit();
    expect(digest).toBe(new Bun.CryptoHasher("sha256").update(old).update(same).digest("hex"));
    // the store still holds its blob whole; the block went back once copied (its views read as empty)
    expect(Buffer.compare(Buffer.from(await blobs.read(oldId)), Buffer.from(old))).toBe(0);
    expect(fromTree.byteLength).toBe(native ? 0 : same.length);
  });
});
