import { availableParallelism } from "node:os";
import { internal, isDescriptorShortage } from "../core/errors";
import { settleAll } from "../core/settle";
import { FileHasher, STREAM_THRESHOLD, type HashItem, type HashOptions, type HashOutcome } from "./hash-files";
import { nativeModule, type NativeJob } from "./native";
import { hashNatively, nativeHashable, type OutcomeListener } from "./native-hash";
import { FollowerSettler, splitFollowers, type FollowerSplit } from "./blob-followers";
import { workerEntry } from "./worker-entry";
import { startWorker } from "./worker-start";

/** Below this many files a worker's start-up costs more than it saves. */
export const PARALLEL_MIN = 2000;
/** Files per batch a worker is sent; two batches are kept in flight per worker so it never waits. */
const WORKER_BATCH = 128;
/** Files the main thread hashes between turns of its event loop. */
const MAIN_BATCH = 32;
/** Bytes of loose blobs the main thread has waiting to be written, above which it waits for them. */
const DEFERRED_MAX = 64 * 1024 * 1024;

/**
 * Hashes files on every core. Clean tracked files go to the native module
 * when it is there (src/repo/native-hash.ts); the rest, and whatever it hands
 * back, take the TypeScript path below, meanwhile. A blob several clean paths
 * hold is read once, when git's index vouches for the others (blob-followers.ts). Outcomes come back in no particular
 * order; each names its item's index.
 */
export async function hashInParallel(
  opts: HashOptions,
  items: HashItem[],
  onProgress?: (done: number) => void,
  signal?: AbortSignal,
  /** the leaders' native job, started from the listing with `opts`' cutoff, and its split (splitFromPlan) */
  planned?: { job: NativeJob; split: FollowerSplit },
  /** told every outcome as soon as it is known (before its loose blob is written: rely on it once this settles) */
  onResult?: (o: HashOutcome) => void,
): Promise<HashOutcome[]> {
  // Each clean blob is read once: the other paths holding it are not read (blob-followers.ts) when a cutoff lets
  // the index vouch for them.
  const split = planned?.split ?? (opts.trustCleanBefore > 0 ? splitFollowers(items) : null);
  if (!split || (split.followers.length === 0 && !planned)) return hashAll(opts, items, onProgress, signal, undefined, undefined, onResult);
  let led = 0;
  let followed = 0;
  // followers settle as their leaders' native outcomes come in, while the rest is read
  const settler = new FollowerSettler(split, onResult);
  const outcomes = await hashAll(
    opts,
    split.leaders,
    (n) => {
      settler.advance();
      onProgress?.((led = n) + followed);
    },
    signal,
    (item, o) => settler.leader(item, o),
    planned?.job,
    onResult,
  );
  const settled = settler.finish(outcomes);
  followed = settled.outcomes.length;
  onProgress?.(led + followed);
  // a path the index did not vouch for after all is read and verified with git's hash, whatever the cutoff
  const verify: HashOptions = { root: opts.root, stateDir: opts.stateDir, trustCleanBefore: 0 };
  const again = settled.again.length > 0 ? await hashAll(verify, settled.again, (n) => onProgress?.(led + followed + n), signal, undefined, undefined, onResult) : [];
  return outcomes.concat(settled.outcomes, again);
}

/** Every item read and hashed: clean tracked files natively when the module is there, the rest in TypeScript. */
async function hashAll(
  opts: HashOptions,
  items: HashItem[],
  onProgress?: (done: number) => void,
  signal?: AbortSignal,
  onNative?: OutcomeListener,
  /** a native job over `items`, every one of them, started already */
  started?: NativeJob,
  onResult?: (o: HashOutcome) => void,
): Promise<HashOutcome[]> {
  const m = nativeModule();
  // the job hashes in one object format: the first clean item's (a repository's ids are all of one length)
  const idLength = items.find(nativeHashable)?.gitOid?.length;
  const takes = (i: HashItem) => i.gitOid?.length === idLength && nativeHashable(i);
  const clean = started ? items : m ? items.filter(takes) : [];
  if (!m || clean.length === 0) return hashInScript(opts, items, onProgress, signal, onResult);
  const rest = clean.length === items.length ? [] : items.filter((i) => !takes(i));
  let nativeDone = 0;
  let scriptDone = 0;
  const report = () => onProgress?.(nativeDone + scriptDone);
  const scripted = rest.length > 0 ? hashInScript(opts, rest, (n) => ((scriptDone = n), report()), signal, onResult) : Promise.resolve([]);
  // both settle before this returns or throws, so no hashing outlives the call
  const [nat, others] = await settleAll([hashNatively(m, { ...opts, streamThreshold: STREAM_THRESHOLD }, clean, (n) => ((nativeDone = n), report()), signal, onNative, started, onResult), scripted]);
  const again = nat.fallback.length > 0 ? await hashInScript(opts, nat.fallback, undefined, signal, onResult) : [];
  return nat.outcomes.concat(others, again);
}

