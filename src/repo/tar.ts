/**
 * A deterministic tar format: POSIX ustar headers with every varying field
 * fixed (mtime 0, uid/gid 0, empty uname/gname, devmajor/devminor 0), modes
 * 0644 / 0755 / 0777 for symlinks (type 2). A pax extended header (type x,
 * named "PaxHeader") is written only when a field does not fit ustar: a path
 * or link target over 100 bytes, or a size of 8 GiB or more. No timestamps,
 * no global headers, no padding beyond the two zero blocks that end the archive.
 */
import { concat } from "../core/bytes";

export const BLOCK = 512;

export type TarEntryType = "file" | "symlink";

export interface TarHeaderFields {
  path: string;
  type: TarEntryType;
  /** 0o644 or 0o755 for files; symlinks are always 0o777. */
  mode: number;
  size: number;
  /** Symlink target bytes (UTF-8 string or raw bytes). */
  linkTarget?: Uint8Array;
}

const enc = new TextEncoder();
const USTAR_NAME_MAX = 100;
const USTAR_SIZE_MAX = 0o77777777777;

/** The header block(s) for one entry: an optional pax header plus the ustar header. */
export function tarHeader(fields: TarHeaderFields): Uint8Array {
  const name = enc.encode(fields.path);
  const link = fields.linkTarget ?? new Uint8Array(0);
  const size = fields.type === "symlink" ? 0 : fields.size;
  const pax: [string, Uint8Array][] = [];
  if (name.length > USTAR_NAME_MAX) pax.push(["path", name]);
  if (link.length > USTAR_NAME_MAX) pax.push(["linkpath", link]);
  if (size > USTAR_SIZE_MAX) pax.push(["size", enc.encode(String(size))]);
  const blocks: Uint8Array[] = [];
  if (pax.length > 0) {
    const body = paxRecords(pax);
    blocks.push(ustarHeader(enc.encode("PaxHeader"), "x", 0o644, body.length, new Uint8Array(0)));
    blocks.push(padded(body));
  }
  const mode = fields.type === "symlink" ? 0o777 : fields.mode;
  blocks.push(ustarHeader(truncateUtf8(name, USTAR_NAME_MAX), fields.type === "symlink" ? "2" : "0", mode, size > USTAR_SIZE_MAX ? 0 : size, truncateUtf8(link, USTAR_NAME_MAX)));
  return blocks.length === 1 ? (blocks[0] as Uint8Array) : concat(blocks);
}

const ZEROS = new Uint8Array(BLOCK);

/** Zero bytes that complete a body of `size` bytes to a whole block (a view of one shared block: to write, not to change). */
export function tarPadding(size: number): Uint8Array {
  const rest = size % BLOCK;
  return ZEROS.subarray(0, rest === 0 ? 0 : BLOCK - rest);
}

/** The end-of-archive marker: two zero blocks. */
export function tarTrailer(): Uint8Array {
  return new Uint8Array(2 * BLOCK);
}

/** The fields every header shares (uid, gid, mtime, magic, version, devmajor, devminor; checksum as spaces), and their byte sum. */
const TEMPLATE = (() => {
  const h = new Uint8Array(BLOCK);
  putOctal(h, 108, 8, 0); // uid
  putOctal(h, 116, 8, 0); // gid
  putOctal(h, 136, 12, 0); // mtime
  h.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  h.set(enc.encode("ustar\0"), 257);
  h.set(enc.encode("00"), 263);
  // uname (265) and gname (297) stay empty.
  putOctal(h, 329, 8, 0); // devmajor
  putOctal(h, 337, 8, 0); // devminor
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i] as number;
  return { h, sum };
})();

function ustarHeader(name: Uint8Array, typeflag: string, mode: number, size: number, link: Uint8Array): Uint8Array {
  const h = TEMPLATE.h.slice();
  h.set(name, 0);
  finishUstar(h, name.length, typeflag, mode, size, link);
  return h;
}

/**
 * tarHeader written into `dst` (one block, e.g. a writer's scratch space) instead of a new array, for an entry
 * that needs no pax header; false, `dst` left unspecified, when it needs one (a path or link target over 100
 * bytes, a size of 8 GiB or more): then use tarHeader. An export writes 100,000 headers; a new array for each
 * (and the name encoded into another) was a tenth of its JavaScript thread, most of it the collector's.
 */
