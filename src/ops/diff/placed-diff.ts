/**
 * The unified diff of two text files rendered from their line changes (a
 * patch's, as placed), straight from the files' bytes: only the lines the
 * changes and their context name are visited, nothing is decoded, and the
 * result is the UTF-8 bytes of unifiedDiff(from, to, { changes }) (the tests
 * hold the two equal). The history records a patch's 500 files this way
 * without turning each whole file into a string and an index of its lines.
 *
 * The changes are the caller's word, so they are checked against both files
 * on the way (placeChanges): every stretch of lines between them must be
 * byte-equal in the two files, at the line numbers they give. A diff rendered
 * from changes that fit replays the change exactly.
 */
import type { LineChange } from "../../core/line-change";
import { nativeModule, type NativeModule } from "../../repo/native";
import { quoteCStyle } from "../patch/git-quote";
import { afterLines, beforeLines, countLines, skipLines } from "./line-offsets";
import { hunkRange, isDiffableText, namesHeader, NO_NEWLINE, sectionHeader, type DiffSide } from "./unified";

const NL = 10;
const encoder = new TextEncoder();
const NO_NEWLINE_BYTES = encoder.encode(NO_NEWLINE);

/**
 * Where each change lies in the two files: for change k, old bytes
 * [at[4k], at[4k+1]) became new bytes [at[4k+2], at[4k+3]). Null when the
 * changes do not turn `a` into `b` (out of order, past the end, or a stretch
 * between them that differs).
 */
export function placeChanges(a: Buffer, b: Buffer, changes: readonly LineChange[]): number[] | null {
  const at = new Array<number>(changes.length * 4);
  let i = 0;
  let j = 0;
  let p = 0;
  let q = 0;
  for (let k = 0; k < changes.length; k++) {
    const c = changes[k]!;
    const same = c.oldStart - i;
    if (same < 0 || c.newStart - j !== same || c.oldEnd < c.oldStart || c.newEnd < c.newStart) return null;
    const p2 = skipLines(a, p, same);
    if (p2 < 0) return null;
    const q2 = q + (p2 - p);
    if (!sameLines(a, p, p2, b, q, q2)) return null;
    const p3 = skipLines(a, p2, c.oldEnd - c.oldStart);
    const q3 = skipLines(b, q2, c.newEnd - c.newStart);
    if (p3 < 0 || q3 < 0) return null;
    at[4 * k] = p2;
    at[4 * k + 1] = p3;
    at[4 * k + 2] = q2;
    at[4 * k + 3] = q3;
    p = p3;
    q = q3;
    i = c.oldEnd;
    j = c.newEnd;
  }
  if (a.length - p !== b.length - q || a.compare(b, q, b.length, p, a.length) !== 0) return null;
  return at;
}

/**
 * Whether whole lines a[p, p2) are the same lines as b[q, q2): the same bytes
 * are the same lines, except that when a's last of them ends the file without
 * a newline, b's must end its file there too (else b's line goes on).
 */
function sameLines(a: Buffer, p: number, p2: number, b: Buffer, q: number, q2: number): boolean {
  if (p2 === p) return true;
  if (q2 > b.length || a.compare(b, q, q2, p, p2) !== 0) return false;
  return a[p2 - 1] === NL || q2 === b.length;
}

/**
 * The diff's bytes, or null where this renderer does not apply and the
 * caller diffs the files: no changes, a symlink, equal bytes, a side that is
 * not diffable text, or changes that do not fit.
 */
export function renderPlacedDiff(
  from: DiffSide,
  to: DiffSide,
  changes: readonly LineChange[],
  context = 3,
  native: NativeModule | null = nativeModule(),
): Uint8Array | null {
  if (changes.length === 0 || from.mode === "120000" || to.mode === "120000") return null;
  const a = view(from.bytes);
  const b = view(to.bytes);
  if (a.equals(b) || !isDiffableText(a) || !isDiffableText(b)) return null;
  const head = sectionHeader(from, to) + namesHeader(quoteCStyle(`a/${from.path}`), quoteCStyle(`b/${to.path}`));
  const q = native ? quadruples(changes) : null;
  if (native && q) return native.placedDiff(a, b, q, Buffer.from(head, "utf8"), context);
  const at = placeChanges(a, b, changes);
  if (!at) return null;
  const out = ByteSink.take(2 * (at[at.length - 1]! - at[2]! + 64 * changes.length));
  out.text(head);
  for (let k = 0; k < changes.length; ) {
    let e = k;
    while (e + 1 < changes.length && changes[e + 1]!.oldStart - changes[e]!.oldEnd <= 2 * context) e++;
    const first = changes[k]!;
    const last = changes[e]!;
    // the context: up to `context` lines before the first change and after the last (fewer at the file's ends)
    const before = Math.min(context, first.oldStart);
    const lo = beforeLines(a, at[4 * k]!, before);
    const end = at[4 * e + 1]!;
    const hi = afterLines(a, end, context);
    const after = countLines(a, end, hi) + (hi > end && a[hi - 1] !== NL ? 1 : 0); // a last line without newline counts
    const oldLo = first.oldStart - before;
    const newLo = first.newStart - before;
    out.text(`@@ -${hunkRange(oldLo, last.oldEnd + after - oldLo)} +${hunkRange(newLo, last.newEnd + after - newLo)} @@\n`);
    out.lines(" ", a, lo, at[4 * k]!);
    for (let m = k; m <= e; m++) {
      out.lines("-", a, at[4 * m]!, at[4 * m + 1]!);
      out.lines("+", b, at[4 * m + 2]!, at[4 * m + 3]!);
      out.lines(" ", a, at[4 * m + 1]!, m < e ? at[4 * (m + 1)]! : hi);
    }
    k = e + 1;
  }
  return out.done();
}

