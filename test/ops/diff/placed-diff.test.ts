/** A patch's diff rendered from its placed line changes, straight from the bytes: the string renderer's bytes, checked changes. */
import { describe, expect, test } from "bun:test";
import type { FileMode } from "../../../src/core/file-mode";
import type { LineChange } from "../../../src/core/line-change";
import { lineChanges, splitLines } from "../../../src/ops/diff/line-diff";
import { placeChanges, renderPlacedDiff, renderPlacedDiff as renderWith } from "../../../src/ops/diff/placed-diff";
import { unifiedDiff, type DiffSide } from "../../../src/ops/diff/unified";
import { nativeModule, type NativeModule } from "../../../src/repo/native";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";
import { enc, placed, rng } from "../patch/fixtures";

const side = (path: string, text: string | Uint8Array, mode: FileMode = "100644"): DiffSide => ({ path, bytes: typeof text === "string" ? enc(text) : text, mode });
const changesOf = (a: string, b: string) => lineChanges(splitLines(a), splitLines(b));
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** What the string renderer gives for the same changes, as bytes. */
function expected(from: DiffSide, to: DiffSide, changes: LineChange[]): Uint8Array {
  return enc(unifiedDiff(from, to, { changes }));
}

/** Lines of a random file: repeats, empty lines, CRLF, non-ASCII, and sometimes no final newline. */
function randomText(r: ReturnType<typeof rng>, lines: number): string {
  const pool = ["}\n", "\n", "\r\n", "  return x;\n", "é ü ✓\n", "𝄞 beyond the BMP\n", "\t\tindent\n"];
  let s = "";
  for (let i = 0; i < lines; i++) s += r.next() < 0.4 ? r.pick(pool) : `line ${r.int(50)}\n`;
  if (s.length > 0 && r.next() < 0.3) s = s.slice(0, -1); // no newline at the end
  return s;
}

/** `a` edited at random: lines removed, replaced, inserted (at the start and the end too). */
function edited(r: ReturnType<typeof rng>, a: string): string {
  const lines = splitLines(a);
  const out: string[] = [];
  if (r.next() < 0.2) out.push("inserted at the start\n");
  for (const l of lines) {
    const x = r.next();
    if (x < 0.1) continue;
    if (x < 0.2) out.push(`changed ${r.int(1000)}\n`);
    else out.push(l);
    if (r.next() < 0.08) out.push(`added ${r.int(1000)}\n`);
  }
  if (r.next() < 0.2) out.push(r.next() < 0.5 ? "appended\n" : "appended without newline");
  return out.join("");
}

/** Both renderers where the native module is built (the TypeScript one is the darwin executables'), each held to the string renderer. */
const renderers: [string, NativeModule | null][] = [...(nativeModule() ? [["native", nativeModule()] as [string, NativeModule]] : []), ["TypeScript", null]];

for (const [impl, native] of renderers) {
const renderPlacedDiff = (from: DiffSide, to: DiffSide, changes: readonly LineChange[]) => renderWith(from, to, changes, 3, native);
describe(`renderPlacedDiff (${impl})`, () => {
  test("gives the string renderer's bytes for 2,000 random edits (repeats, CRLF, non-ASCII, no final newline)", () => {
    const r = rng(20261127);
    let rendered = 0;
    for (let n = 0; n < 2000; n++) {
      const a = randomText(r, r.int(60));
      const b = edited(r, a);
      const changes = changesOf(a, b);
      const from = side("src/f.ts", a);
      const to = side("src/f.ts", b);
      const out = renderPlacedDiff(from, to, changes);
      if (a === b) {
        expect(out).toBeNull(); // no change: the caller's whole-file path says so
        continue;
      }
      expect(out).not.toBeNull();
      expect(Buffer.from(out!).equals(Buffer.from(expected(from, to, changes)))).toBe(true);
      rendered++;
    }
    expect(rendered).toBeGreaterThan(1500);
  });

  test("a diff larger than its first guess (long context lines, many changes) grows and keeps every byte", () => {
    const r = rng(20261129);
    for (let n = 0; n < 200; n++) {
      const long = () => `${"x".repeat(1 + r.int(6000))} ${r.int(1000)}\n`;
      let a = "";
      for (let i = 0, lines = 1 + r.int(40); i < lines; i++) a += r.next() < 0.5 ? long() : `short ${r.int(50)}\n`;
      if (r.next() < 0.3) a = a.slice(0, -1);
      const b = edited(r, a);
      if (a === b) continue;
      const changes = changesOf(a, b);
      const from = side("src/long.ts", a);
      const to = side("src/long.ts", b);
      const out = renderPlacedDiff(from, to, changes);
      expect(out).not.toBeNull();
      expect(Buffer.from(out!).equals(Buffer.from(expected(from, to, changes)))).toBe(true);
    }
  });

  test("the diff of a patch's placed hunks replays it: offsets, first and last lines, a line of only a newline", () => {
    const before = "\n" + Array.from({ length: 30 }, (_, i) => `l${i}\n`).join("") + "tail";
    const patch = [
      "--- a/f\n+++ b/f\n",
      "@@ -1,2 +1,2 @@\n \n-l0\n+L0\n",
      "@@ -12,3 +12,3 @@\n l12\n-l13\n+L13\n l14\n", // stated a line early: found at an offset
      "@@ -31,2 +31,3 @@\n l29\n-tail\n\\ No newline at end of file\n+tail\n+after\n\\ No newline at end of file\n",
    ].join("");
    const applied = placed(before, patch);
    const out = renderPlacedDiff(side("f", before), side("f", applied.bytes), applied.lines);
    expect(out).not.toBeNull();
    expect(Buffer.from(out!).equals(Buffer.from(expected(side("f", before), side("f", applied.bytes), applied.lines)))).toBe(true);
    const back = parsePatch(decode(out!)).files[0]!;
    const replayed = applyHunks(enc(before), back.hunks);
    expect(replayed.ok && Buffer.from(replayed.bytes).equals(Buffer.from(applied.bytes))).toBe(true);
  });

  test("headers as the string renderer writes them: mode change, rename, quoted and spaced names", () => {
    const a = "one\ntwo\nthree\n";
    const b = "one\nTWO\nthree\n";
    const changes = changesOf(a, b);
    for (const [from, to] of [
      [side("a b.txt", a), side("a b.txt", b, "100755")],
      [side("old\tname", a), side("new \"q\"", b)],
      [side("dir/ü.txt", a), side("dir/ü.txt", b)],
    ] as const) {
      expect(decode(renderPlacedDiff(from, to, changes)!)).toBe(unifiedDiff(from, to, { changes }));
    }
  });

  test("left to the caller: no changes, equal bytes, a symlink, binary or invalid UTF-8 content", () => {
    const c = [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }];
    expect(renderPlacedDiff(side("f", "a\n"), side("f", "b\n"), [])).toBeNull();
    expect(renderPlacedDiff(side("f", "a\n"), side("f", "a\n"), c)).toBeNull();
    expect(renderPlacedDiff(side("f", "a"), side("f", "b", "120000"), c)).toBeNull();
    expect(renderPlacedDiff(side("f", new Uint8Array([97, 0, 10])), side("f", "b\n"), c)).toBeNull();
    expect(renderPlacedDiff(side("f", new Uint8Array([0xff, 10])), side("f", "b\n"), c)).toBeNull();
  });
});
}

