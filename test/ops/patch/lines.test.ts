/** A file as lines: the native line index gives the TypeScript one's numbers, on every shape of file. */
import { describe, expect, test } from "bun:test";
import { FileLines } from "../../../src/ops/patch/lines";
import { nativeModule } from "../../../src/repo/native";
import { rng } from "./fixtures";

/** Up to `maxBytes` random bytes, each a newline with a chance drawn per file below `newlineShare`. */
function randomFile(r: ReturnType<typeof rng>, maxBytes: number, newlineShare: number): Uint8Array {
  const bytes = new Uint8Array(r.int(maxBytes));
  const newlines = r.next();
  for (let i = 0; i < bytes.length; i++) bytes[i] = r.next() < newlines * newlineShare ? 10 : r.int(256);
  return bytes;
}

/** The TypeScript index's lines, and how the native module's twin sees them. */
function both(bytes: Uint8Array): [FileLines, FileLines] {
  return [FileLines.ofBytes(bytes, null), FileLines.ofBytes(bytes)];
}

function same(a: FileLines, b: FileLines): void {
  expect(b.count).toBe(a.count);
  expect([...b.starts.subarray(0, b.count + 1)]).toEqual([...a.starts.subarray(0, a.count + 1)]);
  for (let i = 0; i < a.count; i++) expect(b.line(i)).toBe(a.line(i));
  expect(b.lastLineUnterminated).toBe(a.lastLineUnterminated);
}

describe.skipIf(nativeModule() === null)("FileLines.ofBytes with the native module", () => {
  test("edge shapes: empty, one newline, no final newline, only newlines, CR and NUL bytes, a newline on each side of a 32-byte block", () => {
    const enc = (s: string) => Buffer.from(s, "latin1");
    const cases = ["", "\n", "a", "a\n", "a\nb", "\n\n\n", "\r\n\r\n", "x\0y\nz", "a".repeat(31) + "\n" + "b".repeat(32) + "\n", "\n" + "c".repeat(63), "é\n✓"];
    for (const text of cases) {
      const bytes = text === "é\n✓" ? Buffer.from(text, "utf8") : enc(text);
      const [ts, native] = both(bytes);
      same(ts, native);
      expect(nativeModule()!.lineStarts(bytes)!.length).toBe(ts.count + 1);
    }
  });

  test("the TypeScript index's numbers on 2,000 random files from 0 to 3,000 bytes", () => {
    const r = rng(20261129);
    for (let n = 0; n < 2000; n++) {
      const bytes = randomFile(r, 3000, 0.5);
      const [ts, native] = both(bytes);
      same(ts, native);
    }
  });
});

/** The lines of a byte string as the patch engine means them: each with its "\n", the last perhaps without. */
function referenceLines(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes).toString("latin1");
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

describe("FileLines on the file's bytes, without the native module", () => {
  test("every line read back, compared in place and told apart from a near miss, on random files with CR, NUL and high bytes", () => {
    const r = rng(20261130);
    for (let n = 0; n < 400; n++) {
      const bytes = randomFile(r, 600, 0.3);
      const file = FileLines.ofBytes(bytes, null);
      const want = referenceLines(bytes);
      expect(file.count).toBe(want.length);
      expect(file.lastLineUnterminated).toBe(want.length > 0 && !want[want.length - 1]!.endsWith("\n"));
      for (let i = 0; i < want.length; i++) {
        const line = want[i]!;
        const eol = line.endsWith("\n");
        const text = eol ? line.slice(0, -1) : line;
        expect(file.line(i)).toBe(line);
        expect(file.equals(i, line)).toBe(true);
        expect(file.equalsText(i, text, eol)).toBe(true);
        // the same text with the other terminator, one byte more or less, one byte changed
        expect(file.equalsText(i, text, !eol)).toBe(false);
        expect(file.equalsText(i, text + "x", eol)).toBe(false);
        if (text.length > 0) {
          expect(file.equalsText(i, text.slice(1), eol)).toBe(false);
          const k = r.int(text.length);
          const changed = text.slice(0, k) + String.fromCharCode((text.charCodeAt(k) + 1) % 256) + text.slice(k + 1);
          expect(file.equalsText(i, changed, eol)).toBe(false);
          expect(file.equals(i, changed + (eol ? "\n" : ""))).toBe(false);
        }
        expect(file.positions(line)).toContain(i);
      }
    }
  });

  test("a byte above 0x7f is matched as the byte string's char, not as decoded text", () => {
    const bytes = Buffer.from("caf\xc3\xa9\r\n\xff\x00z", "latin1");
    const file = FileLines.ofBytes(bytes, null);
    expect(file.count).toBe(2);
    expect(file.equalsText(0, "caf\xc3\xa9\r", true)).toBe(true);
    expect(file.equalsText(0, "café\r", true)).toBe(false);
    expect(file.equalsText(1, "\xff\x00z", false)).toBe(true);
    expect(file.excerpt(0, 2).text).toEqual(["café\r", "\ufffd\u0000z"]);
  });
});
