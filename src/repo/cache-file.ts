import { writeFileUnflushed } from "./atomic-write";

/**
 * Writes a file of `.mcp/cache/` whole (temp file in `.mcp/tmp/`, rename), without flushing it: every cache is
 * checked when read (the stat cache by each file's stat fields, the warm cache and the index tree by the
 * state they are keyed by) and is only ever an older or newer true answer, so after a crash a lost or empty
 * file is a miss, never a wrong answer. The flushes cost a tenth of a cold capture on a busy disk.
 */
export function writeCacheFile(stateDir: string, target: string, bytes: Uint8Array | string): void {
  writeFileUnflushed(stateDir, target, bytes);
}
