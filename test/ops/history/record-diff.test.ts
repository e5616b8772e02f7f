/** The diff the history stores for a change: whole-file for small files, joined from islands for large ones. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { unifiedDiff, type DiffSide } from "../../../src/ops/diff/unified";
import { changesFit, diffReplays, islandDiff, recordDiff } from "../../../src/ops/history/record-diff";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";
import { placed, rng } from "../patch/fixtures";

const enc = (s: string) => new TextEncoder().encode(s);
const side = (text: string, path = "f.txt"): DiffSide => ({ path, bytes: enc(text), mode: "100644" });

/** Applies a recorded diff the way replay does and returns the text. */
function replay(diff: string, before: string): string {
  const parsed = parsePatch(diff);
  expect(parsed.rejects).toEqual([]);
  expect(parsed.files.length).toBe(1);
  const r = applyHunks(enc(before), parsed.files[0]!.hunks);
  if (!r.ok) throw new Error(`does not apply: ${JSON.stringify(r.rejects)}`);
  expect(r.offsets).toEqual([]); // every hunk sits exactly at its stated line
  return new TextDecoder().decode(r.bytes);
}

/** Lines with enough variety that windows can find where the sides are back in step (and a few repeated ones). */
function fileOf(rand: () => number, lines: number): string[] {
  return Array.from({ length: lines }, (_, i) => (i % 17 === 5 ? "}\n" : i % 23 === 0 ? "\n" : `line ${i} ${Math.floor(rand() * 1e6).toString(36)}\n`));
}

const mulberry = (seed: number): (() => number) => rng(seed).next;

