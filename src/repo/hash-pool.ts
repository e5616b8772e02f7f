import { availableParallelism } from "node:os";
import { internal } from "../core/errors";
import { type HashItem, type HashOutcome, hashFiles } from "./hash-files";

/** Below this many files a worker's start-up costs more than it saves. */
const PARALLEL_MIN = 2000;

/**
 * Hashes files on every core: the list is cut into interleaved shares (so
 * large and small files spread evenly); the main thread hashes one share and
 * a worker each of the others.
 */
export async function hashInParallel(root: string, stateDir: string, items: HashItem[], onProgress?: (done: number) => void): Promise<HashOutcome[]> {
  const workers = Math.min(availableParallelism(), 8);
  if (items.length < PARALLEL_MIN || workers < 2) return hashFiles(root, stateDir, items, onProgress);
  const shares: HashItem[][] = Array.from({ length: workers }, () => []);
  items.forEach((item, i) => shares[i % workers]?.push(item));
  const done = new Array<number>(workers).fill(0);
  const report = (w: number, n: number) => {
    done[w] = n;
    onProgress?.(done.reduce((a, b) => a + b, 0));
  };
  // The main thread takes the first share itself: one JavaScript VM fewer keeps peak memory down,
  // and the main thread would otherwise only wait.
  const others = shares.slice(1).map((share, w) => runWorker(root, stateDir, share, (n) => report(w + 1, n)));
  const mine = hashFiles(root, stateDir, shares[0] ?? [], (n) => report(0, n));
  const results = await Promise.all(others);
  return [mine, ...results].flat();
}

function runWorker(root: string, stateDir: string, items: HashItem[], onProgress: (done: number) => void): Promise<HashOutcome[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSpecifier());
    worker.onmessage = (e: MessageEvent<{ ok?: boolean; progress?: number; outcomes?: HashOutcome[]; message?: string }>) => {
      if (e.data.progress !== undefined) {
        onProgress(e.data.progress);
        return;
      }
      worker.terminate();
      if (e.data.ok) resolve(e.data.outcomes ?? []);
      else reject(internal(`hashing failed: ${e.data.message}`));
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(internal(`hash worker failed: ${e.message}`));
    };
    worker.postMessage({ root, stateDir, items });
  });
}

/**
 * Inside the compiled binary the worker is an embedded entry point named by
 * its path relative to src/ (build.ts lists it); from source it sits beside
 * this file.
 */
function workerSpecifier(): string {
  return import.meta.url.includes("/$bunfs/") ? "./repo/hash-worker.ts" : new URL("./hash-worker.ts", import.meta.url).href;
}
