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
    // a job's file bytes and trigram lists are garbage now: collected in full before the next job (the worker
    // is kept for a pass; with a partial collection a server's peak RSS went from 267 to 358 MB over one)
    Bun.gc(true);
  } catch (err) {
    postMessage({ message: err instanceof Error ? err.message : String(err) });
  }
};
