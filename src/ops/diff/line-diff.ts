/**
 * Line-level diff of two files given as lines (byte strings with their
 * terminators), computed with diff-match-patch in line mode: each distinct
 * line becomes one UTF-16 code unit (dmp's linesToChars idea), diff_main
 * diffs those strings, and the result is read back by position
 * (charsToLines).
 *
 * What keeps it fast and deterministic on large files:
 * - common leading and trailing lines are stripped first;
 * - lines found on one side only are set aside before diffing, as git's
 *   xdiff does: they can never be part of an equality, so the longest
 *   common subsequence is unchanged, and two unrelated files cost nothing;
 * - a large changed region (more lines than one dmp call handles well, or
 *   more distinct shared lines than there are code units) is first cut at
 *   patience-diff anchors: lines that occur exactly once on each side, in
 *   the same order. Each piece between anchors is diffed on its own;
 * - instead of dmp's wall-clock Diff_Timeout (which would make the output
 *   depend on the machine's speed), bisection gets a fixed budget of work
 *   (WorkBudget); a sub-problem that exhausts it becomes one replacement,
 *   which is still a correct diff, just not a minimal one. Only large,
 *   highly repetitive rewrites (few lines unique to the region) get there.
 *
 * We encode lines ourselves rather than call dmp's diff_linesToChars_, which
 * lumps everything after its 40,000th distinct line into one "line".
 */
import DiffMatchPatch from "diff-match-patch";
import type { LineChange } from "../../core/line-change";


const MAX_CODES = 0x10000;
/** Above this many lines per side, a region is cut at anchors before dmp sees it. */
const DIRECT_LINES = 2_000;
/** Diagonal steps of Myers' bisection allowed for one whole diff, and for one region of it. */
const TOTAL_BUDGET = 8_000_000;
const REGION_BUDGET = 2_000_000;

/** A byte string as lines, each with its "\n" (the last one may lack it). */
export function splitLines(s: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", from)) {
    out.push(s.slice(from, i + 1));
    from = i + 1;
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
}

export function lineChanges(a: string[], b: string[]): LineChange[] {
  const differ = new LineDiffer(a, b);
  differ.diff(0, a.length, 0, b.length);
  return differ.changes();
}

/**
 * Works on line ids (one Map pass over both files), so every later step
 * compares integers. Per-region bookkeeping uses generation stamps instead
 * of fresh sets, so a region costs time in proportion to its own size.
 */
class LineDiffer {
  private readonly idsOld: Int32Array;
  private readonly idsNew: Int32Array;
  /** Per line id: generation stamp, count and last position, for the region being diffed. */
  private readonly stampOld: Int32Array;
  private readonly countOld: Int32Array;
  private readonly stampNew: Int32Array;
  private readonly countNew: Int32Array;
  private readonly posNew: Int32Array;
  private readonly code: Int32Array;
  private generation = 0;
  /** Matched line pairs, in increasing order on both sides. */
  private readonly matchOld: number[] = [];
  private readonly matchNew: number[] = [];
  private readonly dmp = new DiffMatchPatch();
  private readonly budget: WorkBudget;

  constructor(a: string[], b: string[]) {
    const ids = new Map<string, number>();
    const idsOf = (lines: string[]) => {
      const out = new Int32Array(lines.length);
      for (let i = 0; i < lines.length; i++) {
        let id = ids.get(lines[i]!);
        if (id === undefined) ids.set(lines[i]!, (id = ids.size));
        out[i] = id;
      }
      return out;
    };
    this.idsOld = idsOf(a);
    this.idsNew = idsOf(b);
    const n = ids.size;
    this.stampOld = new Int32Array(n);
    this.countOld = new Int32Array(n);
    this.stampNew = new Int32Array(n);
    this.countNew = new Int32Array(n);
    this.posNew = new Int32Array(n);
    this.code = new Int32Array(n);
    this.dmp.Diff_Timeout = 0;
    this.budget = new WorkBudget(this.dmp, TOTAL_BUDGET);
  }

  private match(i: number, j: number, n = 1): void {
    for (let k = 0; k < n; k++) {
      this.matchOld.push(i + k);
      this.matchNew.push(j + k);
    }
  }

  diff(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const { idsOld, idsNew } = this;
    let prefix = 0;
    while (aLo + prefix < aHi && bLo + prefix < bHi && idsOld[aLo + prefix] === idsNew[bLo + prefix]) prefix++;
    this.match(aLo, bLo, prefix);
    aLo += prefix;
    bLo += prefix;
    let suffix = 0;
    while (aLo < aHi - suffix && bLo < bHi - suffix && idsOld[aHi - 1 - suffix] === idsNew[bHi - 1 - suffix]) suffix++;
    aHi -= suffix;
    bHi -= suffix;
    if (aLo < aHi && bLo < bHi) this.diffMiddle(aLo, aHi, bLo, bHi);
    this.match(aHi, bHi, suffix);
  }

