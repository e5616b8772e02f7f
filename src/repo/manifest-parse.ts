import { isAscii } from "node:buffer";
import type { ManifestEntry } from "./manifest";
import { nativeModule } from "./native";

/** A character outside ASCII. */
const WIDE = /[^\x00-\x7f]/;
/** `\u`: an escape, which may stand for a character outside ASCII (or an escaped backslash before a `u`). */
const ESCAPE = "\\u";
/** A blob id as a manifest holds it: "sha256:" and 64 hex digits. */
const ID_CHARS = 71;

/**
 * A stored manifest's entries, from its bytes (UTF-8 JSON, `{"entries": [...]}`), with one string for each
 * distinct blob id: a tree of release copies holds each blob at five paths or more, and a JSON parser makes one
 * for each entry.
 *
 * With the native module, a manifest exactly as repo/manifest.ts writes one and without an escape (nearly every
 * one) is read as columns (src/native/manifest_columns.h): where each entry's id and path lie in the bytes, its
 * mode, and the first entry with the same id; each path and each distinct id is then decoded from the bytes where
 * it lies. On the 15 MB manifest of a 100k-file snapshot, in the compiled executable, decoding the text, parsing
 * it and sharing the ids took 0.40-0.43 s on an export's JavaScript thread before its first file was read; the
 * columns and the entries made from them take 0.19-0.25 s.
 *
 * Any other manifest is parsed as JSON. Paths are mostly ASCII, but one character outside it makes the whole text
 * a string of 16 bits a character, which decoded and parsed slower; JSON's syntax is ASCII and no byte of a
 * multi-byte UTF-8 sequence is, so the bytes read as Latin-1 (one character a byte) parse to the same structure,
 * each string holding its UTF-8 bytes one per character; the few strings outside ASCII are then decoded again
 * from those bytes. Text that is all ASCII, or that holds an escape (which could stand for a character the
 * Latin-1 reading would take for a byte), is decoded whole. The result is the same in every way (tests hold the
 * three equal).
 */
export function parseManifestEntries(bytes: Uint8Array): ManifestEntry[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const columns = nativeModule()?.manifestColumns(buf);
  if (columns) return fromColumns(buf, columns);
  let entries: ManifestEntry[];
  if (isAscii(buf) || buf.includes(ESCAPE)) entries = (JSON.parse(buf.toString("utf8")) as { entries: ManifestEntry[] }).entries;
  else {
    entries = (JSON.parse(buf.toString("latin1")) as { entries: ManifestEntry[] }).entries;
    for (const e of entries) {
      if (WIDE.test(e.path)) e.path = utf8Of(e.path);
      if (WIDE.test(e.blob)) e.blob = utf8Of(e.blob) as ManifestEntry["blob"];
      if (e.mode !== undefined && WIDE.test(e.mode)) e.mode = utf8Of(e.mode) as ManifestEntry["mode"];
    }
  }
  shareBlobIds(entries);
  return entries;
}

/** The entries the native module's columns of `buf` describe (keys in the text's order, as a JSON parser makes them). */
function fromColumns(buf: Buffer, [count, rows, modes]: [number, Uint32Array, Uint8Array]): ManifestEntry[] {
  const entries: ManifestEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = 4 * i;
    const idAt = rows[at] as number;
    const first = rows[at + 3] as number;
    const blob = first === i ? (buf.toString("latin1", idAt, idAt + ID_CHARS) as ManifestEntry["blob"]) : (entries[first] as ManifestEntry).blob;
    const pathAt = rows[at + 1] as number;
    const path = buf.toString("utf8", pathAt, pathAt + (rows[at + 2] as number));
    const mode = modes[i];
    entries[i] = mode === 0 ? { blob, path } : { blob, mode: mode === 1 ? "100755" : "120000", path };
  }
  return entries;
}

/** One string per distinct blob id. */
function shareBlobIds(entries: ManifestEntry[]): void {
  if (!Array.isArray(entries)) return; // not a manifest: what it is is left for the caller to find
  const ids = new Map<string, ManifestEntry["blob"]>();
  for (const e of entries) {
    const had = ids.get(e.blob);
    if (had === undefined) ids.set(e.blob, e.blob);
    else e.blob = had;
  }
}

/** The text whose UTF-8 bytes `latin1` holds one per character. */
function utf8Of(latin1: string): string {
  return Buffer.from(latin1, "latin1").toString("utf8");
}
