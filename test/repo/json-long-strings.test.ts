/**
 * A JSON text parsed with its long strings decoded natively
 * (src/repo/json-long-strings.ts, src/native/json_strings.c) gives the value
 * JSON.parse gives for the whole text, or declines (null) so that the caller
 * parses the text as it is: checked on texts built to hit every escape, every
 * UTF-8 length, surrogate pairs and lone halves, bytes that are not UTF-8,
 * long keys, markers a client might guess, and random texts; a text declined
 * is left as it was (the long strings are decoded in place only once the
 * rest has parsed).
 */
import { describe, expect, test } from "bun:test";
import { forgetUtf8, takeUtf8 } from "../../src/repo/decoded-bytes";
import { joinMessage, LONG_STRING_BYTES, parseWithLongStrings } from "../../src/repo/json-long-strings";
import { nativeModule } from "../../src/repo/native";
import { collect, collectAndChurn, rssMb } from "../helpers/memory";

const native = nativeModule() !== null;
const LONG = LONG_STRING_BYTES;

/** What the plain parse gives: the value, or the error's message. */
function plain(bytes: Uint8Array): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(Buffer.from(bytes).toString("utf8")) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The strings of a parsed value, anywhere in it. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}

/** A text cut in three, as a message arrives in chunks. */
function chunksOf(bytes: Uint8Array): Uint8Array[] {
  const a = Math.floor(bytes.length / 3);
  const b = Math.floor((bytes.length * 2) / 3) + 1;
  return [Buffer.from(bytes.subarray(0, a)), Buffer.from(bytes.subarray(a, b)), Buffer.from(bytes.subarray(b))];
}

/**
 * The quick parse agrees with the plain one, or declines; returns whether it took the text. Both ways a transport
 * hands a text over are checked: as it is, and joined from chunks (whose ASCII strings are made over the joined
 * memory, the others in UTF-16 memory of their own); every string whose UTF-8 bytes are remembered is those bytes.
 */
function agrees(bytes: Uint8Array): boolean {
  const slow = plain(bytes);
  forgetUtf8();
  const copy = Buffer.from(bytes);
  const quick = parseWithLongStrings(copy);
  const rememberedAsItIs = takeAll(quick);
  const joined = joinMessage(chunksOf(bytes));
  expect(joined.bytes.equals(bytes)).toBe(true);
  const quickJoined = parseWithLongStrings(joined.bytes, joined.block);
  const rememberedJoined = takeAll(quickJoined);
  if (quick === null) {
    // declined: the text is left as it was, for the caller's own parse
    expect(copy.equals(bytes)).toBe(true);
    expect(quickJoined).toBeNull();
    expect(joined.bytes.equals(bytes)).toBe(true);
    return false;
  }
  expect(slow.error).toBeUndefined();
  for (const q of [quick, quickJoined]) {
    expect(q).not.toBeNull();
    expect(q!.value).toEqual(slow.value);
    // toEqual does not tell a lone surrogate from U+FFFD, nor an own __proto__ from a prototype: compare exactly
    expect(JSON.stringify(q!.value)).toBe(JSON.stringify(slow.value));
  }
  expect(rememberedAsItIs).toBeGreaterThan(0);
  expect(rememberedJoined).toBe(rememberedAsItIs);
  return true;
}

/** Takes the bytes remembered for each string of a parsed value, each checked to be its UTF-8: how many there were. */
function takeAll(q: { value: unknown } | null): number {
  let remembered = 0;
  for (const s of q ? stringsOf(q.value) : []) {
    const known = takeUtf8(s);
    if (known === undefined) continue;
    remembered++;
    expect(Buffer.from(known).equals(Buffer.from(s, "utf8"))).toBe(true);
  }
  return remembered;
}

const enc = (s: string) => Buffer.from(s, "utf8");
const request = (patch: string) => enc(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "workspace_apply_patch", arguments: { patch, mode: "worktree" } } }));
const filler = (n: number) => "x".repeat(n);

