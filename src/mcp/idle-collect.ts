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
 */
export const IDLE_COLLECT_MS = 250;

export class IdleCollector {
  private running = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** a call ended since the last collection */
  private dirty = false;

  constructor(
    private readonly idleMs = IDLE_COLLECT_MS,
    private readonly collect: () => void = () => Bun.gc(true),
  ) {}

  /** A call starts: no collection while it runs. */
  begin(): void {
    this.running++;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A call ended: collect once the server has been idle for idleMs. */
  end(): void {
    this.running = Math.max(0, this.running - 1);
    this.settled();
  }

  /** Background work ended (it left garbage as a call does): collect once no call has run for idleMs. */
  settled(): void {
    this.dirty = true;
    if (this.running > 0) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running > 0 || !this.dirty) return;
      this.dirty = false;
      this.collect();
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
  const collector = new IdleCollector(undefined, () => {
    Bun.gc(true);
    trimNativeMemory();
    pool.kickIndexers();
    pool.primeStatuses();
  });
  pool.onIndexed = () => collector.settled();
  return collector;
}
