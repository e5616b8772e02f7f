import { invalidArgument } from "./errors";

/** git's rule (DESIGN decision 9): binary means a NUL byte in the first 8000 bytes. */
export const BINARY_SNIFF_BYTES = 8000;

export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  return bytes.subarray(0, n).indexOf(0) >= 0;
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** File content for a JSON answer: UTF-8 text as is, anything else as `base64:`. */
export function encodeContent(bytes: Uint8Array): { content: string; encoding: "utf8" | "base64" } {
  if (!isBinary(bytes)) {
    try {
      return { content: utf8Strict.decode(bytes), encoding: "utf8" };
    } catch {
      // not valid UTF-8: fall through to base64 so no byte is lost
    }
  }
  return { content: `base64:${Buffer.from(bytes).toString("base64")}`, encoding: "base64" };
}

/**
 * The bytes of a tool argument given as `base64:` and standard base64 (the
 * prefix already taken off: `body`), refusing what is too large before
 * decoding it (the decoded size is known from the length) and anything that
 * is not base64 (whitespace is ignored, as line-wrapped base64 has it).
 */
export function decodeBase64Argument(body: string, arg: string, maxBytes: number, tooLarge: (size: number) => Error): Uint8Array {
  const decodedMax = Math.floor((body.length * 3) / 4);
  if (decodedMax - 2 > maxBytes) throw tooLarge(decodedMax);
  if (/\s/.test(body)) body = body.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 === 1) {
    throw invalidArgument(`${arg} starts with base64: but the rest is not valid base64 (A-Z a-z 0-9 + /, = padding)`, { arg });
  }
  const bytes = new Uint8Array(Buffer.from(body, "base64"));
  if (bytes.length > maxBytes) throw tooLarge(bytes.length);
  return bytes;
}

/** Tool input content: `base64:` prefix decodes, anything else is UTF-8 text. */
export function decodeContent(content: string): Uint8Array {
  if (content.startsWith("base64:")) return new Uint8Array(Buffer.from(content.slice(7), "base64"));
  return new TextEncoder().encode(content);
}
