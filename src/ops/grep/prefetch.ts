/**
 * A worktree grep's read ahead: the files of the index listing go through
 * the query's literal filter on the native module's threads while `git
 * status` is still running, so the walk no longer comes before the reading.
 * When the walk is in, the engine asks the read ahead about each candidate it
 * covers (a clean tracked file the listing named): a binary file, or a text
 * file without the required literals (with its SHA-256 when one was asked
 * for), is settled from here; any other (may match, too large, unreadable,
 * gone) is read again the usual way, which decides everything about it, so
 * the read ahead can only save work, never change an answer.
 *
 * A query whose literals are common (a quarter or more of the first files
 * may match) gains nothing from reading twice: the read ahead stops and the
 * engine reads the rest itself.
 */
import { compareUtf8 } from "../../core/byte-order";
import { joinPaths, type NativeJob, type NativeModule } from "../../repo/native";
import { nativeLiterals, type ReadFilter } from "./reader-pool";
import { RACY_MARGIN_MS } from "./hash-memory";

/** A file the read ahead settled, as the engine records it: binary, or searched without a match. */
export type Settled = { binary: true; matches: []; total: 0 } | { binary: false; matches: []; total: 0; sha256?: string };

const BINARY: Settled = { binary: true, matches: [], total: 0 };
const NO_MATCH: Settled = { binary: false, matches: [], total: 0 };

const KIND_BINARY = 0;
const KIND_SKIP = 1;
const KIND_BYTES = 2;
const UNKNOWN = 255;
/** Files seen before judging whether the literals are rare enough for a read ahead to pay. */
const JUDGE_AFTER = 4096;
const MAX_PASSING_SHARE = 0.25;
/** How often follow() collects what was read. */
const FOLLOW_MS = 2;

export class GrepPrefetch {
  private readonly kinds: Uint8Array;
  /** where indexOf looks next: candidates come in walk order, as the entries do */
  private cursor = 0;
  private readonly digests = new Map<number, string>();
  private job: NativeJob | null;
  private taken = 0;
  private passing = 0;
  /** by entry index, in the order first asked: ascending while `ordered` (the engine asks in walk order) */
  private readonly waiters = new Map<number, (() => void)[]>();
  private ordered = true;
  private lastWaiter = -1;
  /** a watch is set: the module calls onWake when the first unfinished file is done */
  private armed = false;
  /** hears of each file that may match, as soon as the read ahead knows (see follow) */
  private onMayMatch: ((path: string, size: number) => void) | null = null;
  private following: ReturnType<typeof setTimeout> | null = null;

  private constructor(
    private readonly m: NativeModule,
    private readonly paths: readonly string[],
    job: NativeJob,
    /** files without the literals come with their SHA-256 */
    private readonly hash: boolean,
  ) {
    this.job = job;
    this.kinds = new Uint8Array(paths.length).fill(UNKNOWN);
    m.notify(job, () => this.onWake());
  }

  /**
   * Starts reading `paths` (repo-relative, in walk order, under `root`)
   * through `filter`, hashing each text file without the literals when
   * `hash`; null when the filter has no literal to try.
   */
  static start(m: NativeModule, root: string, paths: readonly string[], hash: boolean, filter: ReadFilter, sniff: number): GrepPrefetch | null {
    const { literals, folded } = nativeLiterals(filter);
    if (paths.length === 0 || (literals === null && filter.required.length === 0)) return null;
    const n = paths.length;
    const needleBytes = [...(literals ?? []), ...filter.required.flat()].reduce((sum, l) => sum + l.length, 0);
    const job = m.scanStart(joinPaths(paths), n, hash ? 1 : 0, null, filter.limit, sniff, RACY_MARGIN_MS, literals, filter.required, needleBytes, false, root, folded);
    return new GrepPrefetch(m, paths, job, hash);
  }

  /**
   * The entry index of a path the read ahead covers. Paths must be asked in
   * walk order (UTF-8 byte order), as the engine takes candidates: a merge
   * with the entries, not a lookup.
   */
  indexOf(path: string): number | undefined {
    const { paths } = this;
    if (this.cursor > 0 && paths[this.cursor - 1] === path) return this.cursor - 1;
    while (this.cursor < paths.length) {
      const at = paths[this.cursor] as string;
      if (at === path) return this.cursor++;
      if (compareUtf8(at, path) > 0) return undefined;
      this.cursor++;
    }
    return undefined;
  }