  private diffMiddle(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const { idsOld, idsNew, stampOld, countOld, stampNew, countNew, posNew } = this;
    const gen = ++this.generation;
    for (let i = aLo; i < aHi; i++) {
      const id = idsOld[i]!;
      if (stampOld[id] !== gen) (stampOld[id] = gen), (countOld[id] = 0);
      countOld[id]!++;
    }
    let shared = 0;
    const keptNew: number[] = [];
    for (let j = bLo; j < bHi; j++) {
      const id = idsNew[j]!;
      if (stampOld[id] !== gen) continue;
      if (stampNew[id] !== gen) (stampNew[id] = gen), (countNew[id] = 0), shared++;
      countNew[id]!++;
      posNew[id] = j;
      keptNew.push(j);
    }
    if (shared === 0) return;
    const keptOld: number[] = [];
    for (let i = aLo; i < aHi; i++) if (stampNew[idsOld[i]!] === gen) keptOld.push(i);
    const direct = shared <= MAX_CODES && keptOld.length <= DIRECT_LINES && keptNew.length <= DIRECT_LINES;
    if (!direct) {
      const anchors = this.patienceAnchors(keptOld);
      if (anchors.length > 0) {
        let i = aLo;
        let j = bLo;
        for (const [ai, bj] of anchors) {
          this.diff(i, ai, j, bj);
          this.match(ai, bj);
          i = ai + 1;
          j = bj + 1;
        }
        this.diff(i, aHi, j, bHi);
        return;
      }
      if (shared > MAX_CODES) return;
    }
    this.diffKept(keptOld, keptNew, gen);
  }

  /**
   * Patience anchors: lines occurring exactly once on each side of the
   * region, reduced to the longest run in order on both sides (longest
   * increasing subsequence, O(n log n)).
   */
  private patienceAnchors(keptOld: number[]): [number, number][] {
    const pairs: [number, number][] = [];
    for (const i of keptOld) {
      const id = this.idsOld[i]!;
      if (this.countOld[id] === 1 && this.countNew[id] === 1) pairs.push([i, this.posNew[id]!]);
    }
    const tails: number[] = [];
    const prev = new Array<number>(pairs.length);
    for (let k = 0; k < pairs.length; k++) {
      const v = pairs[k]![1];
      let lo = 0;
      let hi = tails.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (pairs[tails[mid]!]![1] < v) lo = mid + 1;
        else hi = mid;
      }
      prev[k] = lo > 0 ? tails[lo - 1]! : -1;
      tails[lo] = k;
    }
    const out: [number, number][] = [];
    for (let k = tails.length > 0 ? tails[tails.length - 1]! : -1; k >= 0; k = prev[k]!) out.push(pairs[k]!);
    return out.reverse();
  }

  /** dmp over the lines present on both sides, one code unit per distinct line. */
  private diffKept(keptOld: number[], keptNew: number[], gen: number): void {
    const { code, countOld } = this;
    let next = 0;
    // countOld doubles as the "code assigned" stamp: negative = -(gen) once coded.
    const encode = (ids: Int32Array, kept: number[]): string => {
      const units = new Array<number>(kept.length);
      for (let k = 0; k < kept.length; k++) {
        const id = ids[kept[k]!]!;
        if (countOld[id] !== -gen) (countOld[id] = -gen), (code[id] = next++);
        units[k] = code[id]!;
      }
      let out = "";
      for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode(...units.slice(i, i + 8192));
      return out;
    };
    const chars1 = encode(this.idsOld, keptOld);
    const chars2 = encode(this.idsNew, keptNew);
    const diffs = this.dmp.diff_main(chars1, chars2, false, this.budget.region(REGION_BUDGET));
    let ri = 0;
    let rj = 0;
    for (const [op, text] of diffs) {
      const n = text.length;
      if (op === DiffMatchPatch.DIFF_EQUAL) {
        for (let k = 0; k < n; k++) this.match(keptOld[ri + k]!, keptNew[rj + k]!);
        ri += n;
        rj += n;
      } else if (op === DiffMatchPatch.DIFF_DELETE) ri += n;
      else rj += n;
    }
  }

  /** Everything between two matched pairs is a change. */
  changes(): LineChange[] {
    const out: LineChange[] = [];
    let nextOld = 0;
    let nextNew = 0;
    const gapUntil = (oldAt: number, newAt: number) => {
      if (oldAt > nextOld || newAt > nextNew) out.push({ oldStart: nextOld, oldEnd: oldAt, newStart: nextNew, newEnd: newAt });
    };
    for (let k = 0; k < this.matchOld.length; k++) {
      gapUntil(this.matchOld[k]!, this.matchNew[k]!);
      nextOld = this.matchOld[k]! + 1;
      nextNew = this.matchNew[k]! + 1;
    }
    gapUntil(this.idsOld.length, this.idsNew.length);
    return out;
  }
}

/**
 * dmp checks `Date.now() > deadline` once per round d of a bisection, and
 * round d walks about 4d + 2 diagonals. The deadline given to dmp counts
 * those steps (a bisection restarts at d = 0, and finishes before its
 * sub-problems start) and turns from +Infinity to -Infinity when the
 * region's or the whole diff's budget is spent. The limit measures work, not
 * time, so the output is the same on any machine, and one hard region cannot
 * use up the budget of all the others.
 */
class WorkBudget {
  private round = 0;
  private regionLeft = 0;

  constructor(
    dmp: DiffMatchPatch,
    private totalLeft: number,
  ) {
    const bisect = dmp.diff_bisect_.bind(dmp);
    dmp.diff_bisect_ = (text1: string, text2: string, deadline: number) => {
      this.round = 0;
      return bisect(text1, text2, deadline);
    };
  }

  /** A deadline for one dmp call, allowed at most `steps` of the remaining total. */
  region(steps: number): number {
    this.regionLeft = Math.min(steps, this.totalLeft);
    return {
      valueOf: () => {
        const cost = 4 * this.round++ + 2;
        this.regionLeft -= cost;
        this.totalLeft -= cost;
        return this.regionLeft >= 0 ? Infinity : -Infinity;
      },
    } as unknown as number;
  }
}