export function putTarHeader(dst: Uint8Array, fields: TarHeaderFields): boolean {
  const link = fields.linkTarget ?? EMPTY;
  const size = fields.type === "symlink" ? 0 : fields.size;
  if (dst.length !== BLOCK || size > USTAR_SIZE_MAX || link.length > USTAR_NAME_MAX) return false;
  dst.set(TEMPLATE.h);
  const { read, written } = enc.encodeInto(fields.path, dst.subarray(0, USTAR_NAME_MAX));
  if (read < fields.path.length) return false;
  finishUstar(dst, written, fields.type === "symlink" ? "2" : "0", fields.type === "symlink" ? 0o777 : fields.mode, size, link);
  return true;
}

const EMPTY = new Uint8Array(0);

/** The fields after the name (already in h[0, nameLength)) and the checksum, on a copy of TEMPLATE. */
function finishUstar(h: Uint8Array, nameLength: number, typeflag: string, mode: number, size: number, link: Uint8Array): void {
  let sum = TEMPLATE.sum;
  for (let i = 0; i < nameLength; i++) sum += h[i] as number;
  sum += putOctal(h, 100, 8, mode);
  sum += putOctal(h, 124, 12, size);
  h[156] = typeflag.charCodeAt(0);
  sum += h[156] as number;
  h.set(link, 157);
  for (let i = 0; i < link.length; i++) sum += link[i] as number;
  // six octal digits, NUL, space
  for (let i = 153, v = sum; i >= 148; i--, v = Math.floor(v / 8)) h[i] = 0x30 + (v % 8);
  h[154] = 0;
  h[155] = 0x20;
}

/** `value` in octal, zero padded to width - 1 digits, then NUL; the sum of the bytes written. */
function putOctal(h: Uint8Array, off: number, width: number, value: number): number {
  let sum = 0;
  let v = value;
  for (let i = off + width - 2; i >= off; i--) {
    const digit = v % 8;
    h[i] = 0x30 + digit;
    sum += 0x30 + digit;
    v = Math.floor(v / 8);
  }
  h[off + width - 1] = 0;
  return sum;
}

/** pax records "<len> <key>=<value>\n", where <len> counts the whole record including itself. */
function paxRecords(records: [string, Uint8Array][]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [key, value] of records) {
    const rest = key.length + value.length + 3; // space, "=", newline
    let len = rest + String(rest).length;
    if (String(len).length !== String(rest).length) len = rest + String(len).length;
    parts.push(enc.encode(`${len} ${key}=`), value, enc.encode("\n"));
  }
  return concat(parts);
}

