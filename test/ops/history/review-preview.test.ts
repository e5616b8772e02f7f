/**
 * What a person is shown before a review decides (previewReview) and how the
 * review holds them to it: a preview writes nothing and predicts exactly what
 * the review then does; a cascade confirmed for the dependents shown goes
 * through, a new dependent is refused; a caller's own choice of edits (pick)
 * is made under the lock and can refuse.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { previewReview } from "../../../src/ops/history/review";
import { historyFixture, numbered, text } from "./helpers";

const C = "conv_1_aaaa";
const D = "conv_2_bbbb";

/** Two edits to one line: the second depends on the first. */
async function dependent() {
  const h = await historyFixture();
  const base = numbered("row", 20);
  h.repo.write("f.txt", text(base));
  const v1 = [...base];
  v1[8] = "CHANGED";
  const e1 = await h.write(C, "f.txt", text(v1));
  const v2 = [...v1];
  v2[8] = "CHANGED AGAIN";
  const e2 = await h.write(D, "f.txt", text(v2));
  return { h, base, e1, e2, v2 };
}

function historyFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      if (n.isDirectory()) walk(join(d, n.name), `${rel}${n.name}/`);
      else out.push(`${rel}${n.name}`);
    }
  };
  walk(join(root, ".mcp", "edit_history"), "");
  return out.sort();
}

describe("previewReview", () => {
  test("a reject with a dependent later edit: the preview names it, predicts the cascade's files, and writes nothing", async () => {
    const { h, base, e1, e2, v2 } = await dependent();
    await using _ = h;
    const before = historyFiles(h.repo.root);
    const p = await previewReview(h.ws, h.store, { action: "reject", editIds: [e1] });
    expect(p.changed.map((c) => [c.edit_id, c.from, c.to])).toEqual([[e1, "pending", "rejected"]]);
    expect(p.dependents.map((c) => [c.edit_id, c.conversation_id, c.to])).toEqual([[e2, D, "rejected"]]);
    expect(p.conflicts.map((c) => [c.edit_id, c.reason, c.cascadable])).toEqual([[e2, "context_mismatch", true]]);
    expect(p.refusal).toMatchObject({ code: "INVALID_ARGUMENT", details: { reason: "dependent_edits", resolution: "cascade", dependent_edit_ids: [e2] } });
    expect(p.external).toEqual([]);
    expect(h.read("f.txt")).toBe(text(v2));
    expect((await h.entries()).map((e) => e.status)).toEqual(["pending", "pending"]);
    expect(historyFiles(h.repo.root)).toEqual(before);

    // As asked with cascade, nothing refuses; the review then does exactly what the preview said.
    const asked = await previewReview(h.ws, h.store, { action: "reject", editIds: [e1], cascade: true });
    expect(asked.refusal).toBeNull();
    const done = await h.review({ action: "reject", editIds: [e1], cascade: true });
    expect(done.files).toEqual(asked.files);
    expect(done.cascaded).toEqual(asked.dependents.map((d) => d.edit_id));
    expect(h.read("f.txt")).toBe(text(base));
  });

  test("an outside change is listed with its diff; force clears the refusal; nothing is written by the preview", async () => {
    await using h = await historyFixture();
    h.repo.write("n.txt", "one\n");
    const e1 = await h.write(C, "n.txt", "one\ntwo\n");
    writeFileSync(join(h.repo.root, "n.txt"), "one\ntwo\nby hand\n");
    const p = await previewReview(h.ws, h.store, { action: "reject", editIds: [e1] });
    expect(p.external.map((c) => [c.path, c.current_kind])).toEqual([["n.txt", "file"]]);
    expect(p.external[0]!.diff).toContain("+by hand");
    expect(p.refusal).toMatchObject({ code: "REPO_CHANGED", details: { reason: "external_modification", resolution: "discard_outside_changes" } });
    expect(p.files).toEqual([{ path: "n.txt", action: "written", hash: expect.any(String) }]);
    expect((await previewReview(h.ws, h.store, { action: "reject", editIds: [e1], force: true })).refusal).toBeNull();
    expect(h.read("n.txt")).toBe("one\ntwo\nby hand\n");
    expect((await h.entries())[0]!.status).toBe("pending");
  });

  test("accepting a pending edit changes only its status: no files, no refusal", async () => {
    await using h = await historyFixture();
    const e1 = await h.write(C, "a.txt", "a\n");
    const p = await previewReview(h.ws, h.store, { action: "accept", editIds: [e1] });
    expect(p).toMatchObject({ action: "accept", dependents: [], conflicts: [], external: [], files: [], refusal: null, unchanged: [] });
    expect(p.changed.map((c) => c.to)).toEqual(["accepted"]);
  });
});

describe("confirmed reviews", () => {
  test("confirmCascade is asked with exactly the dependents; a no refuses with nothing written, a yes cascades", async () => {
    const { h, base, e1, e2, v2 } = await dependent();
    await using _ = h;
    const asked: string[][] = [];
    await expect(
      h.review({
        action: "reject",
        editIds: [e1],
        confirmCascade: async (ids) => {
          asked.push(ids);
          return false;
        },
      }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", details: { reason: "dependent_edits" } });
    expect(asked).toEqual([[e2]]);
    expect(h.read("f.txt")).toBe(text(v2));
    const r = await h.review({ action: "reject", editIds: [e1], confirmCascade: async (ids) => ids.every((id) => id === e2) });
    expect(r.cascaded).toEqual([e2]);
    expect(h.read("f.txt")).toBe(text(base));
  });

  test("a dependent that appeared after the person confirmed is refused (the confirmation names only what was shown)", async () => {
    const { h, e1, e2 } = await dependent();
    await using _ = h;
    const shown = (await previewReview(h.ws, h.store, { action: "reject", editIds: [e1] })).dependents.map((d) => d.edit_id);
    expect(shown).toEqual([e2]);
    const v3 = numbered("row", 20);
    v3[8] = "AND AGAIN";
    const e3 = await h.write(C, "f.txt", text(v3));
    const confirmed = new Set(shown);
    await expect(h.review({ action: "reject", editIds: [e1], confirmCascade: async (ids) => ids.every((id) => confirmed.has(id)) })).rejects.toMatchObject({
      details: { dependent_edit_ids: [e2, e3] },
    });
    expect((await h.entries()).map((e) => e.status)).toEqual(["pending", "pending", "pending"]);
  });

  test("pick chooses the edits from the history under the lock; a refusal from it changes nothing", async () => {
    await using h = await historyFixture();
    const e1 = await h.write(C, "a.txt", "a\n");
    const e2 = await h.write(D, "b.txt", "b\n");
    await expect(
      h.review({
        action: "reject",
        pick: () => {
          throw new Error("not yours");
        },
      }),
    ).rejects.toThrow("not yours");
    expect(h.tree()).toEqual({ "a.txt": "a\n", "b.txt": "b\n" });
    const r = await h.review({ action: "reject", pick: (m) => m.entries.filter((e) => e.conversation_id === D) });
    expect(r.changed.map((c) => c.edit_id)).toEqual([e2]);
    expect(h.tree()).toEqual({ "a.txt": "a\n" });
    await expect(h.review({ action: "reject", editIds: [e1], pick: () => [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