describe.skipIf(!native)("parseWithLongStrings", () => {
  test("a request carrying a long patch: the patch decoded natively, the value JSON.parse's", () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(`+\tconst s${i} = "q\\"uote" + 'é' + '€' + '😀';`);
    const text = request(`--- a/x\n+++ b/x\n${lines.join("\n")}\n`);
    expect(agrees(text)).toBe(true);
  });

  test("every escape JSON has, at every position around the copy's runs", () => {
    const escapes = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001f", "\\u007f", "\\u0080", "\\u07ff", "\\u0800", "\\uffff", "\\ud83d\\ude00", "\\uDBFF\\uDFFF"];
    for (const e of escapes) {
      for (const at of [0, 1, LONG - 1, LONG, LONG + 3]) {
        const raw = `{"a":"${filler(at)}${e}${filler(LONG + 10 - at)}","b":1}`;
        expect(agrees(enc(raw))).toBe(true);
      }
      // the escape as the string's last characters
      expect(agrees(enc(`["${filler(LONG)}${e}"]`))).toBe(true);
    }
  });

  test("raw UTF-8 of every length is kept as it is; a string of it is not taken for Latin-1", () => {
    for (const ch of ["é", "€", "😀", "\u07ff", "\u0800", "\uffef", "\u{10ffff}"]) {
      expect(agrees(enc(JSON.stringify({ s: ch.repeat(LONG) })))).toBe(true);
      expect(agrees(enc(JSON.stringify({ s: filler(LONG) + ch })))).toBe(true);
    }
    const q = parseWithLongStrings(enc(JSON.stringify({ s: "ÿ".repeat(LONG) })));
    expect((q?.value as { s: string }).s.charCodeAt(0)).toBe(0xff);
  });

  test("a lone surrogate escape, bytes that are not UTF-8, a long key: declined, so the text is parsed as it is", () => {
    const cases: Uint8Array[] = [
      enc(`{"s":"${filler(LONG)}\\ud800"}`),
      enc(`{"s":"${filler(LONG)}\\udc00x"}`),
      enc(`{"s":"\\ud800\\u0041${filler(LONG)}"}`),
      enc(`{"${filler(LONG)}": 1}`),
      enc(`{"${filler(LONG)}"  \n :1}`),
    ];
    for (const bad of [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]]) {
      cases.push(Buffer.concat([enc(`{"s":"${filler(LONG)}`), Buffer.from(bad), enc(`"}`)]));
    }
    for (const text of cases) {
      const copy = Buffer.from(text);
      expect(parseWithLongStrings(copy)).toBeNull();
      expect(copy.equals(text)).toBe(true);
    }
  });

  test("a text that is not JSON is declined, whatever its long strings", () => {
    const cases = [
      `{"s":"${filler(LONG)}"`, // left open after the string
      `{"s":"${filler(LONG)}`, // the string left open
      `{"s":"${filler(LONG)}\\x"}`, // an escape JSON does not have
      `{"s":"${filler(LONG)}\\u12g4"}`,
      `{"s":"${filler(LONG)}\\`,
      `{"s":"${filler(LONG)}\n"}`, // a raw control character
      `{"s":"${filler(LONG)}" "t"}`,
      `{s:"${filler(LONG)}"}`,
      `{"s":'${filler(LONG)}'}`,
    ];
    for (const raw of cases) {
      expect(plain(enc(raw)).error).toBeDefined();
      const text = enc(raw);
      expect(parseWithLongStrings(text)).toBeNull();
      expect(text.toString("utf8")).toBe(raw);
    }
  });

  test("short strings, numbers and nesting around the long strings come out as JSON.parse gives them", () => {
    const value = {
      jsonrpc: "2.0",
      id: "ä-1",
      params: {
        list: [filler(LONG), 1.5e300, -0, null, true, { deep: [[["\\u0041"]], filler(LONG + 1) + "\n"] }],
        again: filler(LONG),
        short: "\u0000\ud83d\ude00",
      },
    };
    expect(agrees(enc(JSON.stringify(value)))).toBe(true);
    expect(agrees(enc(`  \r\n ${JSON.stringify(value)} \r`))).toBe(true);
    // a top-level long string
    expect(agrees(enc(JSON.stringify(filler(LONG) + "\t")))).toBe(true);
  });

  test("duplicate keys keep the last value, and a key named __proto__ stays an own property", () => {
    expect(agrees(enc(`{"a":"${filler(LONG)}1","a":"${filler(LONG)}2"}`))).toBe(true);
    const text = enc(`{"__proto__":"${filler(LONG)}","b":{"__proto__":["${filler(LONG)}"]}}`);
    expect(agrees(text)).toBe(true);
    const v = parseWithLongStrings(text)?.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto__", "b"]);
  });

  test("a string that looks like the marker is left as the client sent it", () => {
    const guesses = ["\u0000worksnap-long-string-0", "\u0000worksnap-long-string-00000000000000000000000000000000-0"];
    for (const g of guesses) expect(agrees(enc(JSON.stringify({ g, s: filler(LONG), t: [g] })))).toBe(true);
  });

  test("texts below the threshold, and texts without a long string, are left to the caller", () => {
    expect(parseWithLongStrings(enc(JSON.stringify({ s: filler(100) })))).toBeNull();
    expect(parseWithLongStrings(enc(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => `s${i}`))))).toBeNull();
  });

  test("more long strings than the native side holds at once: declined", () => {
    const many = Array.from({ length: 65 }, (_, i) => filler(LONG) + i);
    expect(parseWithLongStrings(enc(JSON.stringify(many)))).toBeNull();
    expect(agrees(enc(JSON.stringify(many.slice(0, 64))))).toBe(true);
  });

  test("random texts of escapes, UTF-8 and structure", () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = ["a", "\n", "\t", '"', "\\", "/", "é", "€", "😀", "\u0001", "\u007f", "\u2028", " ", "\ud800", "\udc00"];
    for (let round = 0; round < 40; round++) {
      // half the rounds without the surrogate halves: those texts must be taken
      const letters = round % 2 === 0 ? alphabet.length - 2 : alphabet.length;
      const str = (n: number) => Array.from({ length: n }, () => alphabet[rnd(letters)]).join("");
      const value = { a: str(rnd(50)), b: [str(LONG + rnd(LONG)), rnd(1000)], c: { d: str(rnd(3) === 0 ? LONG : 10) } };
      // JSON.stringify writes a lone surrogate as a \udXXX escape: such a text is declined
      const taken = agrees(enc(JSON.stringify(value)));
      if (round % 2 === 0) expect(taken).toBe(true);
    }
  });
});

