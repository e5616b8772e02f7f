/** The loose blob files of a root's store (`.mcp/blobs/sha256/<2 hex>/<62 hex>`) whose bytes are not their name. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash";

export function tornLooseBlobs(root: string): string[] {
  const store = join(root, ".mcp", "blobs", "sha256");
  if (!existsSync(store)) return [];
  const bad: string[] = [];
  for (const fan of readdirSync(store)) {
    for (const name of readdirSync(join(store, fan))) if (sha256Hex(readFileSync(join(store, fan, name))) !== fan + name) bad.push(`${fan}/${name}`);
  }
  return bad;
}
