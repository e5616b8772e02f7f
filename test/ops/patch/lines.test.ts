/** A file as lines: the native line index gives the TypeScript one's numbers, on every shape of file. */
import { describe, expect, test } from "bun:test";
import { FileLines } from "../../../src/ops/patch/lines";
import { bytesToByteString } from "../../../src/ops/patch/byte-string";
import { nativeModule } from "../../../src/repo/native";
import { rng } from "./fixtures";

/** The TypeScript index's lines, and how its bytes-made twin sees them. */
function both(bytes: Uint8Array): [FileLines, FileLines] {
  return [new FileLines(bytesToByteString(bytes)), FileLines.ofBytes(bytes)];
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
      const bytes = new Uint8Array(r.int(3000));
      const newlines = r.next();
      for (let i = 0; i < bytes.length; i++) bytes[i] = r.next() < newlines * 0.5 ? 10 : r.int(256);
      const [ts, native] = both(bytes);
      same(ts, native);
    }
  });
});