/** Cuts to at most `max` bytes without splitting a UTF-8 sequence (the full value is in the pax record). */
function truncateUtf8(bytes: Uint8Array, max: number): Uint8Array {
  if (bytes.length <= max) return bytes;
  let end = max;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

function padded(body: Uint8Array): Uint8Array {
  return concat([body, tarPadding(body.length)]);
}

// ---------------------------------------------------------------- reading

export interface TarEntryHeader {
  /** Index of the entry in the archive (pax headers not counted), for messages. */
  index: number;
  path: string;
  /** Raw typeflag: "0" file, "2" symlink, anything else is reported to the caller. */
  typeflag: string;
  mode: number;
  size: number;
  /** Symlink target bytes. */
  linkTarget: Uint8Array;
}

export class TarFormatError extends Error {
  constructor(
    message: string,
    readonly entryIndex: number,
  ) {
    super(message);
    this.name = "TarFormatError";
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A pull parser over a byte stream: `next()` gives the next entry's header,
 * then the caller consumes its body with `body()` (chunks, in order) before
 * asking for the next entry. Checksums are verified; pax `path`, `linkpath`
 * and `size` records are honoured. Never holds more than one chunk plus a block.
 */
export class TarReader {
  private readonly reader: { read(): Promise<{ value?: Uint8Array; done: boolean }>; cancel(): Promise<void> };
  /**
   * The chunk being read, from `pos` on. Headers are parsed where they lie and bodies handed out as views of it,
   * not sliced off: an import reads 100,000 entries, and a view or a copy each was a tenth of its JavaScript thread.
   */
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private ended = false;
  private pendingBody = 0;
  /** the current entry's size (its body without padding) */
  private bodySize = 0;
  private index = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }

  async next(): Promise<TarEntryHeader | null> {
    if (this.pendingBody > 0) await this.skip(this.pendingBody);
    let pax: Map<string, Uint8Array> | null = null;
    for (;;) {
      const at = this.buf.length - this.pos >= BLOCK ? this.pos : await this.need(BLOCK);
      if (at < 0) throw new TarFormatError("archive ends without the end-of-archive marker", this.index);
      const block = this.buf;
      this.pos = at + BLOCK;
      if (isZero(block, at, BLOCK)) {
        const second = await this.need(BLOCK);
        if (second < 0 || !isZero(this.buf, second, BLOCK)) throw new TarFormatError("archive has a zero block that is not the end marker", this.index);
        this.pos = second + BLOCK;
        return null;
      }
      verifyChecksum(block, at, this.index);
      const typeflag = String.fromCharCode(block[at + 156] as number);
      const size = readOctal(block, at + 124, 12, this.index, "size");
      if (typeflag === "x") {
        const body = await this.take(size + tarPadding(size).length);
        if (body === null) throw new TarFormatError("archive ends inside a pax header", this.index);
        pax = parsePax(body.subarray(0, size), this.index);
        continue;
      }
      const paxPath = pax?.get("path");
      const path = paxPath ? decodeName(paxPath, this.index) : ustarName(block, at, this.index);
      const sizeOverride = pax?.get("size");
      const entry: TarEntryHeader = {
        index: this.index++,
        path,
        typeflag,
        mode: readOctal(block, at + 100, 8, this.index - 1, "mode"),
        size: sizeOverride ? Number(new TextDecoder().decode(sizeOverride)) : size,
        linkTarget: pax?.get("linkpath") ?? cstr(block, at + 157, 100),
      };
      if (!Number.isSafeInteger(entry.size) || entry.size < 0) throw new TarFormatError(`entry ${path} has an invalid size`, entry.index);
      this.bodySize = entry.size;
      this.pendingBody = entry.size + tarPadding(entry.size).length;
      return entry;
    }
  }

  /**
   * The current entry's body whole, as a view of the chunk read (valid until the next chunk is asked for), when it
   * lies there whole, padding included; null otherwise (read it with body()). Only right after next().
   */
  wholeBody(): Uint8Array | null {
    const size = this.bodySize;
    if (this.pendingBody !== size + tarPadding(size).length || this.buf.length - this.pos < this.pendingBody) return null;
    const at = this.pos;
    this.pos += this.pendingBody;
    this.pendingBody = 0;
    return this.buf.subarray(at, at + size);
  }

  /**
   * The current entry's body, in chunks: views of the stream's chunks, valid until the next one is asked for.
   * Must be consumed fully before `next()` (or `next()` skips it).
   */
  async *body(size: number): AsyncGenerator<Uint8Array> {
    let left = size;
    while (left > 0) {
      if (this.pos >= this.buf.length) await this.fill();
      const avail = this.buf.length - this.pos;
      if (avail === 0) throw new TarFormatError("archive ends inside an entry body", this.index - 1);
      const n = Math.min(left, avail);
      const chunk = this.buf.subarray(this.pos, this.pos + n);
      this.pos += n;
      left -= n;
      this.pendingBody -= n;
      yield chunk;
    }
    await this.skip(this.pendingBody);
  }

  /** True when nothing but zero padding follows the end marker. */
  async trailingDataIsZero(): Promise<boolean> {
    for (;;) {
      if (!isZero(this.buf, this.pos, this.buf.length - this.pos)) return false;
      this.pos = this.buf.length;
      if (this.ended) return true;
      await this.fill();
      if (this.ended && this.pos >= this.buf.length) return true;
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }

  private async skip(n: number): Promise<void> {
    while (n > 0) {
      if (this.pos >= this.buf.length) await this.fill();
      const avail = this.buf.length - this.pos;
      if (avail === 0) throw new TarFormatError("archive ends inside an entry body", this.index - 1);
      const k = Math.min(n, avail);
      this.pos += k;
      n -= k;
    }
    this.pendingBody = 0;
  }

  /** The next chunk, after what is left of this one (copied out: the stream may reuse the chunk's buffer). */
  private async fill(): Promise<void> {
    if (this.ended) return;
    const { value, done } = await this.reader.read();
    if (done || !value) {
      this.ended = true;
      return;
    }
    this.buf = this.pos >= this.buf.length ? value : concat([this.buf.subarray(this.pos), value]);
    this.pos = 0;
  }

  /** Where `n` bytes in a row start in `buf` (reading on as needed); -1 when the archive ends first. */
  private async need(n: number): Promise<number> {
    while (this.buf.length - this.pos < n && !this.ended) await this.fill();
    return this.buf.length - this.pos < n ? -1 : this.pos;
  }

  /** The next `n` bytes, copied; null when the archive ends first. */
  private async take(n: number): Promise<Uint8Array | null> {
    const at = await this.need(n);
    if (at < 0) return null;
    this.pos = at + n;
    return this.buf.slice(at, at + n);
  }
}

function isZero(bytes: Uint8Array, from: number, length: number): boolean {
  for (let i = from, end = from + length; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

function verifyChecksum(block: Uint8Array, at: number, index: number): void {
  let sum = 8 * 0x20; // the checksum field counts as spaces
  for (let i = at; i < at + 148; i++) sum += block[i] as number;
  for (let i = at + 156; i < at + BLOCK; i++) sum += block[i] as number;
  const stated = readOctal(block, at + 148, 8, index, "checksum");
  if (stated !== sum) throw new TarFormatError(`header checksum mismatch (stated ${stated}, computed ${sum})`, index);
}

const SPACE = 0x20;

function readOctal(block: Uint8Array, off: number, width: number, index: number, what: string): number {
  const end = off + width;
  let i = off;
  while (i < end && block[i] === SPACE) i++;
  let value = 0;
  let digits = 0;
  for (; i < end; i++) {
    const b = block[i] as number;
    if (b < 0x30 || b > 0x37) break;
    value = value * 8 + (b - 0x30);
    digits++;
  }
  for (; i < end; i++) {
    const b = block[i] as number;
    if (b !== 0 && b !== SPACE) throw new TarFormatError(`header field ${what} is not octal`, index);
  }
  return digits === 0 ? 0 : value;
}

const NO_BYTES = new Uint8Array(0);

/** Where the NUL-terminated field at `off`, `width` bytes wide, ends (its width when it has no NUL). */
function fieldEnd(block: Uint8Array, off: number, width: number): number {
  let end = off;
  while (end < off + width && block[end] !== 0) end++;
  return end;
}

/** A NUL-terminated field of the header at `off`, copied (the chunk it lies in is reused). */
function cstr(block: Uint8Array, off: number, width: number): Uint8Array {
  return block[off] === 0 ? NO_BYTES : block.slice(off, fieldEnd(block, off, width));
}

/** The entry name of the ustar header at `at`: its prefix, a slash and its name when it has a prefix. */
function ustarName(block: Uint8Array, at: number, index: number): string {
  const nameBytes = block.subarray(at, fieldEnd(block, at, 100));
  if (block[at + 345] === 0) return decodeName(nameBytes, index);
  return decodeName(concat([cstr(block, at + 345, 155), enc.encode("/"), nameBytes]), index);
}

function decodeName(raw: Uint8Array, index: number): string {
  try {
    return strictUtf8.decode(raw);
  } catch {
    throw new TarFormatError("entry name is not valid UTF-8", index);
  }
}

function parsePax(body: Uint8Array, index: number): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  let pos = 0;
  while (pos < body.length) {
    const sp = body.indexOf(0x20, pos);
    if (sp < 0) throw new TarFormatError("malformed pax record", index);
    const len = Number(new TextDecoder().decode(body.subarray(pos, sp)));
    if (!Number.isInteger(len) || len <= sp - pos || pos + len > body.length || body[pos + len - 1] !== 10) {
      throw new TarFormatError("malformed pax record", index);
    }
    const rec = body.subarray(sp + 1, pos + len - 1);
    const eq = rec.indexOf(0x3d);
    if (eq < 0) throw new TarFormatError("malformed pax record", index);
    out.set(new TextDecoder().decode(rec.subarray(0, eq)), rec.slice(eq + 1));
    pos += len;
  }
  return out;
}
