/**
 * Property: for a random file and random edits, unifiedDiff then parsePatch
 * then applyHunks gives the edited file, and the reverse diff gives the
 * original back. Any context size, any line endings, any final newline.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";
import { enc } from "./fixtures";

const lineText = fc.oneof(
  fc.constantFrom("", "a", "b", "}", "  x = 1;", "€", "🙂", "\t", "a\r", "\r"),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/[\n\0]/g, "")),
);

const fileModel = fc.record({
  lines: fc.array(lineText, { maxLength: 30 }),
  eol: fc.constantFrom("\n", "\r\n"),
  finalNewline: fc.boolean(),
});

const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 5 }), insert: fc.array(lineText, { maxLength: 4 }) });

function render(lines: string[], eol: string, finalNewline: boolean): string {
  const s = lines.map((l) => l + eol).join("");
  return finalNewline || s === "" ? s : s.slice(0, -eol.length);
}

function roundTrip(fromText: string, toText: string, context: number): void {
  const from = enc(fromText);
  const to = enc(toText);
  const diff = unifiedDiff({ path: "f.txt", bytes: from, mode: "100644" }, { path: "f.txt", bytes: to, mode: "100644" }, { context });
  if (fromText === toText) {
    expect(diff).toBe("");
    return;
  }
  const parsed = parsePatch(diff);
  expect(parsed.rejects).toEqual([]);
  expect(parsed.warnings).toEqual([]);
  expect(parsed.files.length).toBe(1);
  const applied = applyHunks(from, parsed.files[0]!.hunks);
  if (!applied.ok) throw new Error(JSON.stringify(applied.rejects) + "\n" + diff);
  expect(applied.offsets).toEqual([]);
  expect(Buffer.from(applied.bytes).equals(Buffer.from(to))).toBe(true);
}

describe("diff then patch", () => {
  test("applying the diff gives the edited file; the reverse diff gives the original", () => {
    fc.assert(
      fc.property(fileModel, fc.array(edit, { minLength: 1, maxLength: 6 }), fc.boolean(), fc.nat({ max: 5 }), (file, edits, finalNewline, context) => {
        const lines = [...file.lines];
        for (const e of edits) lines.splice(e.at % (lines.length + 1), e.remove, ...e.insert);
        const fromText = render(file.lines, file.eol, file.finalNewline);
        const toText = render(lines, file.eol, finalNewline);
        roundTrip(fromText, toText, context);
        roundTrip(toText, fromText, context);
      }),
      { numRuns: 1500, seed: 20240101 },
    );
  });

  test("unrelated files diff and patch into each other", () => {
    fc.assert(
      fc.property(fileModel, fileModel, fc.nat({ max: 4 }), (a, b, context) => {
        roundTrip(render(a.lines, a.eol, a.finalNewline), render(b.lines, b.eol, b.finalNewline), context);
      }),
      { numRuns: 500, seed: 7 },
    );
  });
});