/** The changes as the native module takes them, or null when a line number is not one an Int32Array holds. */
function quadruples(changes: readonly LineChange[]): Int32Array | null {
  const q = new Int32Array(changes.length * 4);
  for (let k = 0; k < changes.length; k++) {
    const c = changes[k]!;
    q[4 * k] = c.oldStart;
    q[4 * k + 1] = c.oldEnd;
    q[4 * k + 2] = c.newStart;
    q[4 * k + 3] = c.newEnd;
    if (q[4 * k] !== c.oldStart || q[4 * k + 1] !== c.oldEnd || q[4 * k + 2] !== c.newStart || q[4 * k + 3] !== c.newEnd) return null;
  }
  return q;
}

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The scratch buffer diffs are rendered into, kept between renders up to this size. */
const SCRATCH_KEEP = 1 << 20;
let scratch: Buffer | null = null;

/**
 * A growing byte buffer. Its memory is not zeroed (every byte read back was written) and lines are copied with
 * Buffer.copy, no view made per line: in a one-shot process, where this runs before the JIT has caught up, the
 * per-line allocation was most of a 500-file patch's diff rendering. One scratch buffer serves every render (a
 * render runs to its end on one thread), and `done` copies out only the bytes written: a fresh buffer per file,
 * sized for the whole stretch its changes span, was a third of a 500-file patch's rendering.
 */
class ByteSink {
  private buf: Buffer;
  private len = 0;

  private constructor(buf: Buffer) {
    this.buf = buf;
  }

  /** A sink on the scratch buffer, at least `capacity` bytes when that is no more than it keeps. */
  static take(capacity: number): ByteSink {
    const want = Math.min(Math.max(capacity, 64 * 1024), SCRATCH_KEEP);
    if (scratch === null || scratch.length < want) scratch = Buffer.allocUnsafe(want);
    const sink = new ByteSink(scratch);
    scratch = null; // taken: a render that throws leaves nothing shared half-written
    return sink;
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const grown = Buffer.allocUnsafe(cap);
    this.buf.copy(grown, 0, 0, this.len);
    this.buf = grown;
  }

  text(s: string): void {
    const n = Buffer.byteLength(s, "utf8");
    this.room(n);
    this.len += this.buf.write(s, this.len, "utf8");
  }

  /** Whole lines src[from, to), each after `mark`; a last line without newline gets one and git's marker line. */
  lines(mark: string, src: Buffer, from: number, to: number): void {
    const m = mark.charCodeAt(0);
    const buf = this.buf;
    // one check of room for the whole range when it ends in a newline (every line then gets one mark byte)
    if (to > from && src[to - 1] === NL && this.len + (to - from) * 2 <= buf.length) {
      let len = this.len;
      for (let p = from; p < to; ) {
        const nl = src.indexOf(NL, p);
        const end = nl + 1;
        buf[len++] = m;
        len += src.copy(buf, len, p, end);
        p = end;
      }
      this.len = len;
      return;
    }
    for (let p = from; p < to; ) {
      const nl = src.indexOf(NL, p);
      const end = nl < 0 || nl >= to ? to : nl + 1;
      this.room(end - p + 2 + NO_NEWLINE_BYTES.length);
      this.buf[this.len++] = m;
      this.len += src.copy(this.buf, this.len, p, end);
      if (src[end - 1] !== NL) {
        this.buf[this.len++] = NL;
        this.buf.set(NO_NEWLINE_BYTES, this.len);
        this.len += NO_NEWLINE_BYTES.length;
      }
      p = end;
    }
  }

  /** The bytes written, copied out; the buffer goes back to being the scratch buffer (if it is not too large). */
  done(): Uint8Array {
    const out = new Uint8Array(this.buf.subarray(0, this.len));
    if (this.buf.length <= SCRATCH_KEEP && (scratch === null || scratch.length < this.buf.length)) scratch = this.buf;
    return out;
  }
}
