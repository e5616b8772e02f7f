/**
 * Searches one file in windows of whole lines, so memory stays near
 * `chunkBytes` whatever the file size (one line must fit in memory).
 *
 * Each window holds, in order: up to contextLines lines already searched (kept
 * for before-context), the lines to search now, and, unless the file ended,
 * contextLines more lines (left for the next window to search, so the
 * matches here always have their after-context). Because a match never spans a line
 * break, a line that straddles a read boundary is simply carried into the
 * next window whole, and line numbers are counted across windows.
 *
 * The searcher only finds byte offsets; this module turns them into matches
 * (line, column, text, context). Rendering for people or models happens in
 * the adapters.
 */
import { open, type FileHandle } from "node:fs/promises";
import { READ_FLAGS, assertRegular } from "../../repo/file-chunks";
import { BINARY_SNIFF_BYTES, isBinary } from "../../core/binary";
import { asBuffer, charStartAtOrAfter, charStartAtOrBefore, countNewlines, lastNewlineBefore } from "./literal";
import type { RegionScan } from "./regex-scan";
import type { GrepMatch } from "./types";

export type RegionSearch = (region: Uint8Array, maxRecords: number) => RegionScan | Promise<RegionScan>;

export interface FileSearchOptions {
  search: RegionSearch;
  /** matches at the start of the file already returned by an earlier page */
  skip: number;
  /** matches wanted after those */
  need: number;
  contextLines: number;
  chunkBytes: number;
  signal: AbortSignal;
  /** also return the SHA-256 of the file's bytes (a text file only) */
  hash?: boolean;
}

export interface FileSearch {
  binary: boolean;
  /** matches from index `skip` on, at most `need` */
  matches: GrepMatch[];
  /** every match in the file, returned or not */
  total: number;
  /** SHA-256 (hex) of every byte of the file, when asked for; null: the file was gone */
  sha256?: string | null;
  /** bytes a reader thread kept for it that were not counted in advance (engine bookkeeping) */
  kept?: number;
  /** the file could not be read (permission denied, or not a regular file): skipped and named, not searched */
  unreadable?: true;
}

export const LONG_LINE_BYTES = 300;
const TRIM_WINDOW_BYTES = 200;
const TRIM_LEAD_BYTES = 60;
const CONTEXT_LINE_BYTES = 200;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

export async function searchFile(
  path: string,
  source: ByteSource,
  o: FileSearchOptions,
): Promise<FileSearch> {
  const win = new ByteWindow(source, o.hash === true);
  try {
    // the awaits below are skipped for in-memory sources: most files are small and read whole
    const first = win.fill(Math.max(BINARY_SNIFF_BYTES, o.chunkBytes));
    if (first) await first;
    const head = win.view();
    if (isBinary(head)) return { binary: true, matches: [], total: 0 };
    // ripgrep drops a UTF-8 byte order mark, so `^` matches right after it
    if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) win.drop(3);

    const n = o.contextLines;
    const matches: GrepMatch[] = [];
    let total = 0;
    let line = 1; // line number of view()[0]
    let kept = 0; // bytes at the front of the view that were already searched
    let want = o.chunkBytes;
    for (;;) {
      o.signal.throwIfAborted();
      const filled = win.fill(kept + want);
      if (filled) await filled;
      const view = asBuffer(win.view());
      const eof = win.eof;
      const end = eof ? view.length : lastNewlineBefore(view, view.length) + 1;
      let limit = end;
      for (let k = 0; k < n && !eof && limit > kept; k++) limit = lastNewlineBefore(view, limit - 1) + 1;
      if (!eof && limit <= kept) {
        want *= 2; // a line (or contextLines of them) longer than the window: read more
        continue;
      }
      want = o.chunkBytes;
      let found = o.search(view.subarray(kept, limit), Math.max(0, o.skip + o.need - total));
      if (found instanceof Promise) found = await found;
      if (found.starts.length > 0) {
        const lines = new LineCursor(view, line, end);
        // line numbers the scan already counted, relative to the region's first line
        const counted = found.lines;
        const regionLine = counted && kept > 0 ? line + countNewlines(view, 0, kept) : line;
        for (let r = 0; r < found.starts.length; r++) {
          const index = total + r;
          if (index < o.skip || matches.length >= o.need) continue;
          const start = kept + found.starts[r]!;
          // windows split at line breaks, so a window's first match is its line's first
          const firstOnLine = r === 0 || (counted ? counted[r] !== counted[r - 1] : lines.newlineBetween(kept + found.starts[r - 1]!, start));
          const at = counted ? regionLine + counted[r]! : undefined;
          matches.push(lines.match(path, start, kept + found.ends[r]!, firstOnLine ? n : 0, at));
        }
      }
      total += found.count;
      if (eof) break;
      let keepFrom = limit;
      for (let k = 0; k < n && keepFrom > 0; k++) keepFrom = lastNewlineBefore(view, keepFrom - 1) + 1;
      line += countNewlines(view, 0, keepFrom);
      win.drop(keepFrom);
      kept = limit - keepFrom;
    }
    return o.hash ? { binary: false, matches, total, sha256: win.digest() } : { binary: false, matches, total };
  } finally {
    const closed = win.close();
    if (closed) await closed;
  }
}

