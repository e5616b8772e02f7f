import { existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeCacheFile } from "./cache-file";
import type { SnapshotId } from "./manifest";
import { StatCache } from "./stat-cache";

/**
 * Remembers which snapshot a tree state produced, so capturing an unchanged
 * tree again costs only the git reads the fingerprint makes anyway.
 *
 * The key covers everything that decides a manifest in a git work tree: the
 * fingerprint, the scope, the raw index listing (blob ids and modes of every
 * tracked file) and the list of untracked files. The files git cannot vouch
 * for (untracked or modified) are listed with their hashes and must still
 * pass the stat cache's racy-safe check; any doubt is a miss, and a miss
 * only means the full capture runs.
 */
export interface WarmRecord {
  snapshot_id: SnapshotId;
  /** [path, sha256 hex] of every entry that was read from disk rather than known from git. */
  loose: [string, string][];
  skipped: { non_utf8: number; submodules: number; vanished: number };
}

const KEEP = 16;

export class WarmCache {
  private readonly file: string;

  constructor(private readonly stateDir: string) {
    this.file = join(stateDir, "cache", "warm.json");
  }

  private load(): Record<string, WarmRecord & { at: number }> {
    if (!existsSync(this.file)) return {};
    try {
      return JSON.parse(readFileSync(this.file, "utf8"));
    } catch {
      return {};
    }
  }

  /** The snapshot of this exact state, if every loose file is provably unchanged. */
  lookup(key: string, root: string): WarmRecord | null {
    const rec = this.load()[key];
    if (!rec) return null;
    const stats = new StatCache(this.stateDir);
    for (const [path, sha] of rec.loose) {
      try {
        if (stats.lookup(path, lstatSync(join(root, path))) !== sha) return null;
      } catch {
        return null;
      }
    }
    return rec;
  }

  put(key: string, rec: WarmRecord): void {
    const all = this.load();
    all[key] = { ...rec, at: Date.now() };
    const keys = Object.keys(all).sort((a, b) => (all[b]?.at ?? 0) - (all[a]?.at ?? 0));
    for (const k of keys.slice(KEEP)) delete all[k];
    mkdirSync(join(this.stateDir, "cache"), { recursive: true });
    writeCacheFile(this.stateDir, this.file, JSON.stringify(all));
  }
}

export function warmKey(fingerprintJson: string, scope: string[], listing: Uint8Array, untracked: string[]): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(fingerprintJson);
  h.update("\0");
  h.update(JSON.stringify(scope));
  h.update("\0");
  h.update(listing);
  h.update("\0");
  h.update(untracked.join("\0"));
  return h.digest("hex");
}
