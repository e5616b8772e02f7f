// Worker entry: hashes the batches of files a capture sends it (see hash-pool.ts).
import { FileHasher, type HashItem, type HashOptions } from "./hash-files";

declare const self: Worker;

let hasher: FileHasher | null = null;
let sinceGc = 0;

self.onmessage = (e: MessageEvent<{ opts?: HashOptions; items?: HashItem[] }>) => {
  try {
    if (e.data.opts) hasher = new FileHasher(e.data.opts);
    if (!e.data.items) return;
    if (!hasher) throw new Error("batch before options");
    const outcomes = e.data.items.map((item) => (hasher as FileHasher).hash(item));
    // Hashers and hex strings are garbage at once; collecting as we go keeps peak memory flat.
    if ((sinceGc += outcomes.length) >= 4000) {
      sinceGc = 0;
      Bun.gc(false);
    }
    postMessage({ outcomes });
  } catch (err) {
    postMessage({ message: err instanceof Error ? err.message : String(err) });
  }
};
