import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { git, gitSync } from "./git";
import { CatFileBatch } from "./cat-file";

/**
 * worksnap's private git object store (`.mcp/git/store`, a bare repository
 * that nothing else knows about). Clean tracked blobs are copied into it from
 * the user's repository with `git pack-objects`, which reuses the compressed
 * data, so a snapshot survives `git gc --prune=now` in the user's repository
 * without one loose file per blob and without a single ref written there.
 */
export class GitObjectStore {
  readonly gitDir: string;
  private batch: CatFileBatch | null = null;

  constructor(stateDir: string) {
    this.gitDir = join(stateDir, "git", "store");
  }

  private ensure(): void {
    if (existsSync(join(this.gitDir, "objects"))) return;
    mkdirSync(this.gitDir, { recursive: true });
    gitSync(["init", "--bare", "-q", this.gitDir], { cwd: this.gitDir });
  }

  /** Copies the given blobs from the user's repository into the store. */
  async importFrom(repoRoot: string, oids: string[]): Promise<void> {
    if (oids.length === 0) return;
    this.ensure();
    const packBase = join(this.gitDir, "objects", "pack", "pack");
    await git(["pack-objects", "-q", "--window=0", packBase], { cwd: repoRoot, input: `${oids.join("\n")}\n` });
  }

  read(oid: string): Promise<Uint8Array> {
    this.ensure();
    this.batch ??= new CatFileBatch(this.gitDir);
    return this.batch.read(oid);
  }

  /** Streams one blob without holding it whole in memory. */
  stream(oid: string): ReadableStream<Uint8Array> {
    this.ensure();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
    const proc = Bun.spawn(["git", `--git-dir=${this.gitDir}`, "cat-file", "blob", oid], {
      env,
      stdout: "pipe",
      stderr: "ignore",
    });
    return proc.stdout as ReadableStream<Uint8Array>;
  }

  close(): void {
    this.batch?.close();
    this.batch = null;
  }
}
