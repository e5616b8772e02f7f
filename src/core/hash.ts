/**
 * SHA-256 hashing with Bun's native hasher (DESIGN decision 2). (A work-tree
 * file is hashed in chunks by repo/file-chunks.ts sha256OfFile.)
 */
export type BlobId = `sha256:${string}`;

export const BLOB_PREFIX = "sha256:";

export function sha256Hex(data: Uint8Array | string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(data);
  return hasher.digest("hex");
}

export function blobIdOf(data: Uint8Array | string): BlobId {
  return `sha256:${sha256Hex(data)}`;
}

export function blobIdFromHex(hex: string): BlobId {
  return `sha256:${hex}`;
}

export function hexOfBlobId(id: string): string {
  return id.startsWith(BLOB_PREFIX) ? id.slice(BLOB_PREFIX.length) : id;
}

export function isBlobId(value: unknown): value is BlobId {
  return typeof value === "string" && /^sha256:[0-9a-f]{64}$/.test(value);
}

/** 128 random bits as hex: lease ids and other unguessable names. */
export function randomId128(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString("hex");
}
