/**
 * A patch's changes are computed from the files the plan read; the write path
 * takes those reads as the before states instead of reading every file again,
 * and refuses when a file changed between the read and the write.
 */
import { describe, expect, test } from "bun:test";
import { statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type KnownState, applyChanges } from "../../../src/ops/write/write-path";
import { WorktreeAccess, resolveWorktreeTarget, readTargetState, statStamp } from "../../../src/ops/write/target";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { tmpRepo } from "../../helpers/tmp-repo";
import { enc, read, rp, temps, wsOf } from "../../helpers/workspace";

/** What the patch op's view records for a path: the stamp taken before the bytes were read. */
function readNow(root: string, ws: Parameters<typeof applyChanges>[0], path: string): [string, KnownState] {
  const access = new WorktreeAccess(ws.repo);
  try {
    const t = resolveWorktreeTarget(access, rp(path), false);
    return [t.path, { state: readTargetState(t), stamp: statStamp(t.stat) }];
  } finally {
    access.close();
  }
}

describe("write path: the caller's reads as before states", () => {
  test("an unchanged file (same stat stamp) is not read again: the caller's state is the before state", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    using ws = wsOf(repo);
    const known = new Map([readNow(repo.root, ws, "a.txt")]);
    const out = await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("two\n"), operation: "edit" }], { known });
    expect(out.changes[0]!.before).toBe(known.get("a.txt")!.state); // the same object: no second read
    expect(read(repo.root, "a.txt")).toBe("two\n");
  });

  test("regression (patch race): a file changed between the patch's read and its write is refused, never overwritten", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    using ws = wsOf(repo);
    const known = new Map([readNow(repo.root, ws, "a.txt")]);
    writeFileSync(join(repo.root, "a.txt"), "changed by hand\n"); // after the plan read it
    const err = await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("two\n"), operation: "edit" }], { recorder: ws.recorder, conversationId: "conv_1_race", toolName: "edit_file_diff", known }).catch((e) => e);
    expect(err).toMatchObject({ code: "REPO_CHANGED", details: { path: "a.txt" } });
    expect(read(repo.root, "a.txt")).toBe("changed by hand\n");
    expect(temps(repo.root)).toEqual([]);
  });

  test("a file touched but with the same bytes (stamp differs) is read again and written", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "one\n");
    using ws = wsOf(repo);
    const known = new Map([readNow(repo.root, ws, "a.txt")]);
    const before = statSync(join(repo.root, "a.txt"));
    writeFileSync(join(repo.root, "a.txt"), "one\n");
    utimesSync(join(repo.root, "a.txt"), before.atime, new Date(before.mtimeMs + 5000)); // a later write, whatever the clock tick
    expect(statStamp(statSync(join(repo.root, "a.txt")))).not.toBe(statStamp(before));
    const out = await applyChanges(ws, [{ kind: "write", path: rp("a.txt"), bytes: enc("two\n"), operation: "edit" }], { known });
    expect(out.changes[0]!.before).not.toBe(known.get("a.txt")!.state);
    expect(read(repo.root, "a.txt")).toBe("two\n");
  });

  test("a file created after the read (it was missing) is refused", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const known = new Map([readNow(repo.root, ws, "new.txt")]);
    repo.write("new.txt", "someone else's\n");
    await expect(applyChanges(ws, [{ kind: "write", path: rp("new.txt"), bytes: enc("mine\n") }], { known })).rejects.toMatchObject({ code: "REPO_CHANGED" });
    expect(read(repo.root, "new.txt")).toBe("someone else's\n");
  });

  test("the patch op still applies patches over many directories (its reads are the before states)", async () => {
    await using repo = await tmpRepo();
    let patch = "";
    for (let i = 0; i < 30; i++) {
      repo.write(`d${i % 3}/f${i}.txt`, `a\nb${i}\nc\n`);
      patch += `--- a/d${i % 3}/f${i}.txt\n+++ b/d${i % 3}/f${i}.txt\n@@ -1,3 +1,3 @@\n a\n-b${i}\n+B${i}\n c\n`;
    }
    repo.commit();
    using ws = wsOf(repo);
    const r = await applyPatchOp(ws, { mode: "worktree", patch, mcp_conversation_id: "conv_1_many" });
    expect(r.applied).toBe(true);
    for (let i = 0; i < 30; i++) expect(read(repo.root, `d${i % 3}/f${i}.txt`)).toBe(`a\nB${i}\nc\n`);
  });
});
