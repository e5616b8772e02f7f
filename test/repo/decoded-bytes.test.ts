/**
 * The UTF-8 bytes a decoder remembers beside a string (src/repo/decoded-bytes.ts): found by the string's value,
 * whoever made the string asked about; never another string's bytes; taken once; and kept only for a while and
 * within bounds.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { forgetUtf8, KEPT_ENTRIES, KEPT_MS, rememberUtf8, takeUtf8 } from "../../src/repo/decoded-bytes";

const utf8 = (s: string) => Buffer.from(s, "utf8");

afterEach(() => forgetUtf8());

describe("decoded bytes", () => {
  test("found by value: an equal string made elsewhere gets them; a different one of the same length does not", () => {
    const sent = `--- a/x\n+++ b/x\n${"+é line\n".repeat(1000)}`;
    rememberUtf8(sent, utf8(sent), 0);
    const other = sent.slice(0, -2) + "x\n";
    expect(other.length).toBe(sent.length);
    expect(takeUtf8(other, 1)).toBeUndefined();
    expect(takeUtf8(sent.slice(1), 1)).toBeUndefined();
    const rebuilt = ["--- a/x\n+++ b/x\n", "+é line\n".repeat(1000)].join("");
    expect(Buffer.from(takeUtf8(rebuilt, 1)!).equals(utf8(sent))).toBe(true);
  });

  test("taken once: a second call finds nothing, and the others stay", () => {
    rememberUtf8("a", utf8("a"), 0);
    rememberUtf8("b", utf8("b"), 0);
    expect(takeUtf8("a", 1)).toBeDefined();
    expect(takeUtf8("a", 1)).toBeUndefined();
    expect(takeUtf8("b", 1)).toBeDefined();
  });

  test("remembered again, a string's newest bytes are the ones given, and it is kept once", () => {
    const s = "abc".repeat(100);
    const first = utf8(s);
    const second = utf8(s);
    rememberUtf8(s, first, 0);
    rememberUtf8(s, second, 1);
    for (let k = 0; k < KEPT_ENTRIES - 1; k++) rememberUtf8(`other ${k}`, utf8(`other ${k}`), 3);
    // one entry for s, not two: it still fits among the last KEPT_ENTRIES
    expect(takeUtf8(s, 4)).toBe(second);
    expect(takeUtf8(s, 4)).toBeUndefined();
  });

  test("kept for KEPT_MS only, and the last KEPT_ENTRIES strings only", () => {
    rememberUtf8("old", utf8("old"), 0);
    expect(takeUtf8("old", KEPT_MS)).toBeUndefined();
    rememberUtf8("old", utf8("old"), 0);
    expect(takeUtf8("old", KEPT_MS - 1)).toBeDefined();
    forgetUtf8();
    const names = Array.from({ length: KEPT_ENTRIES + 3 }, (_, k) => `string ${k}`);
    names.forEach((n, k) => rememberUtf8(n, utf8(n), k));
    names.forEach((n, k) => expect(takeUtf8(n, names.length) !== undefined).toBe(k >= 3));
  });

  test("a string past its time is dropped when another is remembered, so its bytes are not held", () => {
    rememberUtf8("early", utf8("early"), 0);
    rememberUtf8("late", utf8("late"), KEPT_MS + 5);
    // asked about as if it were still early: it was dropped, not merely hidden
    expect(takeUtf8("early", 1)).toBeUndefined();
    expect(takeUtf8("late", KEPT_MS + 6)).toBeDefined();
  });
});
