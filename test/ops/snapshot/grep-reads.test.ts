/**
 * Snapshot grep reads a file from the work tree only when it still holds the
 * snapshot's blob, and searches a blob several paths hold once: the answer is
 * always the snapshot's lines under each path.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

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

describe("snapshot grep reads (work tree files that still hold the blob, blobs several paths hold)", () => {
  test("a blob two paths hold: both paths answered with their own name, from the work tree or, once both files are gone, from the store", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    const ask = async () => {
      using ws = wsOf(repo);
      const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.id, pattern: "needle", fixed_strings: true });
      return { matches: r.matches.map((m) => `${m.path}:${m.line}:${m.col}: ${m.text}`), searched: r.files_searched };
    };
    const expected = {
      matches: ["v1/lib.ts:1:24: export const shared = 'needle';", "v2/lib.ts:1:24: export const shared = 'needle';", "v2/own.ts:1:14: const own = 'needle too';"],
      searched: 3,
    };
    expect(await ask()).toEqual(expected);
    rmSync(join(repo.root, "v1"), { recursive: true });
    rmSync(join(repo.root, "v2"), { recursive: true });
    expect(await ask()).toEqual(expected);
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
