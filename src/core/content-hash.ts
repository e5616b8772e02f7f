/**
 * SHA-256 of the byte arrays the write path moves around, each computed once.
 * One change set hashes the same bytes in several places (the blob id of the
 * answer, compare-and-swap and lease checks, the history's hash_before,
 * hash_after and checkpoint hash); on a 50 MB file each hash is tens of
 * milliseconds. The memo is keyed by the array itself and holds it weakly.
 * It is only valid for arrays nobody writes to after hashing: the write path's
 * file states (read from disk, produced by the patch engine, decoded from a
 * tool argument) are never modified once created.
 */
import { sha256Hex, type BlobId } from "./hash";

const memo = new WeakMap<Uint8Array, string>();

export function sha256Of(bytes: Uint8Array): string {
  let hex = memo.get(bytes);
  if (hex === undefined) {
    hex = sha256Hex(bytes);
    memo.set(bytes, hex);
  }
  return hex;
}

/** Whether the digest of these bytes is known already. */
export function knowsSha256(bytes: Uint8Array): boolean {
  return memo.has(bytes);
}

/** Records a digest computed elsewhere (repo/hash-ahead.ts: many arrays at once, on several threads). */
export function rememberSha256(bytes: Uint8Array, hex: string): void {
  memo.set(bytes, hex);
}

export function blobIdOfState(bytes: Uint8Array): BlobId {
  return `sha256:${sha256Of(bytes)}`;
}
