import { isUtf8 } from "node:buffer";

/**
 * "Byte strings": JS strings with one char (0..255) per byte. Decoding file
 * bytes as latin1 is a copy, and comparing two byte strings compares bytes, so
 * matching never normalises anything (CRLF, invalid UTF-8, NUL all survive).
 */

/** File bytes as a byte string. */
export function bytesToByteString(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** A byte string back to bytes (in a plain Uint8Array, never a pooled Buffer). */
export function byteStringToBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(s, 0, "latin1");
  return out;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Text (a normal JS string) as the byte string of its UTF-8 encoding. ASCII is its own encoding. */
export function textToByteString(text: string): string {
  return NON_ASCII.test(text) ? Buffer.from(text, "utf8").toString("latin1") : text;
}

/** A byte string decoded as UTF-8 (invalid sequences become U+FFFD): for paths and messages. */
export function byteStringToText(s: string): string {
  return NON_ASCII.test(s) ? Buffer.from(s, "latin1").toString("utf8") : s;
}

/** Whether the bytes are valid UTF-8 (checked in place, nothing decoded). */
export function isValidUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}
