import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { liveFingerprint } from "../../../src/ops/live/live-tree";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { deleteOp } from "../../../src/ops/mutate/delete";
import { moveOp } from "../../../src/ops/mutate/move";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import type { Workspace } from "../../../src/ops/workspace";
import { tmpRepo } from "../../helpers/tmp-repo";
import { read, wsOf } from "../../helpers/workspace";

type Answer = { cache_hint: string; lease_id?: string; fingerprint?: unknown; applied?: boolean };

/**
 * A work-tree answer's fingerprint is the tree's at the answer, and its lease is good for the next call. Without
 * a lease_id the write path reads no fingerprint before it writes (the answer carries the one after), so every
 * kind of answer is held to the live fingerprint here: writes, deletes, moves and patches that change files,
 * and those that change nothing or are refused, each after an outside change the call had not seen.
 */
async function expectLive(ws: Workspace, answer: Answer): Promise<string> {
  expect(answer.cache_hint).toBe("until_dirty");
  expect(answer.fingerprint).toEqual(await liveFingerprint(ws));
  // the answer's lease names the tree as it is: the next call that passes it is not STALE_LEASE
  const next = (await writeFileOp(ws, { mode: "worktree", path: "probe.txt", content: `${answer.lease_id}\n`, lease_id: answer.lease_id })) as Answer;
  return next.lease_id!;
}

describe("a work-tree answer's fingerprint without lease_id", () => {
  test("every answer, changed or not, carries the live fingerprint, after outside changes the call had not seen", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\ntwo\nthree\n");
    repo.write("b.txt", "b\n");
    repo.write("dir/c.txt", "c\n");
    repo.commit();
    using ws = wsOf(repo);
    let n = 0;
    const outside = () => writeFileSync(join(repo.root, `outside-${n++}.txt`), `${n}\n`);

    outside();
    await expectLive(ws, (await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "one\n2\nthree\n" })) as Answer);
    outside();
    // the same bytes again: nothing written, the answer still names the tree as it is now
    await expectLive(ws, (await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "one\n2\nthree\n" })) as Answer);
    outside();
    const patched = (await applyPatchOp(ws, { mode: "worktree", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+two again\n three\n" })) as Answer;
    expect(patched.applied).toBe(true);
    await expectLive(ws, patched);
    outside();
    // a patch whose context is gone: rejected, nothing written, the answer's fingerprint is the live one
    const rejected = (await applyPatchOp(ws, { mode: "worktree", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+3\n three\n" })) as Answer;
    expect(rejected.applied).toBe(false);
    await expectLive(ws, rejected);
    outside();
    await expectLive(ws, (await moveOp(ws, { mode: "worktree", from: "dir", to: "moved" })) as Answer);
    outside();
    await expectLive(ws, (await deleteOp(ws, { mode: "worktree", path: "b.txt" })) as Answer);
    outside();
    // a refused write answers with an error and changes nothing; the next answer is still the live one
    expect(((await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "x\n", create_only: true }).catch((e) => e)) as { code: string }).code).toBe("REPO_CHANGED");
    await expectLive(ws, (await writeFileOp(ws, { mode: "worktree", path: "new.txt", content: "new\n" })) as Answer);
  });

  test("with a lease, a stale one is still refused before anything is written, and a good one gives a live answer", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    using ws = wsOf(repo);
    const first = (await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "a2\n" })) as Answer;
    const good = await expectLive(ws, first);
    writeFileSync(join(repo.root, "outside.txt"), "o\n");
    const stale = await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "a3\n", lease_id: good }).catch((e) => e);
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.fingerprint).toEqual(await liveFingerprint(ws));
    expect(read(repo.root, "a.txt")).toBe("a2\n");
    // a patch that would be rejected still reports the stale lease first
    const rejectedStale = await applyPatchOp(ws, { mode: "worktree", lease_id: good, patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+y\n" }).catch((e) => e);
    expect(rejectedStale.code).toBe("STALE_LEASE");
    const fresh = (await writeFileOp(ws, { mode: "worktree", path: "b.txt", content: "b\n" })) as Answer;
    await expectLive(ws, (await writeFileOp(ws, { mode: "worktree", path: "a.txt", content: "a4\n", lease_id: fresh.lease_id })) as Answer);
  });
});
