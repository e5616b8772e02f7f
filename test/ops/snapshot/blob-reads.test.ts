import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf, type BlobId } from "../../../src/core/hash";
import { SnapshotBlobReads } from "../../../src/ops/snapshot/blob-reads";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Three paths: two hold one blob (as release trees side by side do), one its own. */
function seed(repo: TmpRepo): void {
  repo.write("v1/lib.ts", "export const shared = 'needle';\n");
  repo.write("v2/lib.ts", "export const shared = 'needle';\n");
  repo.write("v2/own.ts", "const own = 'needle too';\n");
  repo.commit();
}

async function snapshotOf(repo: TmpRepo) {
  using ws = wsOf(repo);
  const { snapshot_id } = await createSnapshot(ws, { paths: ["."] });
  return { id: snapshot_id, entries: ws.snapshots.load(snapshot_id).entries };
}

describe("snapshot blob reads (work tree copies and shared reads)", () => {
  test("each path reads the snapshot's bytes, whatever the work tree holds now: unchanged, edited, deleted, a FIFO, a symlink", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    // after the snapshot: one file edited (same size), one replaced by a FIFO, one by a symlink to a file holding other bytes
    writeFileSync(join(repo.root, "v2/own.ts"), "const own = 'NEEDLE TOO';\n");
    unlinkSync(join(repo.root, "v1/lib.ts"));
    execFileSync("mkfifo", [join(repo.root, "v1/lib.ts")]);
    unlinkSync(join(repo.root, "v2/lib.ts"));
    writeFileSync(join(repo.root, "other.ts"), "export const shared = 'NEEDLE';\n");
    symlinkSync("../other.ts", join(repo.root, "v2/lib.ts"));
    using ws = wsOf(repo);
    const blobs = snap.entries.map((e) => e.blob as BlobId);
    const reads = new SnapshotBlobReads(ws, blobs);
    for (const e of snap.entries) {
      const bytes = await reads.read(e.blob as BlobId, e.path, (await ws.blobs.size(e.blob as BlobId))!);
      expect({ path: e.path, blob: blobIdOf(bytes) }).toEqual({ path: e.path, blob: e.blob as BlobId });
    }
  });

  test("a blob held by two paths is read once: the second path gets the bytes even after both files are gone", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    using ws = wsOf(repo);
    const [a, b] = snap.entries.filter((e) => e.path.endsWith("lib.ts"));
    const reads = new SnapshotBlobReads(ws, [a!.blob as BlobId, b!.blob as BlobId]);
    const size = (await ws.blobs.size(a!.blob as BlobId))!;
    expect(text(await reads.read(a!.blob as BlobId, a!.path, size))).toBe("export const shared = 'needle';\n");
    rmSync(join(repo.root, "v1"), { recursive: true });
    rmSync(join(repo.root, "v2"), { recursive: true });
    expect(text(await reads.read(b!.blob as BlobId, b!.path, size))).toBe("export const shared = 'needle';\n");
  });

  test("snapshot grep after the work tree changed answers the snapshot's lines (edits, a FIFO and a symlink in its place)", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    writeFileSync(join(repo.root, "v2/own.ts"), "const own = 'other text';\n");
    unlinkSync(join(repo.root, "v1/lib.ts"));
    execFileSync("mkfifo", [join(repo.root, "v1/lib.ts")]);
    unlinkSync(join(repo.root, "v2/lib.ts"));
    symlinkSync("own.ts", join(repo.root, "v2/lib.ts"));
    using ws = wsOf(repo);
    const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.id, pattern: "needle", fixed_strings: true });
    expect(r.matches.map((m) => `${m.path}:${m.line}:${m.col}`)).toEqual(["v1/lib.ts:1:24", "v2/lib.ts:1:24", "v2/own.ts:1:14"]);
  });
});
