import { describe, expect, test } from "bun:test";
import type { BlobId } from "../../src/core/hash";
import { PIN_LIMIT, PinStore, Pins } from "../../src/mcp/pins";
import { caseKey } from "../../src/repo/name-case";

const blob = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}` as BlobId;

describe("Pins", () => {
  test("merge-only: a path absent from an answer keeps its older pin; a path named again moves to the new blob", () => {
    const pins = new Pins();
    pins.merge([
      ["a.ts", blob(1)],
      ["b.ts", blob(2)],
    ]);
    pins.merge([["b.ts", blob(3)]]);
    expect(pins.get("a.ts")).toBe(blob(1));
    expect(pins.get("b.ts")).toBe(blob(3));
    expect(pins.get("c.ts")).toBeUndefined();
    expect(pins.size).toBe(2);
  });

  test("null pins a path known to hold no file (a delete, a move's source), distinct from no pin", () => {
    const pins = new Pins();
    pins.merge([["gone.ts", null]]);
    expect(pins.get("gone.ts")).toBeNull();
    expect(pins.view().get("gone.ts")).toBeNull();
    expect(pins.view().get("never.ts")).toBeUndefined();
  });

  test("bounded: past the limit the least recently pinned paths go, and an evicted path has no pin (never a wrong one)", () => {
    const pins = new Pins(3);
    pins.merge([
      ["a", blob(1)],
      ["b", blob(2)],
      ["c", blob(3)],
    ]);
    pins.merge([["a", blob(4)]]); // pinned again: now the newest
    pins.merge([["d", blob(5)]]);
    expect([...pins.keys()]).toEqual(["c", "a", "d"]);
    expect(pins.get("b")).toBeUndefined();
    expect(pins.get("a")).toBe(blob(4));
  });

  test("one answer larger than the limit keeps its last paths", () => {
    const pins = new Pins(2);
    pins.merge([
      ["a", blob(1)],
      ["b", blob(2)],
      ["c", blob(3)],
    ]);
    expect([...pins.keys()]).toEqual(["b", "c"]);
  });

  test("a root whose file system folds case keys its pins as it finds files: a read of Foo.txt pins foo.txt and FOO.TXT", () => {
    const pins = new Pins(PIN_LIMIT, caseKey);
    pins.merge([["src/Foo.txt", blob(1)]]);
    expect(pins.view().get("SRC/foo.txt")).toBe(blob(1));
    pins.merge([["src/FOO.TXT", blob(2)]]);
    expect(pins.get("src/Foo.txt")).toBe(blob(2));
    expect(pins.size).toBe(1);
    // composed and decomposed é are one name there too (APFS, HFS+)
    pins.merge([["caf\u00e9.txt", blob(3)]]);
    expect(pins.get("cafe\u0301.txt")).toBe(blob(3));
    const exact = new Pins();
    exact.merge([["src/Foo.txt", blob(1)]]);
    expect(exact.get("SRC/foo.txt")).toBeUndefined();
  });

  test(`the default bound is ${PIN_LIMIT} pins`, () => {
    const pins = new Pins();
    pins.merge(Array.from({ length: PIN_LIMIT + 5 }, (_, i) => [`f${i}`, blob(i)] as const));
    expect(pins.size).toBe(PIN_LIMIT);
    expect(pins.get("f4")).toBeUndefined();
    expect(pins.get("f5")).toBe(blob(5));
  });
});

describe("PinStore", () => {
  test("two roots never share pins, even for the same relative path", () => {
    const store = new PinStore();
    store.forRoot("/r1").merge([["a.ts", blob(1)]]);
    expect(store.forRoot("/r2").get("a.ts")).toBeUndefined();
    store.forRoot("/r2").merge([["a.ts", blob(2)]]);
    expect(store.forRoot("/r1").get("a.ts")).toBe(blob(1));
    expect(store.forRoot("/r2").get("a.ts")).toBe(blob(2));
  });

  test("the least recently used roots go past MAX_ROOTS", () => {
    const store = new PinStore();
    store.forRoot("/first").merge([["a", blob(1)]]);
    for (let i = 0; i < PinStore.MAX_ROOTS; i++) store.forRoot(`/r${i}`);
    expect(store.forRoot("/first").get("a")).toBeUndefined();
  });
});
