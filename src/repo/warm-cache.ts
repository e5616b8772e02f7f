import { existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isMissingPath } from "../core/errors";
import { writeCacheFile } from "./cache-file";
import type { SnapshotId } from "./manifest";
import { StatCache } from "./stat-cache";

/**
 * Remembers which snapshot a tree state produced, so capturing an unchanged
 * tree again costs only the git reads the fingerprint makes anyway.
 *
 * The key covers what the fingerprint tells of a manifest in a git work
 * tree: the fingerprint, the scope, the raw index listing (blob ids and modes
 * of every tracked file), the list of untracked files. The fingerprint does
 * not tell which index entries git status does not look at (assume-unchanged,
 * skip-worktree: setting one changes neither the index's tree nor the
 * status), so a record also names the index file it was captured from and
 * a digest of those entries (flaggedEntriesDigest); under another index file
 * the digest must be the same (lookup). The files git cannot vouch for
 * (untracked, modified, flagged) are listed with their hashes and must still
 * pass the stat cache's racy-safe check, and the skip-worktree paths absent
 * from the tree must still be absent; any doubt is a miss, and a miss only
 * means the full capture runs.
 */
export interface WarmRecord {
  snapshot_id: SnapshotId;
  /** [path, sha256 hex] of every entry that was read from disk rather than known from git. */
  loose: [string, string][];
  skipped: { non_utf8: number; submodules: number; vanished: number };
  /** TreeScan.absentSkipWorktree of the capture: paths that must still be missing (absent in older records: none). */
  absent?: string[];
  /** The identity of the index file the capture read (index-identity.ts; null: there was none). */
  index?: string | null;
  /** flaggedEntriesDigest of the capture's index listing. A record without it is never used. */
  flagged?: string;
}

const KEEP = 16;
/** More absent skip-worktree paths than this (a sparse checkout by file, not by directory) are not remembered. */
export const MAX_ABSENT = 4096;

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

  /**
   * The snapshot of this exact state: recorded from this index file (`index`, its identity now), or from another
   * whose flagged entries were the same (`flaggedNow`, asked only then); every loose file provably unchanged,
   * every absent path still missing. Records without a digest (older builds) are never used.
   */
  async lookup(key: string, root: string, index: string | null, flaggedNow: () => Promise<string>): Promise<WarmRecord | null> {
    const rec = this.load()[key];
    if (!rec || rec.flagged === undefined) return null;
    const stats = new StatCache(this.stateDir);
    for (const [path, sha] of rec.loose) {
      try {
        if (stats.lookup(path, lstatSync(join(root, path))) !== sha) return null;
      } catch {
        return null;
      }
    }
    for (const path of rec.absent ?? []) {
      try {
        lstatSync(join(root, path));
        return null; // something is there now
      } catch (err) {
        if (!isMissingPath(err)) return null;
      }
    }
    if (rec.index !== index && (await flaggedNow()) !== rec.flagged) return null;
    return rec;
  }

  put(key: string, rec: WarmRecord & Required<Pick<WarmRecord, "index" | "flagged">>): void {
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