describe("islandDiff", () => {
  test("scattered edits in a large file: the joined diff replays exactly and equals the whole-file diff", () => {
    const rand = mulberry(7);
    const before = fileOf(rand, 40_000);
    const after = [...before];
    for (let k = 0; k < 60; k++) {
      const at = Math.floor(rand() * (after.length - 5));
      const kind = k % 3;
      if (kind === 0) after.splice(at, 1, `edited ${k}\n`);
      else if (kind === 1) after.splice(at, 0, `inserted ${k}\n`, `and ${k}\n`);
      else after.splice(at, 2);
    }
    const a = before.join("");
    const b = after.join("");
    const diff = islandDiff(side(a), side(b), 1024);
    expect(diff).not.toBeNull();
    expect(replay(diff!, a)).toBe(b);
    expect(diff).toBe(unifiedDiff(side(a), side(b)));
  });

  test("property: random edits anywhere (start, end, no final newline, CRLF, edits 0-12 lines apart) replay exactly", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.record({ at: fc.nat(), remove: fc.nat({ max: 4 }), add: fc.nat({ max: 4 }), gap: fc.nat({ max: 12 }) }), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (seed, n, edits, crlf, dropFinalNewline) => {
          const rand = mulberry(seed);
          const before = fileOf(rand, n).map((l) => (crlf ? l.replace(/\n$/, "\r\n") : l));
          const after = [...before];
          let at = Math.min(edits[0]!.at % (n + 1), after.length);
          for (const [k, e] of edits.entries()) {
            if (at > after.length) break;
            after.splice(at, e.remove, ...Array.from({ length: e.add }, (_, j) => `new ${k}.${j}\n`));
            at += e.add + e.gap;
          }
          let a = before.join("");
          let b = after.join("");
          if (dropFinalNewline) b = b.replace(/\r?\n$/, "");
          if (seed % 5 === 0) a = a.replace(/\r?\n$/, "");
          if (a === b) return;
          const diff = islandDiff(side(a), side(b), 0);
          if (diff === null) return; // an empty side: the whole-file diff is used
          expect(replay(diff, a)).toBe(b);
          expect(diffReplays(diff, { bytes: enc(a), mode: "100644" }, { bytes: enc(b), mode: "100644" })).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("small, binary, NUL-holding or invalid UTF-8 files are left to the whole-file diff", () => {
    const big = "x\n".repeat(600_000);
    expect(islandDiff(side("a\n"), side("b\n"))).toBeNull();
    expect(islandDiff(side(`${big}\0`), side(`${big}y\n`), 0)).toBeNull();
    const invalid = { path: "f.txt", bytes: new Uint8Array([...enc(big), 0xff, 10]), mode: "100644" as const };
    expect(islandDiff(invalid, side(big), 0)).toBeNull();
    expect(islandDiff(side(""), side(big), 0)).toBeNull();
  });

  test("a mode change and a rename keep their header lines", () => {
    const rand = mulberry(3);
    const a = fileOf(rand, 3000).join("");
    const b = a.replace("line 1500", "LINE 1500");
    const from: DiffSide = { path: "old name.txt", bytes: enc(a), mode: "100644" };
    const to: DiffSide = { path: "new\tname.txt", bytes: enc(b), mode: "100755" };
    expect(islandDiff(from, to, 0)).toBe(unifiedDiff(from, to));
  });
});

describe("recordDiff", () => {
  test("reports whether the diff alone replays the change", () => {
    const before = { bytes: enc("a\nb\n"), mode: "100644" as const };
    expect(recordDiff("f", before, "f", { bytes: enc("a\nB\n"), mode: "100644" })).toEqual({ diff: unifiedDiff(side("a\nb\n", "f"), side("a\nB\n", "f")), replays: true });
    const binary = recordDiff("f", before, "f", { bytes: new Uint8Array([0, 1]), mode: "100644" });
    expect(binary.replays).toBe(false);
    expect(binary.diff).toContain("Binary files");
    expect(recordDiff("f", before, "f", null)).toMatchObject({ replays: true });
  });
});

describe("recordDiff with a patch's line changes", () => {
  const state = (text: string) => ({ bytes: enc(text), mode: "100644" as const });

  test("lines a patch restates are not changes; the rendered diff is the whole-file diff", () => {
    const before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
    // The patch removes and adds back "two" and "three" around the real change, as models often write it.
    const { after, lines } = placed(before, "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n one\n-two\n-three\n-four\n-five\n+two\n+three\n+FOUR\n+five\n six\n");
    expect(lines).toEqual([{ oldStart: 3, oldEnd: 4, newStart: 3, newEnd: 4 }]);
    const r = recordDiff("f", state(before), "f", state(after), lines);
    expect(r).toEqual({ diff: unifiedDiff(side(before, "f"), side(after, "f")), replays: true });
  });

  test("hunks placed at an offset, insertions at the start and the end, a last line without newline", () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i}\n`).join("") + "tail";
    const patch = [
      "--- a/f\n+++ b/f\n",
      "@@ -0,0 +1 @@\n+first\n",
      "@@ -12,3 +13,3 @@\n l14\n-l15\n+L15\n l16\n", // stated two lines early: found at an offset
      "@@ -30,2 +31,3 @@\n l29\n-tail\n\\ No newline at end of file\n+tail\n+after\n\\ No newline at end of file\n",
    ].join("");
    const { after, lines } = placed(before, patch);
    const r = recordDiff("f", state(before), "f", state(after), lines);
    expect(r.replays).toBe(true);
    expect(replay(r.diff, before)).toBe(after);
  });

  test("changes that do not fit the files are not used: the files are diffed", () => {
    const before = "a\nb\nc\n";
    const after = "a\nB\nc\n";
    const wrong = [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }];
    expect(changesFit(Buffer.from(before), Buffer.from(after), wrong)).toBe(false);
    expect(changesFit(Buffer.from(before), Buffer.from(after), [{ oldStart: 1, oldEnd: 2, newStart: 1, newEnd: 2 }])).toBe(true);
    expect(changesFit(Buffer.from(before), Buffer.from(after), [{ oldStart: 1, oldEnd: 9, newStart: 1, newEnd: 2 }])).toBe(false);
    expect(recordDiff("f", state(before), "f", state(after), wrong)).toEqual({ diff: unifiedDiff(side(before, "f"), side(after, "f")), replays: true });
  });

  test("a binary side or a symlink is left to the usual path", () => {
    const bin = { bytes: new Uint8Array([0, 1, 10]), mode: "100644" as const };
    const r = recordDiff("f", bin, "f", { bytes: new Uint8Array([0, 2, 10]), mode: "100644" }, [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }]);
    expect(r.replays).toBe(false);
    expect(r.diff).toContain("Binary files");
    const link = recordDiff("l", { bytes: enc("a"), mode: "120000" }, "l", { bytes: enc("b"), mode: "120000" }, [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }]);
    expect(link).toEqual({ diff: unifiedDiff({ path: "l", bytes: enc("a"), mode: "120000" }, { path: "l", bytes: enc("b"), mode: "120000" }), replays: true });
  });

  test("property: any patch's placed changes fit, and the diff rendered from them replays exactly", () => {
    const line = fc.constantFrom("a\n", "b\n", "}\n", "\n", "x = 1;\n", "a\r\n", "é\n");
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.array(line, { maxLength: 3 })), { maxLength: 6 }), fc.boolean(), fc.boolean(), (lines, edits, cutA, cutB) => {
        const before = lines.join("").replace(cutA ? /\n$/ : /$^/, "");
        const next = [...lines];
        for (const [at, del, ins] of edits) next.splice(at % (next.length + 1), del, ...ins);
        const after = next.join("").replace(cutB ? /\n$/ : /$^/, "");
        if (before === after || before === "" || after === "") return;
        // the patch a tool would send: git's kind of diff, with one line of context so hunks move more
        const patch = unifiedDiff(side(before), side(after), { context: 1 });
        const got = placed(before, patch);
        expect(got.after).toBe(after);
        expect(changesFit(Buffer.from(enc(before)), Buffer.from(enc(after)), got.lines)).toBe(true);
        const r = recordDiff("f.txt", state(before), "f.txt", state(after), got.lines);
        expect(r.replays).toBe(true);
        expect(replay(r.diff, before)).toBe(after);
      }),
      { numRuns: 500 },
    );
  });
});
