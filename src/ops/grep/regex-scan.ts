/**
 * Runs a planned regex (regex-analysis.ts) over one region of whole lines and
 * returns byte offsets of the matches. The same function runs on the main
 * thread for provably cheap patterns and inside the regex worker
 * (regex-pool.ts), which gets it through `Function.prototype.toString`, so it
 * must stay self-contained: no imports, no module-level references, helpers
 * nested inside.
 */
export interface RegionScan {
  /** match start/end byte offsets within the region, for the first `maxRecords` matches */
  starts: number[];
  ends: number[];
  /** all matches in the region, including those beyond `maxRecords` */
  count: number;
  /** when asked for: the 0-based line (within the region) of each recorded match */
  lines?: number[];
}

export interface RegexScanJob {
  source: string;
  /** without `g`; the scan adds it */
  flags: string;
  perLine: boolean;
  literals: Uint8Array[] | null;
  /** with `literals`: further sets a line must hold one string of each (RegexPlan.required) */
  required?: Uint8Array[][] | null;
  /** starts at a line start; ends after a `\n`, or at the end of the file */
  region: Uint8Array;
  maxRecords: number;
  /** also return `lines`, to spare the caller counting newlines */
  wantLines?: boolean;
  /** a byte-level shortcut for an ASCII fixed string matched case-insensitively (see AsciiFold) */
  fold?: AsciiFold | null;
}

/**
 * An ASCII fixed string under `iu`: a character matches one of its letters
 * iff it is that letter in either case, or U+212A KELVIN SIGN for k, or
 * U+017F LONG S for s (the only non-ASCII characters whose simple case
 * folding is ASCII). So on a region holding neither of `guards` (their UTF-8
 * bytes, listed when the pattern has a k or an s), the `source` regex with
 * flags `gi` (no `u`: non-ASCII never matches ASCII) run over the bytes as
 * Latin-1 finds exactly the real regex's matches, at byte offsets, without
 * decoding UTF-8. ASCII bytes decode to themselves in any UTF-8, so invalid
 * sequences change nothing.
 */
export interface AsciiFold {
  source: string;
  guards: number[][];
  /** the fixed string itself, lowercase: every match is it in some mix of cases, or holds a guard */
  lower: string;
}

