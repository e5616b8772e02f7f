import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface GitBlobInfo {
  sha256: string;
  size: number;
}

/**
 * The persistent map from git blob id to sha256 and size, for blobs that are
 * present in worksnap's private object store. It is what makes a warm snapshot
 * of a clean tree cost almost nothing: `git ls-files -s` gives the blob ids and
 * this map gives the manifest entries. Append-only lines "oid sha256 size";
 * concurrent writers append whole lines with O_APPEND, and a torn last line
 * from a crash is ignored on load.
 */
export class GitBlobMap {
  private readonly byOid = new Map<string, GitBlobInfo>();
  private bySha: Map<string, string> | null = null;
  private readonly file: string;
  private loadedBytes = 0;

  constructor(stateDir: string) {
    this.file = join(stateDir, "cache", "gitblobs");
    this.reload();
  }

  /** Picks up lines appended by other processes since the last load. */
  reload(): void {
    if (!existsSync(this.file)) return;
    const buf = readFileSync(this.file);
    if (buf.length <= this.loadedBytes) return;
    const text = buf.subarray(this.loadedBytes).toString("latin1");
    const lastNl = text.lastIndexOf("\n");
    if (lastNl < 0) return;
    let start = 0;
    while (start <= lastNl) {
      const end = text.indexOf("\n", start);
      const line = text.slice(start, end);
      start = end + 1;
      const a = line.indexOf(" ");
      const b = line.indexOf(" ", a + 1);
      if (a < 0 || b < 0) continue;
      const oid = line.slice(0, a);
      const sha256 = line.slice(a + 1, b);
      const size = Number(line.slice(b + 1));
      if (sha256.length !== 64 || !Number.isFinite(size)) continue;
      this.byOid.set(oid, { sha256, size });
      this.bySha?.set(sha256, oid);
    }
    this.loadedBytes += lastNl + 1;
  }

  get(oid: string): GitBlobInfo | undefined {
    return this.byOid.get(oid);
  }

  oidOf(sha256: string): string | undefined {
    if (!this.bySha) {
      this.bySha = new Map();
      for (const [oid, info] of this.byOid) this.bySha.set(info.sha256, oid);
    }
    const hit = this.bySha.get(sha256);
    if (hit) return hit;
    this.reload();
    return this.bySha.get(sha256);
  }

  /** Records blobs that are now in the private store. */
  add(items: { oid: string; sha256: string; size: number }[]): void {
    if (items.length === 0) return;
    mkdirSync(join(this.file, ".."), { recursive: true });
    const text = items.map((i) => `${i.oid} ${i.sha256} ${i.size}\n`).join("");
    appendFileSync(this.file, text);
    this.reload();
  }
}
