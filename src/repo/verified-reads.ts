/**
 * Files read on worker threads and kept only when they hold exactly the bytes
 * expected (their size, and the SHA-256 their blob id names): the reads an
 * export makes of the work tree where the native module is absent (the darwin
 * executables). There every file was opened, stat'ed, read and closed through
 * four promises of the JavaScript thread, and hashed on it, while that thread
 * also builds, hashes and writes the bundle: 100,000 files took 3.1 s of
 * opens and reads and 1.4 s of hashing there. A worker does the same
 * synchronously, a batch at a time, and hands each verified file's memory
 * over (transferred, not copied).
 *
 * A worker that fails answers null for every file it held: the caller reads
 * those from the store, which verifies them its own way.
 */
import { availableParallelism } from "node:os";
import { workerEntry } from "./worker-entry";
import { startWorker } from "./worker-start";
import type { VerifiedReadBatch, VerifiedReadItem } from "./verified-read-worker";

export type { VerifiedReadItem } from "./verified-read-worker";

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Not hex: no file's digest. */
const NO_FILE_HAS = "-".repeat(64);

interface Slot {
  worker: Worker;
  /** batches sent and not answered, by batch number */
  pending: Map<number, { count: number; resolve: (found: (Uint8Array | null)[]) => void }>;
  broken: boolean;
}

/** Workers for a machine: one core is the caller's (it writes and hashes what the workers read), at most eight. */
export function verifiedReadWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), 9) - 1);
}

/**
 * A batch in two strings and an array (a path holds no NUL): the structured clone of 256 objects a batch was 7%
 * of a profiled export's JavaScript thread.
 */
function packBatch(batch: number, items: VerifiedReadItem[]): VerifiedReadBatch {
  // each digest takes 64 characters of the joined string: one of another length would shift the rest onto other
  // files, so it is sent as a digest no file has (that file then answers null)
  const sha256 = items.map((it) => (SHA256_HEX.test(it.sha256) ? it.sha256 : NO_FILE_HAS)).join("");
  return { batch, paths: items.map((it) => it.abs).join("\0"), sizes: Float64Array.from(items, (it) => it.size), sha256 };
}

export class VerifiedReads {
  private readonly slots: Slot[] = [];
  private batch = 0;
  private closed = false;

  constructor(private readonly count = verifiedReadWorkers()) {}

  /** Each item's bytes when its file is a regular file of exactly `size` bytes with that SHA-256, else null; never rejects. */
  read(items: VerifiedReadItem[]): Promise<(Uint8Array | null)[]> {
    const none = () => items.map(() => null);
    const slot = this.closed || items.length === 0 ? null : this.leastBusy();
    if (!slot) return Promise.resolve(none());
    const batch = this.batch++;
    return new Promise((resolve) => {
      slot.pending.set(batch, { count: items.length, resolve });
      slot.worker.postMessage(packBatch(batch, items));
    });
  }

  /** The workers stopped; what they still held answers null. Idempotent. */
  close(): void {
    this.closed = true;
    for (const slot of this.slots.splice(0)) this.fail(slot);
  }

  /** A new worker until there are `count` (started as batches come: a small export starts fewer), else the idlest. */
  private leastBusy(): Slot | null {
    if (this.slots.length < this.count) {
      const slot = this.start();
      if (slot) return slot;
    }
    let best: Slot | null = null;
    for (const s of this.slots) if (!s.broken && (!best || s.pending.size < best.pending.size)) best = s;
    return best;
  }

  private start(): Slot | null {
    let worker: Worker;
    try {
      worker = startWorker(workerEntry("repo/verified-read-worker.ts"));
    } catch {
      return null;
    }
    const slot: Slot = { worker, pending: new Map(), broken: false };
    worker.onmessage = (e: MessageEvent<{ batch: number; found: (Uint8Array | null)[] }>) => {
      const p = slot.pending.get(e.data.batch);
      if (!p) return;
      slot.pending.delete(e.data.batch);
      p.resolve(e.data.found.length === p.count ? e.data.found : new Array<null>(p.count).fill(null));
    };
    worker.onerror = () => this.fail(slot);
    this.slots.push(slot);
    return slot;
  }

  private fail(slot: Slot): void {
    slot.broken = true;
    slot.worker.terminate();
    for (const p of slot.pending.values()) p.resolve(new Array<null>(p.count).fill(null));
    slot.pending.clear();
  }
}
