import { isAscii } from "node:buffer";
import type { ManifestEntry } from "./manifest";

/** A character outside ASCII. */
const WIDE = /[^\x00-\x7f]/;
/** `\u`: an escape, which may stand for a character outside ASCII (or an escaped backslash before a `u`). */
const ESCAPE = "\\u";

/**
 * A stored manifest's entries, from its bytes (UTF-8 JSON, `{"entries": [...]}`).
 *
 * Paths are mostly ASCII, but one character outside it makes the whole text a string of 16 bits a character: the
 * 15 MB manifest of a 100k-file snapshot holding four such paths took 120-180 ms to decode and parsed slower, on
 * an export's JavaScript thread before its first file was read. JSON's syntax is ASCII and no byte of a
 * multi-byte UTF-8 sequence is, so the bytes read as Latin-1 (one character a byte) parse to the same structure,
 * each string holding its UTF-8 bytes one per character; the few strings outside ASCII are then decoded again
 * from those bytes. Text that is all ASCII, or that holds an escape (which could stand for a character the
 * Latin-1 reading would take for a byte), is decoded whole as before. The result is the same either way (a test
 * holds the two equal).
 */
export function parseManifestEntries(bytes: Uint8Array): ManifestEntry[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(buf) || buf.includes(ESCAPE)) return (JSON.parse(buf.toString("utf8")) as { entries: ManifestEntry[] }).entries;
  const entries = (JSON.parse(buf.toString("latin1")) as { entries: ManifestEntry[] }).entries;
  for (const e of entries) {
    if (WIDE.test(e.path)) e.path = utf8Of(e.path);
    if (WIDE.test(e.blob)) e.blob = utf8Of(e.blob) as ManifestEntry["blob"];
    if (e.mode !== undefined && WIDE.test(e.mode)) e.mode = utf8Of(e.mode) as ManifestEntry["mode"];
  }
  return entries;
}

/** The text whose UTF-8 bytes `latin1` holds one per character. */
function utf8Of(latin1: string): string {
  return Buffer.from(latin1, "latin1").toString("utf8");
}