/**
 * The TypeScript path: one worker per core but one, and the main
 * thread, all taking batches from one queue, so a share held up by large
 * files or by the main thread's other work never leaves a core idle. The main
 * thread gives its event loop a turn between batches, which keeps workers fed
 * and git processes running meanwhile from stalling on a full pipe. Aborting
 * `signal` stops every share and rejects with its reason. Outcomes come back
 * in no particular order; each names its item's index.
 */
export async function hashInScript(
  opts: HashOptions,
  items: HashItem[],
  onProgress?: (done: number) => void,
  signal?: AbortSignal,
  onResult?: (o: HashOutcome) => void,
): Promise<HashOutcome[]> {
  const queue = new BatchQueue(items);
  const out: HashOutcome[] = [];
  const put = onResult
    ? (o: HashOutcome) => {
        out.push(o);
        onResult(o);
      }
    : (o: HashOutcome) => void out.push(o);
  let reported = 0;
  const report = () => {
    if (!onProgress || out.length - reported < 1000) return;
    reported = out.length;
    onProgress(out.length);
  };
  const workers = Math.min(availableParallelism(), 8) - 1;
  const others = items.length < PARALLEL_MIN ? [] : Array.from({ length: workers }, () => runWorker(opts, queue, put, report, signal));
  // Every share settles before this returns or throws, so no worker outlives the call.
  const settled = await Promise.allSettled([hashOnMainThread(opts, queue, put, report, signal), ...others]);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return out;
}

class BatchQueue {
  private next = 0;

  constructor(private readonly items: HashItem[]) {}

  take(n: number): HashItem[] {
    const start = this.next;
    this.next = Math.min(this.items.length, start + n);
    return this.items.slice(start, this.next);
  }
}

async function hashOnMainThread(opts: HashOptions, queue: BatchQueue, put: (o: HashOutcome) => void, report: () => void, signal?: AbortSignal): Promise<void> {
  // the loose blobs of what git does not vouch for are written on the I/O threads while the next files are read
  const hasher = new FileHasher(opts, true);
  try {
    await hashBatches(hasher, queue, put, report, signal);
  } catch (err) {
    await hasher.written().catch(() => {}); // settled before the call returns, whatever stopped it
    throw err;
  }
  await hasher.written();
}

async function hashBatches(hasher: FileHasher, queue: BatchQueue, put: (o: HashOutcome) => void, report: () => void, signal?: AbortSignal): Promise<void> {
  let sinceGc = 0;
  for (let batch = queue.take(MAIN_BATCH); batch.length > 0; batch = queue.take(MAIN_BATCH)) {
    signal?.throwIfAborted();
    for (const item of batch) put(hasher.hash(item));
    if (hasher.pendingBytes > DEFERRED_MAX) await hasher.written();
    report();
    // Hashers and hex strings are garbage at once; collecting as we go keeps peak memory flat.
    if ((sinceGc += batch.length) >= 4000) {
      sinceGc = 0;
      Bun.gc(false);
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function runWorker(opts: HashOptions, queue: BatchQueue, put: (o: HashOutcome) => void, report: () => void, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let worker: Worker;
    try {
      worker = startWorker(workerEntry("repo/hash-worker.ts"));
    } catch (err) {
      // no descriptors to spare for its thread: its share is left to the others and the JavaScript thread
      if (isDescriptorShortage(err)) return resolve();
      return reject(err);
    }
    let inFlight = 0;
    const send = () => {
      const batch = queue.take(WORKER_BATCH);
      if (batch.length === 0) return;
      inFlight++;
      worker.postMessage({ items: batch });
    };
    const stop = (err?: unknown) => {
      worker.terminate();
      if (err === undefined) resolve();
      else reject(err);
    };
    signal?.addEventListener("abort", () => stop(signal.reason), { once: true });
    worker.onmessage = (e: MessageEvent<{ outcomes?: HashOutcome[]; message?: string }>) => {
      if (!e.data.outcomes) return stop(internal(`hashing failed: ${e.data.message}`));
      inFlight--;
      for (const o of e.data.outcomes) put(o);
      report();
      send();
      if (inFlight === 0) stop();
    };
    worker.onerror = (e) => stop(internal(`hash worker failed: ${e.message}`));
    worker.postMessage({ opts });
    send();
    send();
    if (inFlight === 0) stop();
  });
}

