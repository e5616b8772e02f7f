import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { countLines, sliceLines, sliceLinesFromStream } from "../../../src/ops/snapshot/line-slice";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function streamOf(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream({
    pull(c) {
      if (off >= bytes.length) return c.close();
      c.enqueue(bytes.slice(off, off + chunk));
      off += chunk;
    },
  });
}

describe("line slicing", () => {
  test("whole-buffer and streamed slices agree with a split-based model", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 20 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 1, max: 7 }),
        async (lines, finalNl, start, span, chunk) => {
          const text = lines.map((l) => l.replace(/\n/g, "")).join("\n") + (finalNl && lines.length ? "\n" : "");
          const bytes = enc(text);
          const end = start + span;
          const model = text.split(/(?<=\n)/).filter((x) => x !== "");
          const expected = model.slice(start - 1, end).join("");
          expect(countLines(bytes)).toBe(model.length);
          expect(dec(sliceLines(bytes, start, end, 1 << 20).bytes)).toBe(expected);
          expect(dec((await sliceLinesFromStream(streamOf(bytes, chunk), start, end, 1 << 20)).bytes)).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a single line longer than the cap is cut on a UTF-8 boundary (regression: unbounded first line)", async () => {
    const long = enc(`${"é".repeat(1000)}\nnext\n`);
    const whole = sliceLines(long, 1, 1, 101);
    expect(whole.cut).toBe(true);
    expect(whole.bytes.length).toBe(100);
    expect(dec(whole.bytes)).toBe("é".repeat(50));
    const streamed = await sliceLinesFromStream(streamOf(long, 64), 1, 2, 101);
    expect(streamed.cut).toBe(true);
    expect(dec(streamed.bytes)).toBe("é".repeat(50));
  });

  test("the cap stops at a line boundary once a line fits", () => {
    const s = sliceLines(enc("aaaa\nbbbb\ncccc\n"), 1, 3, 12);
    expect(dec(s.bytes)).toBe("aaaa\nbbbb\n");
    expect(s).toMatchObject({ cut: true, endLine: 2 });
  });
});
