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

/** Tool input content: `base64:` prefix decodes, anything else is UTF-8 text. */
export function decodeContent(content: string): Uint8Array {
  if (content.startsWith("base64:")) return new Uint8Array(Buffer.from(content.slice(7), "base64"));
  return new TextEncoder().encode(content);
}
