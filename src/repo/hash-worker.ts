// Worker entry: hashes one share of the files a capture has to read (see hash-pool.ts).
import { hashFiles, type HashItem } from "./hash-files";

declare const self: Worker;

self.onmessage = (e: MessageEvent<{ root: string; stateDir: string; items: HashItem[] }>) => {
  try {
    postMessage({ ok: true, outcomes: hashFiles(e.data.root, e.data.stateDir, e.data.items, (done) => postMessage({ progress: done })) });
  } catch (err) {
    postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  }
};