  /**
   * Entry `index` as the engine takes it, when the read ahead settled it (a
   * binary file; a text file without the literals, with its SHA-256 when
   * `hash`); null when the engine must read it itself. `done` runs at once
   * when this is known, else once the read finishes.
   */
  outcome(index: number, hash: boolean, done: (settled: Settled | null) => void): void {
    this.collect();
    if (this.decided(index)) return done(this.settled(index, hash));
    let list = this.waiters.get(index);
    if (!list) {
      this.waiters.set(index, (list = []));
      if (index < this.lastWaiter) this.ordered = false;
      this.lastWaiter = index;
    }
    list.push(() => done(this.settled(index, hash)));
    this.arm();
  }

  /** Entry `index` if the read ahead has settled it by now; null when unknown yet or to be read. */
  settledNow(index: number, hash: boolean): Settled | null {
    if (this.kinds[index] === UNKNOWN) this.collect();
    return this.settled(index, hash);
  }

  /**
   * Reports each file that may match to `onMayMatch` as soon as it is read,
   * without waiting for anyone to ask: the results are collected every few
   * milliseconds until the read ahead is done.
   */
  follow(onMayMatch: (path: string, size: number) => void): void {
    this.onMayMatch = onMayMatch;
    const tick = () => {
      this.following = null;
      this.collect();
      this.wakeAll();
      if (this.job !== null) this.following = setTimeout(tick, FOLLOW_MS);
    };
    tick();
  }

  /** Stops the reads not started yet; entries not read answer "read". Idempotent. */
  release(): void {
    if (this.following !== null) clearTimeout(this.following);
    this.following = null;
    if (this.job === null) return;
    this.m.release(this.job);
    this.job = null;
    this.wakeAll();
  }

  /** Whether entry `index` is read or never will be. */
  private decided(index: number): boolean {
    return this.kinds[index] !== UNKNOWN || this.job === null;
  }

  private settled(index: number, hash: boolean): Settled | null {
    const kind = this.kinds[index];
    if (kind === KIND_BINARY) return BINARY;
    if (kind !== KIND_SKIP) return null;
    if (!hash) return NO_MATCH;
    const sha256 = this.digests.get(index);
    return sha256 === undefined ? null : { binary: false, matches: [], total: 0, sha256 };
  }

  /** Waits for the first unfinished file (everything before it is collected), unless a wait is set. */
  private arm(): void {
    while (!this.armed && this.job !== null && this.waiters.size > 0) {
      if (!this.m.watch(this.job, this.taken)) {
        this.armed = true;
        return;
      }
      this.collect();
      this.wakeAll();
    }
  }

  private onWake(): void {
    this.armed = false;
    this.collect();
    this.wakeAll();
    this.arm();
  }

  /** Takes the finished prefix of records. */
  private collect(): void {
    if (this.job === null) return;
    const ready = this.m.ready(this.job);
    if (ready <= this.taken) return;
    const L = this.m.layout;
    if (this.hash) {
      // every file without the literals comes with its digest: take whole records
      const [records] = this.m.scanCollect(this.job, this.taken, ready);
      for (let i = this.taken; i < ready; i++) {
        const at = (i - this.taken) * L.SCAN_RECORD;
        const kind = records[at + L.SR_KIND] as number;
        this.kinds[i] = kind;
        if (kind === KIND_BYTES) this.mayMatch(i, records.readDoubleLE(at + L.SR_STAMP + 16));
        if (kind === KIND_SKIP && records[at + L.SR_DIGEST]) this.digests.set(i, records.toString("hex", at + L.SR_SHA256, at + L.SR_SHA256 + 32));
      }
    } else {
      // the kinds straight into place, and the few records of files that may match
      const passing = this.m.scanKinds(this.job, this.taken, ready, this.kinds);
      let k = 0;
      for (let i = this.taken; i < ready && k < passing.length; i++) {
        if (this.kinds[i] !== KIND_BYTES) continue;
        this.mayMatch(i, passing.readDoubleLE(k + L.SR_STAMP + 16));
        k += L.SCAN_RECORD;
      }
    }
    this.taken = ready;
    if (ready === this.paths.length) this.release();
    else if (ready >= JUDGE_AFTER && this.passing > MAX_PASSING_SHARE * ready) this.release();
  }

  private mayMatch(index: number, size: number): void {
    this.passing++;
    this.onMayMatch?.(this.paths[index] as string, size);
  }

  /**
   * Wakes the waiters of every decided entry. Entries are decided in index order (the finished prefix), so while
   * the waiters are in ascending order the first undecided one ends the walk: a query with thousands of files
   * waiting (a case-insensitive search the index narrows little) would otherwise look at all of them on every
   * wake and tick.
   */
  private wakeAll(): void {
    for (const [index, list] of this.waiters) {
      if (!this.decided(index)) {
        if (this.ordered) break;
        continue;
      }
      this.waiters.delete(index);
      for (const wake of list) wake();
    }
  }
}