/** Turns byte offsets of one window into matches, counting lines forward. */
class LineCursor {
  private pos = 0;

  constructor(
    private readonly buf: Buffer,
    private line: number,
    /** end of the complete lines in the window */
    private readonly end: number,
  ) {}

  /** `line`, when known, spares counting the newlines before the match. */
  match(path: string, start: number, end: number, contextLines: number, line?: number): GrepMatch {
    const { buf } = this;
    this.line = line ?? this.line + countNewlines(buf, this.pos, start);
    this.pos = start;
    const lineStart = lastNewlineBefore(buf, start) + 1;
    const lineEnd = this.lineEndFrom(start);
    const textEnd = dropCr(buf, lineStart, lineEnd);
    const m: GrepMatch = { path, line: this.line, col: start - lineStart + 1, text: "" };
    if (textEnd - lineStart <= LONG_LINE_BYTES) {
      m.text = decoder.decode(buf.subarray(lineStart, textEnd));
    } else {
      const from = charStartAtOrAfter(buf, Math.max(lineStart, start - TRIM_LEAD_BYTES), start);
      let to = Math.min(textEnd, Math.max(from + TRIM_WINDOW_BYTES, Math.min(end, from + 2 * TRIM_WINDOW_BYTES)));
      to = charStartAtOrBefore(buf, to, from);
      m.text = decoder.decode(buf.subarray(from, to));
      if (from > lineStart || to < textEnd) m.trimmed = { before: from - lineStart, after: textEnd - to };
    }
    if (contextLines > 0) {
      const before = this.before(lineStart, contextLines);
      const after = this.after(lineEnd, contextLines);
      if (before.length > 0) m.before = before;
      if (after.length > 0) m.after = after;
    }
    return m;
  }

  newlineBetween(from: number, to: number): boolean {
    const nl = this.buf.indexOf(10, from);
    return nl >= 0 && nl < to;
  }

  private lineEndFrom(pos: number): number {
    const nl = this.buf.indexOf(10, pos);
    return nl < 0 || nl >= this.buf.length ? this.buf.length : nl;
  }

  private before(lineStart: number, count: number): string[] {
    const out: string[] = [];
    let start = lineStart;
    while (out.length < count && start > 0) {
      const end = start - 1;
      start = lastNewlineBefore(this.buf, end) + 1;
      out.push(contextText(this.buf, start, end));
    }
    return out.reverse();
  }

  private after(lineEnd: number, count: number): string[] {
    const out: string[] = [];
    let start = lineEnd + 1;
    while (out.length < count && start < this.end) {
      const end = this.lineEndFrom(start);
      out.push(contextText(this.buf, start, end));
      start = end + 1;
    }
    return out;
  }
}

function dropCr(buf: Uint8Array, start: number, end: number): number {
  return end > start && buf[end - 1] === 13 ? end - 1 : end;
}

function contextText(buf: Buffer, start: number, end: number): string {
  end = dropCr(buf, start, end);
  if (end - start <= CONTEXT_LINE_BYTES) return decoder.decode(buf.subarray(start, end));
  return `${decoder.decode(buf.subarray(start, charStartAtOrBefore(buf, start + CONTEXT_LINE_BYTES, start)))}…`;
}

/** A file read straight into the window's buffer, without intermediate chunks. */
export interface FileSource {
  file: string;
}

export type ByteSource = Uint8Array | ReadableStream<Uint8Array> | FileSource;

/**
 * The unsearched tail of a file: a view over an in-memory buffer, or a
 * buffer that is refilled from a file or a stream and compacted in place, so
 * a long file costs one buffer about twice the window, not garbage per read.
 */