export function regexScan(job: RegexScanJob, cache: Map<string, RegExp>): RegionScan {
  const key = `${job.flags}/${job.source}`;
  let re = cache.get(key);
  if (!re) {
    re = new RegExp(job.source, `g${job.flags}`);
    cache.set(key, re);
  }
  const bytes = Buffer.from(job.region.buffer, job.region.byteOffset, job.region.byteLength);
  const n = bytes.length;
  // the position after a final `\n` starts no line, so nothing matches there
  const deadEnd = n === 0 || bytes[n - 1] === 10;
  const starts: number[] = [];
  const ends: number[] = [];
  let count = 0;
  const maxRecords = job.maxRecords;
  // decoded lazily: with a literal prefilter most regions never need it
  let str = "";
  let identity = true; // every character came from exactly one byte
  let decoded = false;
  const decode = (): void => {
    str = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    identity = str.length === n;
    decoded = true;
  };

  // Monotone char <-> byte cursor that decodes the way TextDecoder does
  // (WHATWG: one U+FFFD per maximal ill-formed subsequence).
  let mb = 0;
  let mc = 0;
  const step = (i: number): number => {
    const b0 = bytes[i]!;
    if (b0 < 0x80) return 2; // 1 byte, 1 unit, encoded as (bytes << 1) | (units - 1)
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) need = 1;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      if (b0 === 0xe0) lo = 0xa0;
      else if (b0 === 0xed) hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      if (b0 === 0xf0) lo = 0x90;
      else if (b0 === 0xf4) hi = 0x8f;
    } else return 2;
    for (let k = 1; k <= need; k++) {
      const b = i + k < n ? bytes[i + k]! : -1;
      if (b < lo || b > hi) return k << 1;
      lo = 0x80;
      hi = 0xbf;
    }
    return ((need + 1) << 1) | (need === 3 ? 1 : 0);
  };
  const rewind = (): void => {
    mb = 0;
    mc = 0;
  };
  const toByte = (c: number): number => {
    if (identity) return c;
    if (c < mc) rewind();
    while (mc < c) {
      const s = step(mb);
      mb += s >> 1;
      mc += (s & 1) + 1;
    }
    return mb;
  };
  const toChar = (b: number): number => {
    if (identity) return b;
    if (b < mb) rewind();
    while (mb < b) {
      const s = step(mb);
      mb += s >> 1;
      mc += (s & 1) + 1;
    }
    return mc;
  };
  const advance = (text: string, at: number): number => {
    const unit = text.charCodeAt(at);
    return unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length ? at + 2 : at + 1;
  };

  /** All matches in `text` (the whole region, or one line starting at char `base`). */
  const scanText = (text: string, base: number): void => {
    const regex = re!;
    regex.lastIndex = 0;
    for (;;) {
      const m = regex.exec(text);
      if (m === null) return;
      const cs = m.index;
      const ce = cs + m[0].length;
      const bs = toByte(base + cs);
      if (bs === n && deadEnd) return;
      if (count < maxRecords) {
        starts.push(bs);
        ends.push(toByte(base + ce));
      }
      count++;
      if (ce === cs) {
        if (ce >= text.length) return;
        regex.lastIndex = advance(text, ce);
      }
    }
  };

  /**
   * One line. Until something forces the whole region to be decoded, a line
   * is decoded alone: when every character came from one byte (ASCII, the
   * usual case), its char offsets are byte offsets from its start, and a
   * large file with a few candidate lines is never decoded whole.
   */
  const scanLineAt = (lineStartByte: number): void => {
    if (!decoded) {
      let lineEnd = bytes.indexOf(10, lineStartByte);
      if (lineEnd < 0) lineEnd = n;
      const line = bytes.toString("latin1", lineStartByte, lineEnd);
      if (!/[^\x00-\x7f]/.test(line)) {
        // nothing decoded yet, so char offsets are byte offsets (identity): base is the line's first byte
        scanText(line, lineStartByte);
        return;
      }
      decode();
    }
    const cls = toChar(lineStartByte);
    let cle = str.indexOf("\n", cls);
    if (cle < 0) cle = str.length;
    scanText(str.slice(cls, cle), cls);
  };


  const fold = job.fold;
  let folded = false;
  if (fold && !fold.guards.some((g) => bytes.indexOf(Buffer.from(g)) >= 0)) {
    const fkey = `gi/${fold.source}`;
    let fre = cache.get(fkey);
    if (!fre) {
      fre = new RegExp(fold.source, "gi");
      cache.set(fkey, fre);
    }
    const text = bytes.toString("latin1", 0, n);
    fre.lastIndex = 0;
    for (let m = fre.exec(text); m !== null; m = fre.exec(text)) {
      if (count < maxRecords) {
        starts.push(m.index);
        ends.push(m.index + m[0].length);
      }
      count++;
    }
    folded = true;
  }

  const literals = job.literals;
  const next = literals ? literals.map(() => -2) : [];
  /** First byte offset >= pos where a required literal occurs, or -1. */
  const nextLiteral = (pos: number): number => {
    let p = -1;
    for (let k = 0; k < literals!.length; k++) {
      if (next[k]! !== -1 && next[k]! < pos) next[k] = bytes.indexOf(literals![k]!, pos);
      const q = next[k]!;
      if (q >= 0 && (p < 0 || q < p)) p = q;
    }
    return p;
  };
  const lineStartOf = (p: number): number => (p === 0 ? 0 : bytes.lastIndexOf(10, p - 1) + 1);
  const required = job.required ?? [];
  const reqNext = required.map((set) => set.map(() => -2));
  /** The line [ls, le) holds a string of every required set (lines are asked about in order). */
  const lineHasAll = (ls: number, le: number): boolean =>
    required.every((set, i) =>
      set.some((lit, j) => {
        let q = reqNext[i]![j]!;
        if (q !== -1 && q < ls) reqNext[i]![j] = q = bytes.indexOf(lit, ls);
        return q >= 0 && q + lit.length <= le;
      }),
    );

  if (folded) {
    // done above
  } else if (literals !== null && (job.perLine || required.length > 0)) {
    // search each line holding a literal (and the required sets) alone: lookarounds must not
    // see past the line, and only such lines can match
    let pos = 0;
    while (pos < n) {
      const p = nextLiteral(pos);
      if (p < 0) break;
      const lineEnd = bytes.indexOf(10, p);
      const ls = lineStartOf(p);
      if (lineHasAll(ls, lineEnd < 0 ? n : lineEnd)) scanLineAt(ls);
      if (lineEnd < 0) break;
      pos = lineEnd + 1;
    }
  } else if (literals !== null) {
    // one pass over the region, restarted at the line of the next literal after each match,
    // so lines without one are skipped and the region is decoded only if some line has one
    let pos = 0;
    const regex = re;
    while (pos <= n) {
      const p = nextLiteral(pos);
      if (p < 0) break;
      if (!decoded) decode();
      regex.lastIndex = toChar(Math.max(pos, lineStartOf(p)));
      const m = regex.exec(str);
      if (m === null) break;
      const cs = m.index;
      const ce = cs + m[0].length;
      const bs = toByte(cs);
      if (bs === n && deadEnd) break;
      const be = toByte(ce);
      if (count < maxRecords) {
        starts.push(bs);
        ends.push(be);
      }
      count++;
      pos = ce > cs ? be : toByte(advance(str, ce));
    }
  } else if (job.perLine) {
    decode();
    let cls = 0;
    while (cls < str.length) {
      let cle = str.indexOf("\n", cls);
      if (cle < 0) cle = str.length;
      scanText(str.slice(cls, cle), cls);
      cls = cle + 1;
    }
  } else {
    decode();
    scanText(str, 0);
  }
  if (!job.wantLines) return { starts, ends, count };
  const lines: number[] = [];
  let line = 0;
  let nl = bytes.indexOf(10);
  for (const s of starts) {
    while (nl >= 0 && nl < s) {
      line++;
      nl = bytes.indexOf(10, nl + 1);
    }
    lines.push(line);
  }
  return { starts, ends, count, lines };
}
