import { renameSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { tempPath } from "./state-dir";

/**
 * Writes a file of `.mcp/cache/` whole (temp file in `.mcp/tmp/`, rename), without flushing it: every cache is
 * checked when read (the stat cache by each file's stat fields, the warm cache and the index tree by the
 * state they are keyed by) and is only ever an older or newer true answer, so after a crash a lost or empty
 * file is a miss, never a wrong answer. The flushes cost a tenth of a cold capture on a busy disk.
 */
export function writeCacheFile(stateDir: string, target: string, bytes: Uint8Array | string): void {
  const tmp = tempPath(stateDir, basename(target));
  try {
    writeFileSync(tmp, bytes, { mode: 0o644 });
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
