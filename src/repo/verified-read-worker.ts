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

self.onmessage = (e: MessageEvent<{ batch: number; items: VerifiedReadItem[] }>) => {
  const { batch, items } = e.data;
  const found: (Uint8Array | null)[] = [];
  const transfer: ArrayBuffer[] = [];
  for (const it of items) {
    const bytes = readRegularSizedSync(it.abs, it.size);
    const ok = bytes !== null && new Bun.CryptoHasher("sha256").update(bytes).digest("hex") === it.sha256;
    found.push(ok ? bytes : null);
    // each array's memory is its own: handed over, not copied
    if (ok) transfer.push(bytes.buffer as ArrayBuffer);
  }
  postMessage({ batch, found }, transfer);
};
