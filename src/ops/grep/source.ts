/**
 * Grep candidates backed by regular files on disk (not symlinks: the walk
 * passes those, if at all, with an open() that yields the link text). The
 * engine reads them itself through `absPath`; open() remains for other
 * callers: small files in one synchronous read, larger ones streamed in
 * `chunkBytes` reads, so a 2 GB file never sits in memory whole.
 */
import { closeSync } from "node:fs";
import type { RepoPath } from "../../core/repo-path";
import { fdStream, fileStream as regularFileStream, openRegular, readAll } from "../../repo/file-chunks";
import { DEFAULT_CHUNK_BYTES } from "./query";
import type { GrepCandidate } from "./types";

/** `size` null: not known yet (the engine stats the file when it reads it). */
export function fileCandidate(path: RepoPath, absPath: string, size: number | null, chunkBytes = DEFAULT_CHUNK_BYTES): GrepCandidate {
  return { path, size, absPath, open: async () => readRegular(absPath, chunkBytes) };
}

/**
 * A regular file (never a symlink, FIFO or device: openRegular), whole when
 * it holds at most `chunkBytes`, else as a stream of reads of that size.
 */
function readRegular(absPath: string, chunkBytes: number): Uint8Array | ReadableStream<Uint8Array> {
  const { fd, stat } = openRegular(absPath);
  if (stat.size > chunkBytes) return fdStream(fd, chunkBytes);
  try {
    return readAll(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

/** A regular file as a stream of reads of `chunkBytes` each. */
export function fileStream(absPath: string, chunkBytes = DEFAULT_CHUNK_BYTES): ReadableStream<Uint8Array> {
  return regularFileStream(absPath, chunkBytes);
}
