// Worker entry: builds segments of the trigram index in TypeScript for a server without the native module
// (build.ts, buildInWorker): off the thread that answers calls, one job at a time.
import { buildHere, type BuildItem } from "./build";

declare const self: Worker;

interface Job {
  root: string;
  items: BuildItem[];
  fileLimit: number;
  pairCap: number;
}

self.onmessage = (e: MessageEvent<Job>) => {
  try {
    const { root, items, fileLimit, pairCap } = e.data;
    const r = buildHere(root, items, { fileLimit, pairCap, background: true });
    const transfer = r.segment ? [r.segment.buffer as ArrayBuffer] : [];
    postMessage({ segment: r.segment, status: r.status, bytes: r.bytes }, transfer);
    // a job's file bytes and trigram lists are garbage now: collected before the next job, not left to grow
    Bun.gc(false);
  } catch (err) {
    postMessage({ message: err instanceof Error ? err.message : String(err) });
  }
};