describe("placeChanges", () => {
  test("changes that do not turn one file into the other are refused; whatever is accepted replays (3,000 cases)", () => {
    const r = rng(7);
    let refused = 0;
    for (let n = 0; n < 3000; n++) {
      const a = randomText(r, 1 + r.int(30));
      const b = edited(r, a);
      const right = changesOf(a, b);
      if (right.length === 0) continue;
      // one number of one change moved by -2..2, or a change dropped
      const wrong = right.map((c) => ({ ...c }));
      const k = r.int(wrong.length);
      if (r.next() < 0.2) wrong.splice(k, 1);
      else {
        const field = r.pick(["oldStart", "oldEnd", "newStart", "newEnd"] as const);
        wrong[k]![field] += r.pick([-2, -1, 1, 2]);
      }
      const at = placeChanges(Buffer.from(a), Buffer.from(b), wrong);
      // the native renderer places them the same way: it refuses exactly these, and renders the same bytes
      const ts = renderPlacedDiff(side("f", a), side("f", b), wrong, 3, null);
      const m = nativeModule();
      if (m) {
        const c = renderPlacedDiff(side("f", a), side("f", b), wrong, 3, m);
        expect(c === null ? null : Buffer.from(c).toString("latin1")).toBe(ts === null ? null : Buffer.from(ts).toString("latin1"));
      }
      if (at === null) {
        expect(ts).toBeNull();
        refused++;
        continue;
      }
      // accepted: then its diff must still turn a into b exactly
      const out = renderPlacedDiff(side("f", a), side("f", b), wrong);
      if (out === null) continue;
      const parsed = parsePatch(decode(out)).files[0]!;
      const replayed = applyHunks(enc(a), parsed.hunks);
      expect(replayed.ok && decode(replayed.bytes)).toBe(b);
    }
    expect(refused).toBeGreaterThan(1000);
  });

  test("a last line without newline is not the same line as one that goes on", () => {
    // "x" ends a without newline; in b the same bytes go on as "xy\n"
    expect(placeChanges(Buffer.from("a\nx"), Buffer.from("a\nxy\n"), [])).toBeNull();
    expect(placeChanges(Buffer.from("a\nx"), Buffer.from("b\nx"), [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }])).toEqual([0, 2, 0, 2]);
    // two same lines, then a line added after the end: in b "x" is not a whole line of its own
    expect(placeChanges(Buffer.from("a\nx"), Buffer.from("a\nxy\n"), [{ oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 3 }])).toBeNull();
    expect(placeChanges(Buffer.from("a\nx\n"), Buffer.from("a\nx\ny\n"), [{ oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 3 }])).toEqual([4, 4, 4, 6]);
    // and both renderers refuse to render from such changes
    for (const [, native] of renderers) {
      expect(renderPlacedDiff(side("f", "a\nx"), side("f", "a\nxy\n"), [{ oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 3 }], 3, native)).toBeNull();
      expect(renderPlacedDiff(side("f", "a\nx"), side("f", "a\nx\ny\n"), [{ oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 3 }], 3, native)).toBeNull();
      expect(renderPlacedDiff(side("f", "a\nx\n"), side("f", "a\nx\ny\n"), [{ oldStart: 2, oldEnd: 2, newStart: 2, newEnd: 3 }], 3, native)).not.toBeNull();
    }
  });
});
