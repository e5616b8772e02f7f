/**
 * The SHA-256 of a change set's file states, all at once. A write hashes the
 * old and the new bytes of every file it changes (the answer's blob ids, the
 * history's hash_before, its checkpoints), one array at a time on the
 * JavaScript thread: 18 MB for a 500-file patch, about 10 ms. With the native
 * module they are hashed in one call on every core and remembered
 * (core/content-hash.ts), so those later asks find them known.
 */
import { availableParallelism } from "node:os";
import { knowsSha256, rememberSha256 } from "../core/content-hash";
import { nativeModule } from "./native";

/** Below this many bytes in all, starting threads costs more than it saves. */
const AHEAD_MIN_BYTES = 1 << 20;
const MAX_THREADS = 8;

export function hashAhead(list: Iterable<Uint8Array | null | undefined>): void {
  const m = nativeModule();
  if (!m) return;
  const todo: Uint8Array[] = [];
  const seen = new Set<Uint8Array>();
  let bytes = 0;
  for (const b of list) {
    if (!b || seen.has(b) || knowsSha256(b)) continue;
    seen.add(b);
    todo.push(b);
    bytes += b.length;
  }
  if (bytes < AHEAD_MIN_BYTES) return;
  const digests = m.sha256Many(todo, Math.min(MAX_THREADS, availableParallelism()));
  for (let k = 0; k < todo.length; k++) rememberSha256(todo[k]!, digests.toString("hex", 32 * k, 32 * k + 32));
}
