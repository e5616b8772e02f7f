/**
 * A counting semaphore that serves waiters in arrival order. It bounds work
 * in flight (a server's tool calls, git child processes): work beyond the
 * limit waits for a slot instead of starting at once, which is what ran a
 * flooded server out of file descriptors.
 *
 * A waiter whose AbortSignal fires leaves the queue and never gets a slot
 * (its acquire rejects with the signal's reason).
 */
export class Semaphore {
  private held = 0;
  /** waiters in arrival order; `head` is the first still in the list */
  private waiters: (Waiter | null)[] = [];
  private head = 0;
  private waiting = 0;
  private releaseWatchers: (() => void)[] = [];
  private idleWatchers: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a semaphore needs a limit of at least 1, not ${limit}`);
  }

  /** Slots held now. */
  get inUse(): number {
    return this.held;
  }

  /** Waiters queued now. */
  get queued(): number {
    return this.waiting;
  }

  /** Waits for a slot; the returned function gives it back (once: later calls do nothing). */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held < this.limit && this.waiting === 0) {
      this.held++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve: () => resolve(this.releaser()), reject, signal, onAbort: null, index: this.waiters.length };
      if (signal) {
        waiter.onAbort = () => this.leave(waiter);
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.waiting++;
    });
  }

  /** Runs `fn` holding a slot. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Resolves at the next release of a slot (something finished: descriptors and memory it held are free again). */
  nextRelease(): Promise<void> {
    return new Promise((resolve) => this.releaseWatchers.push(resolve));
  }

  /** Resolves once no slot is held and nobody waits. */
  idle(): Promise<void> {
    if (this.held === 0 && this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWatchers.push(resolve));
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.release();
    };
  }

  private release(): void {
    const watchers = this.releaseWatchers;
    this.releaseWatchers = [];
    const next = this.shift();
    if (next) next.resolve(); // the slot passes straight to the next waiter
    else this.held--;
    for (const w of watchers) w();
    if (this.held === 0 && this.waiting === 0) {
      const idle = this.idleWatchers;
      this.idleWatchers = [];
      for (const w of idle) w();
    }
  }

  private shift(): Waiter | null {
    while (this.head < this.waiters.length) {
      const w = this.waiters[this.head];
      this.waiters[this.head++] = null;
      if (!w) continue;
      this.waiting--;
      if (w.signal && w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      this.compact();
      return w;
    }
    return null;
  }

  private leave(w: Waiter): void {
    if (this.waiters[w.index] !== w) return;
    this.waiters[w.index] = null;
    this.waiting--;
    w.reject(w.signal?.reason);
    if (this.held === 0 && this.waiting === 0) {
      const idle = this.idleWatchers;
      this.idleWatchers = [];
      for (const i of idle) i();
    }
  }

  /** Drops the consumed front of the list now and then (indexes of waiters left are kept valid). */
  private compact(): void {
    if (this.head < 1024 || this.head * 2 < this.waiters.length) return;
    this.waiters = this.waiters.slice(this.head);
    this.waiters.forEach((w, i) => {
      if (w) w.index = i;
    });
    this.head = 0;
  }
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
  index: number;
}
