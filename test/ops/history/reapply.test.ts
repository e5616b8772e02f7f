/**
 * Scenario tests of what reject and accept mean (spec 002 section 6, rules
 * 9.1-9.4), at the op level on real files: the resulting bytes, not only the
 * statuses.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { historyFixture, numbered, text } from "./helpers";

const C = "conv_1_aaaa";
const D = "conv_2_bbbb";

describe("reject re-applies the remaining edits", () => {
  test("three edits to one file, the second shifting lines for the third: rejecting the second keeps exactly the first and third; re-accepting restores all three", async () => {
    await using h = await historyFixture();
    const base = numbered("line", 40);
    h.repo.write("f.txt", text(base));
    const v1 = [...base];
    v1[2] = "FIRST";
    const e1 = await h.write(C, "f.txt", text(v1));
    const v2 = [...v1];
    v2.splice(10, 0, "SECOND a", "SECOND b", "SECOND c");
    const e2 = await h.write(C, "f.txt", text(v2));
    const v3 = [...v2];
    v3[33] = "THIRD"; // line 31 of the original, shifted by three
    const e3 = await h.write(C, "f.txt", text(v3));

    const r = await h.review({ action: "reject", editIds: [e2] });
    const expected = [...base];
    expected[2] = "FIRST";
    expected[30] = "THIRD";
    expect(h.read("f.txt")).toBe(text(expected));
    expect(r.changed.map((c) => [c.edit_id, c.to])).toEqual([[e2, "rejected"]]);
    expect(r.files).toEqual([{ path: "f.txt", action: "written", hash: expect.any(String) }]);
    expect((await h.entries()).map((e) => [e.edit_id, e.status])).toEqual([
      [e1, "pending"],
      [e2, "rejected"],
      [e3, "pending"],
    ]);

    const again = await h.review({ action: "accept", editIds: [e2] });
    expect(h.read("f.txt")).toBe(text(v3));
    expect(again.changed[0]).toMatchObject({ edit_id: e2, from: "rejected", to: "accepted" });
  });

  test("create -> edit -> move -> edit: rejecting the move leaves the file at its source with both edits", async () => {
    await using h = await historyFixture();
    const create = await h.write(C, "src/a.txt", text(numbered("a", 10)));
    const v2 = numbered("a", 10);
    v2[1] = "EDIT ONE";
    await h.write(C, "src/a.txt", text(v2));
    const [move] = await h.move(C, "src/a.txt", "lib/b.txt");
    const v3 = [...v2];
    v3[8] = "EDIT TWO";
    await h.write(C, "lib/b.txt", text(v3));
    expect(create).toBeString();

    await h.review({ action: "reject", editIds: [move!] });
    expect(h.tree()).toEqual({ "src/a.txt": text(v3) });

    await h.review({ action: "accept", editIds: [move!] });
    expect(h.tree()).toEqual({ "lib/b.txt": text(v3) });
  });

  test("rejecting a create that later edits depend on writes nothing and names them; --cascade rejects them too", async () => {
    await using h = await historyFixture();
    const create = await h.write(C, "new.txt", "one\n");
    const edit = await h.write(C, "new.txt", "one\ntwo\n");
    const before = await h.entries();

    const err = await h.review({ action: "reject", editIds: [create] }).catch((e) => e);
    expect(err).toMatchObject({ code: "INVALID_ARGUMENT", details: { reason: "dependent_edits", dependent_edit_ids: [edit], resolution: "cascade" } });
    expect(h.read("new.txt")).toBe("one\ntwo\n");
    expect(await h.entries()).toEqual(before);

    const r = await h.review({ action: "reject", editIds: [create], cascade: true });
    expect(r.cascaded).toEqual([edit]);
    expect(h.tree()).toEqual({});
    expect((await h.entries()).map((e) => e.status)).toEqual(["rejected", "rejected"]);
  });

  test("a kept edit whose context a rejected edit changed is a dependency: nothing half-applied", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 10)));
    const v1 = numbered("l", 10);
    v1[4] = "changed";
    const e1 = await h.write(C, "f.txt", text(v1));
    const v2 = [...v1];
    v2[4] = "changed again";
    const e2 = await h.write(C, "f.txt", text(v2));
    const err = await h.review({ action: "reject", editIds: [e1] }).catch((e) => e);
    expect(err.details.dependent_edit_ids).toEqual([e2]);
    expect(err.details.conflicts[0]).toMatchObject({ edit_id: e2, reason: "context_mismatch", cascadable: true });
    expect(h.read("f.txt")).toBe(text(v2));
  });

  test("rejecting a delete brings the file back with its bytes and mode", async () => {
    await using h = await historyFixture();
    h.repo.write("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    const del = await h.del(C, "run.sh");
    expect(h.tree()).toEqual({});
    await h.review({ action: "reject", editIds: [del] });
    expect(h.read("run.sh")).toBe("#!/bin/sh\necho hi\n");
    expect(statSync(join(h.repo.root, "run.sh")).mode & 0o111).not.toBe(0);
  });

  test("rejecting a move that overwrote its destination restores both files", async () => {
    await using h = await historyFixture();
    h.repo.write("a.txt", "A\n");
    h.repo.write("b.txt", "B\n");
    const ids = await h.move(C, "a.txt", "b.txt", { overwrite: true });
    expect(h.tree()).toEqual({ "b.txt": "A\n" });
    const entries = await h.entries();
    expect(entries.map((e) => e.operation)).toEqual(["delete", "move"]);
    await h.review({ action: "reject", editIds: ids });
    expect(h.tree()).toEqual({ "a.txt": "A\n", "b.txt": "B\n" });
  });

  test("a mode change is reverted with its edit", async () => {
    await using h = await historyFixture();
    h.repo.write("tool", "x\n");
    const e = await h.write(C, "tool", "x\ny\n", "100755");
    expect(statSync(join(h.repo.root, "tool")).mode & 0o111).not.toBe(0);
    await h.review({ action: "reject", editIds: [e] });
    expect(h.read("tool")).toBe("x\n");
    expect(statSync(join(h.repo.root, "tool")).mode & 0o111).toBe(0);
  });

  test("binary edits replay exactly; a binary edit made on a rejected one is a dependency", async () => {
    await using h = await historyFixture();
    const b0 = new Uint8Array([0, 1, 2, 3]);
    const b1 = new Uint8Array([0, 9, 2, 3]);
    const b2 = new Uint8Array([0, 9, 2, 3, 4]);
    h.repo.write("blob.bin", b0);
    const e1 = await h.write(C, "blob.bin", b1);
    const e2 = await h.write(C, "blob.bin", b2);
    const err = await h.review({ action: "reject", editIds: [e1] }).catch((x) => x);
    expect(err.details.conflicts[0]).toMatchObject({ edit_id: e2, reason: "content_changed" });
    await h.review({ action: "reject", editIds: [e2] });
    expect(new Uint8Array(await Bun.file(join(h.repo.root, "blob.bin")).arrayBuffer())).toEqual(b1);
    await h.review({ action: "reject", editIds: [e1] });
    expect(new Uint8Array(await Bun.file(join(h.repo.root, "blob.bin")).arrayBuffer())).toEqual(b0);
  });

  test("rejecting a whole conversation restores every file it wrote and removes the ones it created", async () => {
    await using h = await historyFixture();
    h.repo.write("keep.txt", "untouched\n");
    h.repo.write("a.txt", "a\n");
    await h.write(C, "a.txt", "a\nmore\n");
    await h.write(C, "deep/dir/new.txt", "new\n");
    await h.move(C, "a.txt", "moved/a.txt");
    await h.del(C, "keep.txt");
    await h.write(D, "other.txt", "other conversation\n");
    await h.review({ action: "reject", conversationId: C });
    expect(h.tree()).toEqual({ "a.txt": "a\n", "keep.txt": "untouched\n", "other.txt": "other conversation\n" });
  });
});

describe("accept", () => {
  test("accepting a pending edit changes only its status; the file is not touched", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "1\n");
    const e = await h.write(C, "f.txt", "2\n");
    const mtime = statSync(join(h.repo.root, "f.txt")).mtimeMs;
    await Bun.sleep(5);
    const r = await h.review({ action: "accept", editIds: [e] });
    expect(r.files).toEqual([]);
    expect(r.review_id).toBeNull();
    expect(statSync(join(h.repo.root, "f.txt")).mtimeMs).toBe(mtime);
    expect((await h.entries())[0]!.status).toBe("accepted");
  });

  test("an already accepted edit is reported unchanged; status switches accepted <-> rejected any time (rule 9.1)", async () => {
    await using h = await historyFixture();
    const e = await h.write(C, "f.txt", "x\n");
    await h.review({ action: "accept", editIds: [e] });
    expect((await h.review({ action: "accept", editIds: [e] })).unchanged).toEqual([e]);
    await h.review({ action: "reject", editIds: [e] });
    expect(h.tree()).toEqual({});
    await h.review({ action: "accept", editIds: [e] });
    expect(h.tree()).toEqual({ "f.txt": "x\n" });
    await h.review({ action: "reject", editIds: [e] });
    expect(h.tree()).toEqual({});
  });

  test("ids may be unique prefixes; an unknown id is NOT_FOUND", async () => {
    await using h = await historyFixture();
    const e = await h.write(C, "f.txt", "x\n");
    await h.review({ action: "accept", editIds: [e.slice(0, 8)] });
    expect((await h.entries())[0]!.status).toBe("accepted");
    await expect(h.review({ action: "accept", editIds: ["ffffffff-0000"] })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(h.review({ action: "accept", conversationId: "conv_none" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("several conversations on the same files", () => {
  test("rejecting an earlier conversation's edit keeps a later conversation's edits to the same file", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 30)));
    const v1 = numbered("l", 30);
    v1.splice(2, 0, "from C");
    const c1 = await h.write(C, "f.txt", text(v1));
    const v2 = [...v1];
    v2[25] = "from D";
    await h.write(D, "f.txt", text(v2));
    await h.review({ action: "reject", editIds: [c1] });
    const want = numbered("l", 30);
    want[24] = "from D";
    expect(h.read("f.txt")).toBe(text(want));
  });

  test("a change made by hand between two conversations is kept when the earlier edit is rejected", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 30)));
    const v1 = numbered("l", 30);
    v1[1] = "agent turn 1";
    const c1 = await h.write(C, "f.txt", text(v1));
    const byHand = [...v1];
    byHand[14] = "typed by a person";
    writeFileSync(join(h.repo.root, "f.txt"), text(byHand));
    const v2 = [...byHand];
    v2[28] = "agent turn 2";
    await h.write(D, "f.txt", text(v2));
    await h.review({ action: "reject", editIds: [c1] });
    const want = numbered("l", 30);
    want[14] = "typed by a person";
    want[28] = "agent turn 2";
    expect(h.read("f.txt")).toBe(text(want));
  });

  test("edits made after a reject are replayed on top of it, and re-accepting puts the rejected edit back under them", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 30)));
    const v1 = numbered("l", 30);
    v1[3] = "first";
    const e1 = await h.write(C, "f.txt", text(v1));
    await h.review({ action: "reject", editIds: [e1] });
    const v2 = numbered("l", 30);
    v2[20] = "after the reject";
    await h.write(C, "f.txt", text(v2));
    await h.review({ action: "accept", editIds: [e1] });
    const want = numbered("l", 30);
    want[3] = "first";
    want[20] = "after the reject";
    expect(h.read("f.txt")).toBe(text(want));
  });

  test("a file edited outside the history while a conversation works on it: the outside change is kept", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 30)));
    const v1 = numbered("l", 30);
    v1[0] = "agent 1";
    const e1 = await h.write(C, "f.txt", text(v1));
    const byHand = [...v1];
    byHand.splice(15, 1);
    writeFileSync(join(h.repo.root, "f.txt"), text(byHand));
    const v2 = [...byHand];
    v2[25] = "agent 2";
    await h.write(C, "f.txt", text(v2));
    const entries = await h.entries();
    expect(entries[1]!.checkpoint_file).toMatch(/\.chkpt$/); // the recorder saw the file was not as it left it
    await h.review({ action: "reject", editIds: [e1] });
    const want = numbered("l", 30);
    want.splice(15, 1);
    want[25] = "agent 2";
    expect(h.read("f.txt")).toBe(text(want));
  });
});

describe("rule 9.2: the file must be what the history last recorded", () => {
  test("a file changed since its last recorded edit: reject shows the diff and writes nothing; --force discards the change", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "a\nb\n");
    const e = await h.write(C, "f.txt", "a\nB\n");
    writeFileSync(join(h.repo.root, "f.txt"), "a\nB\nby hand\n");
    const err = await h.review({ action: "reject", editIds: [e] }).catch((x) => x);
    expect(err.code).toBe("REPO_CHANGED");
    expect(err.details.reason).toBe("external_modification");
    expect(err.details.changes[0].path).toBe("f.txt");
    expect(err.details.changes[0].diff).toContain("+by hand");
    expect(h.read("f.txt")).toBe("a\nB\nby hand\n");
    expect((await h.entries())[0]!.status).toBe("pending");

    let asked = 0;
    await expect(h.review({ action: "reject", editIds: [e], confirmDiscard: async () => (asked++, false) })).rejects.toMatchObject({ code: "REPO_CHANGED" });
    expect(asked).toBe(1);
    const r = await h.review({ action: "reject", editIds: [e], confirmDiscard: async () => true });
    expect(r.discarded).toEqual(["f.txt"]);
    expect(h.read("f.txt")).toBe("a\nb\n");
  });

  test("accept checks too: a deleted file is an outside change", async () => {
    await using h = await historyFixture();
    const e = await h.write(C, "f.txt", "x\n");
    chmodSync(h.repo.root, 0o755);
    await Bun.$`rm ${join(h.repo.root, "f.txt")}`.quiet();
    await expect(h.review({ action: "accept", editIds: [e] })).rejects.toMatchObject({ code: "REPO_CHANGED", details: { reason: "external_modification" } });
    const r = await h.review({ action: "accept", editIds: [e], force: true });
    expect(r.discarded).toEqual(["f.txt"]);
    expect(h.read("f.txt")).toBe("x\n");
  });

  test("changes to files the review does not touch are left alone", async () => {
    await using h = await historyFixture();
    const a = await h.write(C, "a.txt", "a\n");
    await h.write(C, "b.txt", "b\n");
    writeFileSync(join(h.repo.root, "b.txt"), "b by hand\n");
    await h.review({ action: "reject", editIds: [a] });
    expect(h.tree()).toEqual({ "b.txt": "b by hand\n" });
  });

  test("a restore the write path refuses (a directory now stands at the path) undoes the review: statuses unchanged, no interrupted review", async () => {
    await using h = await historyFixture();
    h.repo.write("d.txt", "data\n");
    const del = await h.del(C, "d.txt");
    h.repo.write("d.txt/inside.txt", "a directory now\n");
    const err = await h.review({ action: "reject", editIds: [del], force: true }).catch((e) => e);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect((await h.entries())[0]!.status).toBe("pending");
    expect(await h.store.listIntents()).toEqual([]);
    expect(await h.store.listReviews()).toEqual([]);
    expect(h.tree()).toEqual({ "d.txt/inside.txt": "a directory now\n" });
  });
});
