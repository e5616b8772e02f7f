import { closeSync, openSync, readSync } from "node:fs";

/** Chunk size for streamed reads: large enough for throughput, small enough to keep memory flat. */
export const CHUNK_BYTES = 1 << 20;

/**
 * A file's bytes in chunks read on demand into one reused buffer. Each chunk
 * is valid only until the next one is requested. Memory stays at one chunk
 * whatever the file size (a file stream that reads ahead does not, when the
 * consumer is slower than the disk).
 */
export function* fileChunks(abs: string, chunkBytes = CHUNK_BYTES): Generator<Uint8Array> {
  const fd = openSync(abs, "r");
  const buf = Buffer.allocUnsafe(chunkBytes);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, chunkBytes, null);
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

/** A pull-based stream over a file: the next chunk is read only when the consumer asks for it. */
export function fileStream(abs: string, chunkBytes = CHUNK_BYTES): ReadableStream<Uint8Array> {
  let fd: number | null = null;
  return new ReadableStream<Uint8Array>(
    {
      start() {
        fd = openSync(abs, "r");
      },
      pull(controller) {
        const buf = new Uint8Array(chunkBytes);
        const n = readSync(fd as number, buf, 0, chunkBytes, null);
        if (n === 0) {
          closeSync(fd as number);
          fd = null;
          controller.close();
        } else controller.enqueue(n === chunkBytes ? buf : buf.subarray(0, n));
      },
      cancel() {
        if (fd !== null) closeSync(fd);
        fd = null;
      },
    },
    { highWaterMark: 1 },
  );
}
