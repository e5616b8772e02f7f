import type { BlobId } from "../core/hash";

/**
 * Content-addressed, immutable blob storage. Implementations: FsBlobStore
 * (`.mcp/blobs/sha256/<2 hex>/<rest>`), MemBlobStore (tests, scratch), and the
 * RepoBlobStore that adds blobs copied out of git. One conformance suite runs
 * against all of them (test/repo/blob-store.case.ts).
 */
export interface BlobStore {
  has(id: BlobId): Promise<boolean>;
  /** Whole content; throws NOT_FOUND naming the blob when absent. */
  read(id: BlobId): Promise<Uint8Array>;
  /** Streaming read for large blobs. */
  stream(id: BlobId): Promise<ReadableStream<Uint8Array>>;
  /** Stores bytes (deduplicated) and returns their id. */
  write(bytes: Uint8Array): Promise<BlobId>;
  /** Size in bytes, or null when absent. */
  size(id: BlobId): Promise<number | null>;
}
