import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeCacheFile } from "./cache-file";

interface StatRecord {
  s: number; // size
  m: string; // mtime ns
  c: string; // ctime ns
  i: string; // inode
  h: string; // sha256 hex
}

/**
 * How much older than the moment of a comparison a timestamp must be before
 * the file is trusted not to have changed since: clock ticks of coarse file
 * system timestamps, and a little skew, fit well inside it.
 */
export const RACY_MARGIN_MS = 2000;

/**
 * Remembers the sha256 of files git cannot vouch for (untracked, modified,
 * or everything outside git), keyed by path and validated by size, mtime,
 * ctime and inode. The racy-git rule applies: an entry whose mtime or ctime
 * is not safely older than the moment it was recorded is never trusted, so an
 * edit that keeps size and mtime within the same clock tick is still seen.
 */
export class StatCache {
  private records: Record<string, StatRecord & { t: number }> = {};
  private dirty = false;
  private readonly file: string;

  constructor(private readonly stateDir: string) {
    this.file = join(stateDir, "cache", "stat.json");
    if (existsSync(this.file)) {
      try {
        this.records = JSON.parse(readFileSync(this.file, "utf8"));
      } catch {
        this.records = {};
      }
    }
  }

  lookup(path: string, st: StatLike): string | null {
    const r = this.records[path];
    if (!r) return null;
    const m = statNs(st, "m");
    const c = statNs(st, "c");
    if (r.s !== st.size || r.m !== m || r.c !== c || r.i !== String(st.ino)) return null;
    // Racy: the file may have changed again within the same timestamp tick after we hashed it.
    const recordedNs = BigInt(r.t) * 1_000_000n;
    const margin = BigInt(RACY_MARGIN_MS) * 1_000_000n;
    if (BigInt(m) + margin >= recordedNs || BigInt(c) + margin >= recordedNs) return null;
    return r.h;
  }

  record(path: string, st: StatLike, sha256: string, hashedAtMs: number): void {
    this.records[path] = { s: st.size, m: statNs(st, "m"), c: statNs(st, "c"), i: String(st.ino), h: sha256, t: hashedAtMs };
    this.dirty = true;
  }

  save(): void {
    if (!this.dirty) return;
    mkdirSync(join(this.stateDir, "cache"), { recursive: true });
    writeCacheFile(this.stateDir, this.file, JSON.stringify(this.records));
    this.dirty = false;
  }
}

/** The stat fields the cache compares. */
export interface StatLike {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

function statNs(st: StatLike, which: "m" | "c"): string {
  const ms = which === "m" ? st.mtimeMs : st.ctimeMs;
  return String(Math.round(ms * 1_000_000));
}
