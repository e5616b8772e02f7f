import { trimNativeMemory } from "../repo/native";
import type { WorkspacePool } from "./roots";

/**
 * A server's memory between calls. A whole-tree call (a grep over 100k files)
 * leaves tens of MB of garbage, and the collector, left to itself, grows the
 * heap before it collects: a server answering such greps one after another
 * went from 220 to 330-390 MB resident. Once no call has run for a short
 * while, one full collection (about 20 ms on the bench tree) brings the heap
 * back to what is live, so the next call starts from there (the same server
 * then stayed at 198 MB between calls and peaked at 275 MB).
 *
 * The same once background work that allocated a lot has ended (a pass of
 * the grep index: about 40 MB of the heap and 20 MB of the native threads'
 * C heap stayed resident after the bench tree's build until the next
 * collection), and the C heap's free memory is given back too.
 *
 * The timer never keeps the process alive, and a call that starts cancels it.
 *
 * A heavy call (a grep that read much of the tree) has its garbage collected
 * at once instead (`collectGarbage`), and at the latest when the next call
 * starts: calls that come one after another would otherwise each allocate on
 * top of the last one's garbage. While a worktree call began with a `git
 * status`, the collector ran in that wait; a call that finds the tree
 * unchanged runs no git (status-watch.ts), and a server answering greps back
 * to back peaked at 461 MB instead of 373. The idle work that follows does
 * not collect again unless something left garbage since.
 *
 * Heavy is what the calls did, not how long they took (`WorkMeter`): the
 * JavaScript thread's CPU time (HEAVY_CALL_CPU_MS or more) or the process's
 * growth in resident memory (HEAVY_CALL_BYTES or more) while calls ran. A
 * one-file write on the release trees takes 110-120 ms, most of it waiting
 * for git's status, for 13-18 ms of the thread's CPU and no growth; timed by
 * the clock it counted as heavy, and a read sent right after it waited for
 * the collection (18-23 ms against 3-5 ms). A snapshot grep `-i` over the
 * same tree: 180-210 ms of CPU and 94-107 MB of growth.
 */
export const IDLE_COLLECT_MS = 250;
export const HEAVY_CALL_CPU_MS = 100;
export const HEAVY_CALL_BYTES = 32 * 1024 * 1024;

/** What the process has done so far: the calling thread's CPU time (ms) and the resident memory (bytes). */
export interface Work {
  cpuMs: number;
  residentBytes: number;
}

export type WorkMeter = () => Work;

/** Whether the runtime tells one thread's CPU time (set off for good the first time it cannot). */
let threadCpu = typeof process.threadCpuUsage === "function";

/** The JavaScript thread's CPU time (the whole process's where the runtime cannot tell one thread's) and the resident set. */
export const processWork: WorkMeter = () => {
  let cpu: NodeJS.CpuUsage | null = null;
  if (threadCpu) {
    try {
      cpu = process.threadCpuUsage();
    } catch {
      threadCpu = false;
    }
  }
  cpu ??= process.cpuUsage();
  return { cpuMs: (cpu.user + cpu.system) / 1000, residentBytes: process.memoryUsage.rss() };
};

export class IdleCollector {
  private running = 0;
  /** the work done when the running calls started (the first of them) */
  private busySince: Work = { cpuMs: 0, residentBytes: 0 };
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** a call ended since the last collection */
  private dirty = false;
  /** a heavy call ended and its garbage is not collected yet */
  private owed: ReturnType<typeof setImmediate> | null = null;
  /** the garbage was collected since the last call ended or background work settled (the idle work need not again) */
  private fresh = false;

  /**
   * `collect`: the idle work, told whether the garbage was collected since anything last left some;
   * `collectGarbage`: a collection alone, after a heavy call; `meter`: the work done so far, to tell a heavy call.
   */
  constructor(
    private readonly idleMs = IDLE_COLLECT_MS,
    private readonly collect: (fresh: boolean) => void = (fresh) => void (fresh || Bun.gc(true)),
    private readonly collectGarbage: () => void = () => Bun.gc(true),
    private readonly meter: WorkMeter = processWork,
  ) {}

  private collectNow(): void {
    this.collectGarbage();
    this.fresh = true;
  }

  /** A call starts: no collection while it runs; what a heavy call left is collected first. */
  begin(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.owed !== null) {
      clearImmediate(this.owed);
      this.owed = null;
      this.collectNow();
    }
    // measured after the owed collection: its work is not the new call's
    if (this.running++ === 0) this.busySince = this.meter();
  }

  /** A call ended: collect once the server has been idle for idleMs, and at once after a heavy call. */
  end(): void {
    this.running = Math.max(0, this.running - 1);
    if (this.running === 0 && this.owed === null && this.wasHeavy()) {
      this.owed = setImmediate(() => {
        this.owed = null;
        this.collectNow();
      });
      this.owed.unref?.();
    }
    this.settled();
  }

  /** Whether the calls that just ended (from the first one's start) worked the thread or grew the process enough to collect at once. */
  private wasHeavy(): boolean {
    const now = this.meter();
    return now.cpuMs - this.busySince.cpuMs >= HEAVY_CALL_CPU_MS || now.residentBytes - this.busySince.residentBytes >= HEAVY_CALL_BYTES;
  }

  /** Background work ended (it left garbage as a call does): collect once no call has run for idleMs. */
  settled(): void {
    this.dirty = true;
    this.fresh = false;
    if (this.running > 0) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running > 0 || !this.dirty) return;
      this.dirty = false;
      this.collect(this.fresh);
    }, this.idleMs);
    this.timer.unref?.();
  }
}

/**
 * A server's idle work: the heap collected (the C heap's free memory given
 * back), every open workspace's grep index brought up to date in the
 * background, and git's untracked cache built in a new copy of git's index
 * (roots.ts, primeStatuses); a pass of an index that indexed something asks
 * for the next idle collection.
 */
export function idleCollector(pool: WorkspacePool): IdleCollector {
  const collectGarbage = () => {
    Bun.gc(true);
    trimNativeMemory();
  };
  const collector = new IdleCollector(
    undefined,
    (fresh) => {
      if (!fresh) collectGarbage();
      pool.kickIndexers();
      pool.primeStatuses();
    },
    collectGarbage,
  );
  pool.onIndexed = () => collector.settled();
  return collector;
}