describe.skipIf(!native)("long strings made over a joined message's memory", () => {
  /** A request whose patch is `lines` lines, ASCII or with characters of every UTF-8 length. */
  const patchOf = (k: number, ascii: boolean) =>
    Array.from({ length: 4000 }, (_, i) => `+line ${k}.${i} "quoted"\t${ascii ? "plain" : "é€😀"}`).join("\n") + "\n";

  test("a string kept after its text, its block and the other strings are collected is still the string sent", async () => {
    const kept: { k: number; s: string; slice: string }[] = [];
    for (let k = 0; k < 24; k++) {
      const joined = joinMessage(chunksOf(request(patchOf(k, k % 2 === 0))));
      expect(joined.block).not.toBeNull();
      const s = (parseWithLongStrings(joined.bytes, joined.block)?.value as { params: { arguments: { patch: string } } }).params.arguments.patch;
      if (k % 3 !== 1) kept.push({ k, s, slice: s.slice(1000, 1100) });
    }
    forgetUtf8();
    await collectAndChurn();
    for (const { k, s, slice } of kept) {
      const want = patchOf(k, k % 2 === 0);
      expect(s === want).toBe(true);
      expect(slice).toBe(want.slice(1000, 1100));
      expect(Buffer.from(s, "utf8").equals(Buffer.from(want, "utf8"))).toBe(true);
    }
  });

  test("message after message, the memory of strings dropped is given back", async () => {
    const text = request(patchOf(7, true) + patchOf(8, false)); // about 0.25 MB of patch, both kinds of string
    const want = patchOf(7, true) + patchOf(8, false);
    const before = await rssMb();
    // 600 messages: 150 MB of joined texts and 300 MB of UTF-16 strings, were they kept
    for (let round = 0; round < 600; round++) {
      const joined = joinMessage(chunksOf(text));
      const s = (parseWithLongStrings(joined.bytes, joined.block)?.value as { params: { arguments: { patch: string } } }).params.arguments.patch;
      expect(s.length).toBe(want.length);
      if (round % 50 === 49) {
        forgetUtf8();
        await collect();
      }
    }
    forgetUtf8();
    // about 0 when every block goes with its string; 270 when the strings' blocks are never given back
    expect((await rssMb()) - before).toBeLessThan(100);
  });
});
