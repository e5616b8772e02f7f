// Worker entry: reads the files a verified-reads pool sends it, each kept only when it is the blob expected (see verified-reads.ts).
import { readRegularSizedSync } from "./file-chunks";

declare const self: Worker;

export interface VerifiedReadItem {
  /** absolute path */
  abs: string;
  size: number;
  /** the SHA-256 (hex) the bytes must have */
  sha256: string;
}

/** A batch as sent (verified-reads.ts packBatch): the items' paths joined by NULs, their sizes, their SHA-256s (hex) one after the other. */
export interface VerifiedReadBatch {
  batch: number;
  paths: string;
  sizes: Float64Array;
  sha256: string;
}

self.onmessage = (e: MessageEvent<VerifiedReadBatch>) => {
  const { batch, sizes, sha256 } = e.data;
  const paths = e.data.paths.split("\0");
  const found: (Uint8Array | null)[] = [];
  const transfer: ArrayBuffer[] = [];
  for (let k = 0; k < paths.length; k++) {
    const bytes = readRegularSizedSync(paths[k]!, sizes[k]!);
    const ok = bytes !== null && new Bun.CryptoHasher("sha256").update(bytes).digest("hex") === sha256.slice(64 * k, 64 * k + 64);
    found.push(ok ? bytes : null);
    // each array's memory is its own: handed over, not copied
    if (ok) transfer.push(bytes.buffer as ArrayBuffer);
  }
  postMessage({ batch, found }, transfer);
};
