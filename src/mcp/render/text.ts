/**
 * The pieces every text renderer shares (STYLE: only renderers build strings
 * for the model). An answer's text is what a model reads and pays for; the
 * full answer stays in structuredContent. Ids are shortened to prefixes the
 * tools accept back (SHORT_HEX digits), zero and empty fields are left out,
 * and content is raw text, never JSON-escaped.
 */
import type { Fingerprint } from "../../repo/fingerprint";

/** Hex digits of an id shown in text: snapshot ids, blob ids, lease ids and git oids all resolve from this many. */
export const SHORT_HEX = 12;

const SHA256_ID = /sha256:([0-9a-f]{64})/g;
const LEASE_ID = /lease_([0-9a-f]{32})/g;

/** `sha256:<64 hex>` -> 12 hex; `lease_<32 hex>` -> `lease_<12 hex>`; a git oid -> 12 hex. */
export function short(id: string): string {
  if (id.startsWith("sha256:")) return id.slice(7, 7 + SHORT_HEX);
  if (id.startsWith("lease_")) return id.slice(0, 6 + SHORT_HEX);
  if (/^[0-9a-f]{40,64}$/.test(id)) return id.slice(0, SHORT_HEX);
  return id;
}

/** The same shortening inside free text (error messages quote ids in full). */
export function shortenIds(text: string): string {
  return text.replace(SHA256_ID, (_m, hex: string) => hex.slice(0, SHORT_HEX)).replace(LEASE_ID, (_m, hex: string) => `lease_${hex.slice(0, SHORT_HEX)}`);
}

/** A header line: the parts that are present, separated by " · ". */
export function line(...parts: (string | false | null | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === "string" && p !== "").join(" · ");
}

/** Lines joined with "\n"; absent ones (null, false) are dropped, empty strings are lines of text and stay. */
export function lines(...parts: (string | false | null | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === "string").join("\n");
}

/** "1 file", "3 files". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A byte count as people read it: 812 B, 12.3 KB, 4.5 MB (powers of 1024). */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** What JSON.stringify leaves as it is but a reader may take for a line break or a terminal's command. */
const UNICODE_CONTROL = /[\x7f-\x9f\u2028\u2029]/g;

/**
 * A path on one line: as is, or as a JSON string (which the tools take back once parsed) when it holds a control
 * character, a C1 control or U+2028/U+2029 (a line break to many readers), or starts with a double quote (so a
 * quoted form is never mistaken for a name).
 */
export function pathText(path: string): string {
  if (!/[\x00-\x1f\x7f-\x9f\u2028\u2029]/.test(path) && !path.startsWith('"')) return path;
  return quotedText(path);
}

/** A JSON string of `s` with every control character escaped, U+2028/U+2029 and the C1 controls included. */
export function quotedText(s: string): string {
  return JSON.stringify(s).replace(UNICODE_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The fingerprint as short ids; an empty part (outside git, an unborn HEAD) is left out. */
export function fingerprintText(fp: Fingerprint): string {
  return line(fp.head_oid && `head ${short(fp.head_oid)}`, fp.index_oid && `index ${short(fp.index_oid)}`, `status ${short(fp.status_hash)}`);
}

/** What a read answer says about where it came from: the lease on the work tree (the snapshot id is the one asked for). */
export function leaseTag(out: object): string | null {
  const id = (out as { lease_id?: unknown }).lease_id;
  return typeof id === "string" ? short(id) : null;
}

/** Text as it is, with a final newline removed (the answer's text has none). */
export function raw(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/**
 * What whole-tree work skipped because it could not read it (permission
 * denied, FIFOs): `unreadable (3): a.txt, b/secret, … 1 more`; null when nothing was.
 */
export function unreadableLine(out: { unreadable?: string[]; unreadable_total?: number }): string | null {
  const names = out.unreadable ?? [];
  if (names.length === 0) return null;
  const total = out.unreadable_total ?? names.length;
  const more = total > names.length ? `, … ${total - names.length} more` : "";
  return `unreadable (${total}): ${names.map(pathText).join(", ")}${more}`;
}
