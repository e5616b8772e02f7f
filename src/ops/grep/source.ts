/**
 * Grep candidates backed by regular files on disk (not symlinks: the walk
 * passes those, if at all, with an open() that yields the link text). The
 * engine reads them itself through `absPath`; open() remains for other
 * callers: small files in one synchronous read, larger ones streamed in
 * `chunkBytes` reads, so a 2 GB file never sits in memory whole.
 */
import { readFileSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import type { RepoPath } from "../../core/repo-path";
import { DEFAULT_CHUNK_BYTES } from "./query";
import type { GrepCandidate } from "./types";

/** `size` null: not known yet (the engine stats the file when it reads it). */
export function fileCandidate(path: RepoPath, absPath: string, size: number | null, chunkBytes = DEFAULT_CHUNK_BYTES): GrepCandidate {
  return {
    path,
    size,
    absPath,
    open: async () => ((size ?? statSync(absPath).size) <= chunkBytes ? readFileSync(absPath) : fileStream(absPath, chunkBytes)),
  };
}

/** A file as a stream of reads of `chunkBytes` each. */
export function fileStream(absPath: string, chunkBytes = DEFAULT_CHUNK_BYTES): ReadableStream<Uint8Array> {
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  const closeHandle = async () => {
    const h = handle;
    handle = null;
    await h?.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        handle ??= await open(absPath, "r");
        const buf = new Uint8Array(chunkBytes);
        const { bytesRead } = await handle.read(buf, 0, chunkBytes, null);
        if (bytesRead === 0) {
          await closeHandle();
          controller.close();
        } else controller.enqueue(bytesRead === chunkBytes ? buf : buf.subarray(0, bytesRead));
      } catch (err) {
        await closeHandle().catch(() => {});
        controller.error(err);
      }
    },
    cancel: closeHandle,
  }, { highWaterMark: 0 });
}
