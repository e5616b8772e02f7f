/**
 * A JSON text whose long strings are decoded natively (src/native/json_strings.c)
 * and the rest by JSON.parse. A request that carries a patch or a file's
 * content is one long string in a few dozen bytes of structure, and
 * JSON.parse builds a string full of escapes (a patch's every line ends in
 * `\n`) one character at a time: 3-43 ms for a 1.4 MB patch in a new
 * process, against 2-3 ms for the same bytes without escapes
 * (docs/decisions.md, "A request's long strings are decoded natively").
 *
 * The long strings are found and checked (the text only read), cut out of
 * the text, each replaced by a marker string no client can know (it holds a
 * nonce drawn when the process starts), the rest is parsed, and only then
 * are the long strings decoded, in place in the text (no second copy of a
 * patch's megabytes to fault in), and the markers in the parsed value
 * replaced by them. A text joinMessage joined lies in memory whose pages
 * were made present in one call, and an ASCII string there is made over its
 * bytes instead of copied (a 1.4 MB patch's copy: 5-12 ms of page faults on
 * a VM); each string's UTF-8 bytes are remembered beside it for the patch
 * parser (decoded-bytes.ts). The value is the one JSON.parse gives for the whole text:
 * the native side refuses anything it would decode differently (a lone
 * surrogate escape, bytes that are not UTF-8, a long string as a key) and the
 * caller then parses the text as it is, as it does for a text that does not
 * parse (so its error is the one the whole text deserves).
 */
import { rememberUtf8 } from "./decoded-bytes";
import { type JoinedBlock, nativeModule } from "./native";

/** Strings from this many bytes of source on are decoded natively, and texts from this size on are looked at. */
export const LONG_STRING_BYTES = 64 * 1024;

const MARK = `\u0000worksnap-long-string-${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")}-`;

/** A message's bytes made one array, and the memory they lie in when that is a joined block. */
export interface JoinedMessage {
  bytes: Buffer;
  block: JoinedBlock | null;
}

/**
 * A message that came in `parts` made one array: from LONG_STRING_BYTES on, in memory whose pages are made present
 * in one call (a 1.4 MB request joined by Buffer.concat faulted its pages in one at a time: about 5 ms on a VM),
 * which its ASCII long strings are then made over (parseWithLongStrings).
 */
export function joinMessage(parts: Uint8Array[]): JoinedMessage {
  let total = 0;
  for (const p of parts) total += p.byteLength;
  const joined = total >= LONG_STRING_BYTES ? nativeModule()?.joinBytes(parts) : null;
  if (joined) return { bytes: joined[0], block: joined[1] };
  if (parts.length === 1) {
    const only = parts[0] as Uint8Array;
    return { bytes: Buffer.isBuffer(only) ? only : Buffer.from(only.buffer, only.byteOffset, only.byteLength), block: null };
  }
  return { bytes: Buffer.concat(parts, total), block: null };
}

/**
 * The text's value with its long strings decoded natively; null where the caller must parse the text as it is.
 * When it answers, the text's long strings have been decoded in place: the caller must be done with its bytes.
 * `block`: the memory the text lies in when joinMessage joined it.
 */
export function parseWithLongStrings(text: Uint8Array, block: JoinedBlock | null = null): { value: unknown } | null {
  if (text.length < LONG_STRING_BYTES) return null;
  const native = nativeModule();
  const spans = native?.jsonLongStrings(text, LONG_STRING_BYTES);
  if (!native || !spans || spans.length === 0) return null;
  const parts: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < spans.length; i += 3) {
    parts.push(text.subarray(at, spans[i]), Buffer.from(JSON.stringify(MARK + i / 3)));
    at = spans[i + 1] as number;
  }
  parts.push(text.subarray(at));
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(parts).toString("utf8"));
  } catch {
    return null; // the text as it is gives the error it deserves
  }
  const decoded = native.jsonDecodeStrings(text, spans, block);
  const strings = new Map<string, string>();
  for (let i = 0; i < decoded.length; i += 2) {
    const s = decoded[i] as string;
    strings.set(MARK + i / 2, s);
    rememberUtf8(s, decoded[i + 1] as Uint8Array);
  }
  return { value: restore(value, strings) };
}

/** `value` with every marker string replaced by the string it stands for (objects and arrays walked without recursion). */
function restore(value: unknown, strings: Map<string, string>): unknown {
  if (typeof value === "string") return strings.get(value) ?? value;
  const stack: object[] = [];
  if (value !== null && typeof value === "object") stack.push(value);
  while (stack.length > 0) {
    const holder = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(holder)) {
      const v = holder[key];
      if (typeof v === "string") {
        const s = strings.get(v);
        // defineProperty: a key named __proto__ is an own property of a parsed object, and stays one
        if (s !== undefined) Object.defineProperty(holder, key, { value: s, writable: true, enumerable: true, configurable: true });
      } else if (v !== null && typeof v === "object") stack.push(v);
    }
  }
  return value;
}
