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

export function blobIdOfState(bytes: Uint8Array): BlobId {
  return `sha256:${sha256Of(bytes)}`;
}
