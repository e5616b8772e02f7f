/**
 * The UTF-8 bytes a request's long string was decoded from, kept beside the
 * string for a moment so that whoever turns the string back into bytes (a
 * patch's parser, a written file's content) takes them instead of encoding it
 * again: a 1.4 MB patch encoded cost its parse about 5 ms of new memory on a
 * machine whose page faults are slow, and the decoder already holds the bytes
 * (for an ASCII string, the very memory the string is made of:
 * json-long-strings.ts).
 *
 * A string is looked up by value, so an answer is always the UTF-8 encoding
 * of the string asked about, whoever made it. Bytes are taken once: the
 * entry goes with them (the taker holds them now). What is kept otherwise is
 * bounded: the last KEPT_ENTRIES strings and KEPT_BYTES of bytes, each for
 * KEPT_MS at most; a string not found is encoded as before.
 */

export const KEPT_ENTRIES = 8;
export const KEPT_BYTES = 512 * 1024 * 1024;
export const KEPT_MS = 10_000;

interface Kept {
  text: string;
  bytes: Uint8Array;
  at: number;
}

/** Newest last. */
let kept: Kept[] = [];
let expiry: ReturnType<typeof setTimeout> | null = null;

/** Remembers that `bytes` are `text` in UTF-8 (the caller vouches for it: the decoder that made both). */
export function rememberUtf8(text: string, bytes: Uint8Array, now = performance.now()): void {
  kept = kept.filter((k) => now - k.at < KEPT_MS && k.text !== text);
  kept.push({ text, bytes, at: now });
  let total = 0;
  for (let i = kept.length - 1; i >= 0; i--) {
    total += kept[i]!.bytes.byteLength;
    if (kept.length - i > KEPT_ENTRIES || total > KEPT_BYTES) {
      kept = kept.slice(i + 1);
      break;
    }
  }
  if (!expiry && kept.length > 0) {
    expiry = setTimeout(expire, KEPT_MS);
    expiry.unref?.();
  }
}

function expire(): void {
  expiry = null;
  const now = performance.now();
  kept = kept.filter((k) => now - k.at < KEPT_MS);
  if (kept.length > 0) {
    expiry = setTimeout(expire, KEPT_MS - (now - (kept[0] as Kept).at) + 1);
    expiry.unref?.();
  }
}

/**
 * `text`'s UTF-8 bytes when a decoder remembered them, else undefined; taken, so a second call does not find
 * them. Never to be written: for an ASCII string made over a joined message they are the very memory the string
 * is made of.
 */
export function takeUtf8(text: string, now = performance.now()): Uint8Array | undefined {
  for (let i = kept.length - 1; i >= 0; i--) {
    const k = kept[i] as Kept;
    if (now - k.at < KEPT_MS && k.text.length === text.length && k.text === text) {
      kept.splice(i, 1);
      return k.bytes;
    }
  }
  return undefined;
}

/** Forgets every kept string (tests). */
export function forgetUtf8(): void {
  kept = [];
  if (expiry) clearTimeout(expiry);
  expiry = null;
}