class ByteWindow {
  eof = false;
  private base: Uint8Array | null = null;
  private reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void>; releaseLock(): void } | null = null;
  private readonly file: string | null = null;
  private handle: FileHandle | null = null;
  private store: Uint8Array = new Uint8Array(0);
  private lo = 0;
  private hi = 0;
  private done = false;
  /** hashes every byte read from a file or stream, when asked to */
  private readonly hasher: Bun.CryptoHasher | null;

  constructor(source: ByteSource, hash: boolean) {
    this.hasher = hash && !(source instanceof Uint8Array) ? new Bun.CryptoHasher("sha256") : null;
    if (source instanceof Uint8Array) this.base = source;
    else if ("file" in source) this.file = source.file;
    else this.reader = source.getReader();
  }

  /** SHA-256 (hex) of the whole source, read to its end. */
  digest(): string {
    if (this.base) return new Bun.CryptoHasher("sha256").update(this.base).digest("hex");
    return this.hasher!.digest("hex");
  }

  view(): Uint8Array {
    return (this.base ?? this.store).subarray(this.lo, this.hi);
  }

  /** Makes the view at least `min` bytes long, unless the file ends first; synchronous for in-memory sources. */
  fill(min: number): Promise<void> | undefined {
    if (this.base) {
      this.hi = Math.min(this.base.length, Math.max(this.hi, this.lo + min));
      this.eof = this.hi === this.base.length;
      return undefined;
    }
    return this.file !== null ? this.fillFromFile(min) : this.fillFromStream(min);
  }

  private async fillFromStream(min: number): Promise<void> {
    while (this.hi - this.lo < min && !this.done) {
      const { value, done } = await this.reader!.read();
      if (done || !value) this.done = true;
      else if (value.length > 0) {
        this.makeRoom(value.length);
        this.hasher?.update(value);
        this.store.set(value, this.hi);
        this.hi += value.length;
      }
    }
    this.eof = this.done;
  }

  private async fillFromFile(min: number): Promise<void> {
    this.handle ??= await openRegularFile(this.file!);
    while (this.hi - this.lo < min && !this.done) {
      this.makeRoom(min - (this.hi - this.lo));
      const { bytesRead } = await this.handle.read(this.store, this.hi, this.store.length - this.hi, null);
      if (bytesRead === 0) this.done = true;
      else this.hasher?.update(this.store.subarray(this.hi, this.hi + bytesRead));
      this.hi += bytesRead;
    }
    this.eof = this.done;
  }

  drop(count: number): void {
    this.lo += count;
  }

  close(): Promise<void> | undefined {
    releaseStore(this.store);
    this.store = new Uint8Array(0);
    if (this.handle) return this.handle.close();
    if (!this.reader) return undefined;
    const reader = this.reader;
    if (this.done) return void reader.releaseLock();
    return reader
      .cancel()
      .catch(() => {})
      .then(() => reader.releaseLock());
  }

  /** Room for `extra` more bytes after the view: compact in place, grow only when the view itself needs it. */
  private makeRoom(extra: number): void {
    if (this.hi + extra <= this.store.length) return;
    const used = this.hi - this.lo;
    if (used + extra > this.store.length) {
      const grown = takeStore(Math.max(2 * (used + extra), 64 * 1024));
      grown.set(this.store.subarray(this.lo, this.hi));
      releaseStore(this.store);
      this.store = grown;
    } else {
      this.store.copyWithin(0, this.lo, this.hi);
    }
    this.hi = used;
    this.lo = 0;
  }
}

/**
 * Window buffers of finished files, kept for the next large file: a tree with
 * many big files would otherwise leave a multi-megabyte buffer per file for
 * the collector, and the process's peak memory with it.
 */
const spareStores: Uint8Array[] = [];
const MAX_SPARE_STORES = 2;
const MAX_SPARE_BYTES = 64 * 1024 * 1024;

function takeStore(size: number): Uint8Array {
  const k = spareStores.findIndex((s) => s.length >= size);
  return k >= 0 ? spareStores.splice(k, 1)[0]! : new Uint8Array(size);
}

function releaseStore(store: Uint8Array): void {
  if (store.length < 64 * 1024 || store.length > MAX_SPARE_BYTES) return;
  spareStores.push(store);
  if (spareStores.length > MAX_SPARE_STORES) spareStores.sort((a, b) => b.length - a.length).pop();
}

/** Opens a file for a window: never through a symlink, never waiting on a FIFO, only a regular file (READ_FLAGS). */
async function openRegularFile(file: string): Promise<FileHandle> {
  const handle = await open(file, READ_FLAGS);
  try {
    assertRegular(await handle.stat());
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
