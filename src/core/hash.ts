/**
 * SHA-256 hashing with Bun's native hasher (DESIGN decision 2). (A work-tree
 * file is hashed in chunks by repo/file-chunks.ts sha256OfFile.)
 */
import { perPath } from "./per-path";

export type BlobId = `sha256:${string}`;

export const BLOB_PREFIX = "sha256:";

export function sha256Hex(data: Uint8Array | string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(data);
  return hasher.digest("hex");
}

/**
 * git's id of a blob holding `bytes` (`git hash-object`): SHA-1 of `blob
 * {size}\0` and the bytes, or SHA-256 where `hexLength` is 64 (a repository
 * of that object format).
 */
export function gitBlobHash(bytes: Uint8Array, hexLength: 40 | 64 = 40): string {
  const h = new Bun.CryptoHasher(hexLength === 64 ? "sha256" : "sha1");
  h.update(`blob ${bytes.length}\0`);
  h.update(bytes);
  return h.digest("hex");
}

export function blobIdOf(data: Uint8Array | string): BlobId {
  return `sha256:${sha256Hex(data)}`;
}

export function blobIdFromHex(hex: string): BlobId {
  return `sha256:${hex}`;
}
perPath(blobIdFromHex);


export function hexOfBlobId(id: string): string {
  return id.startsWith(BLOB_PREFIX) ? id.slice(BLOB_PREFIX.length) : id;
}

export function isBlobId(value: unknown): value is BlobId {
  return typeof value === "string" && /^sha256:[0-9a-f]{64}$/.test(value);
}

/** Hex digits a shortened blob id needs to be taken back (expected_blob): 48 bits of the sha256. */
export const BLOB_PREFIX_MIN = 12;

/**
 * A blob id as an argument may give it: `sha256:<hex>` or bare hex, whole or a
 * prefix of at least BLOB_PREFIX_MIN digits (answers written for a model show
 * 12). Returns `sha256:<hex given>`, or null when it is not one.
 */
export function parseBlobRef(value: unknown): BlobId | null {
  if (typeof value !== "string") return null;
  const hex = value.startsWith(BLOB_PREFIX) ? value.slice(BLOB_PREFIX.length) : value;
  return new RegExp(`^[0-9a-f]{${BLOB_PREFIX_MIN},64}$`).test(hex) ? `sha256:${hex}` : null;
}

/** Whether blob `id` is the one `ref` (a parseBlobRef result, whole or a prefix) names. */
export function blobMatches(id: BlobId | null, ref: BlobId): boolean {
  return id !== null && id.startsWith(ref);
}

/** 128 random bits as hex: lease ids and other unguessable names. */
export function randomId128(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString("hex");
}
