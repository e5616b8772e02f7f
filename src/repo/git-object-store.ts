import { existsSync, linkSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { git, gitEnv, gitSync, spawnWhenDescriptorsFree } from "./git";
import { CatFileBatch } from "./cat-file";
import { missingFrom, packIndexesOf } from "./pack-index";
import type { RepoRoot } from "./root";
import { objectIdHexLength, userObjectDir } from "./common-dir";

/** Above this many missing objects, linking the user's packs beats re-packing. */
const LINK_PACKS_MIN = 2000;

/**
 * worksnap's private git object store (`.mcp/git/store`, a bare repository
 * that nothing else knows about). Clean tracked blobs are copied into it from
 * the user's repository, so a snapshot survives `git gc --prune=now` there
 * without one loose file per blob and without a single ref written:
 * - many objects: the user's pack files are hard-linked (packs are immutable;
 *   the link keeps the data alive after git deletes its own name), then only
 *   the objects still missing (loose ones) are packed;
 * - few objects: `git pack-objects`, which reuses the compressed data.
 */
export class GitObjectStore {
  readonly gitDir: string;
  private batch: CatFileBatch | null = null;

  constructor(stateDir: string) {
    this.gitDir = join(stateDir, "git", "store");
  }

  private ready = false;
  /** Whether the store holds SHA-256 objects (the object format of the repository its blobs come from). */
  private sha256 = false;

  /**
   * Creates the store on first use, in the object format of the ids it is
   * given (64 hex digits: a SHA-256 repository); checked on disk once per
   * process (every blob read passes here). A store an earlier version made for
   * a SHA-256 repository as a SHA-1 one (its packs hold that repository's
   * SHA-256 objects, which git could then not read) is declared SHA-256.
   */
  private ensure(oidHexLength: number): void {
    if (this.ready && (oidHexLength !== 64 || this.sha256)) return;
    if (!existsSync(join(this.gitDir, "objects"))) {
      mkdirSync(this.gitDir, { recursive: true });
      gitSync(["init", "--bare", "-q", ...(oidHexLength === 64 ? ["--object-format=sha256"] : []), this.gitDir], { cwd: this.gitDir });
    } else if (oidHexLength === 64 && objectIdHexLength(this.gitDir) !== 64) {
      gitSync([`--git-dir=${this.gitDir}`, "config", "core.repositoryformatversion", "1"], { cwd: this.gitDir });
      gitSync([`--git-dir=${this.gitDir}`, "config", "extensions.objectformat", "sha256"], { cwd: this.gitDir });
    }
    this.sha256 = objectIdHexLength(this.gitDir) === 64;
    this.ready = true;
  }

  /** Copies the given blobs from the user's repository into the store. */
  async importFrom(repo: RepoRoot, oids: string[]): Promise<void> {
    if (oids.length === 0 || !repo.gitDir) return;
    this.ensure(oids[0]!.length);
    let wanted = oids;
    if (oids.length >= LINK_PACKS_MIN && this.linkPacks(join(userObjectDir(repo.gitDir), "pack"))) wanted = await this.missing(oids);
    if (wanted.length === 0) return;
    const objects = join(this.gitDir, "objects");
    // git writes the pack under a temporary name in the object directory it writes to, then renames it: the store's
    // own, with the user's objects read as alternates, so the rename stays within `.mcp` (which may be a mount of
    // its own: a cache volume in CI).
    await git(["pack-objects", "-q", "--window=0", join(objects, "pack", "pack")], {
      cwd: repo.root,
      input: `${wanted.join("\n")}\n`,
      env: { GIT_OBJECT_DIRECTORY: objects, GIT_ALTERNATE_OBJECT_DIRECTORIES: userObjectDir(repo.gitDir) },
    });
  }

  /** Hard-links the user's packs (and their indexes) into the store; false if linking is impossible. */
  private linkPacks(userPackDir: string): boolean {
    if (!existsSync(userPackDir)) return false;
    const ours = join(this.gitDir, "objects", "pack");
    mkdirSync(ours, { recursive: true });
    const names = readdirSync(userPackDir);
    try {
      for (const name of names.filter((n) => n.endsWith(".pack"))) {
        const base = name.slice(0, -5);
        if (!names.includes(`${base}.idx`)) continue; // a pack still being written
        if (existsSync(join(ours, `${base}.idx`))) continue;
        for (const ext of [".pack", ".rev"]) {
          if (names.includes(base + ext) && !existsSync(join(ours, base + ext))) linkSync(join(userPackDir, base + ext), join(ours, base + ext));
        }
        // The index last: git only considers a pack once its .idx exists.
        linkSync(join(userPackDir, `${base}.idx`), join(ours, `${base}.idx`));
      }
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The oids the store does not hold: looked up in its packs' indexes where they alone tell (a cold capture's
   * 16,831 blob ids in about 10 ms on this thread, where `git cat-file --batch-check` took 30 ms of CPU in a
   * process of its own, and the ids' join and its answer's parse here), else asked of git.
   */
  private async missing(oids: string[]): Promise<string[]> {
    const idLength = (oids[0] ?? "").length / 2;
    // the indexes are read whole: at most 64 bytes of them a lookup (8 MB whatever the count), beyond which git, which maps them, is asked
    const indexes = packIndexesOf(join(this.gitDir, "objects"), idLength, Math.max(8 << 20, 64 * oids.length));
    const missing = indexes && missingFrom(indexes, oids, idLength);
    if (missing) return missing;
    const r = await git([`--git-dir=${this.gitDir}`, "cat-file", "--buffer", "--batch-check=%(objectname)"], {
      cwd: this.gitDir,
      input: `${oids.join("\n")}\n`,
    });
    const out: string[] = [];
    for (const line of new TextDecoder().decode(r.stdout).split("\n")) if (line.endsWith(" missing")) out.push(line.slice(0, -8));
    return out;
  }

  read(oid: string): Promise<Uint8Array> {
    this.ensure(oid.length);
    this.batch ??= new CatFileBatch(this.gitDir);
    return this.batch.read(oid);
  }

  /**
   * Streams one blob without holding it whole in memory. The child lives as
   * long as its reader reads, so it takes no slot of git.ts's limit (a reader
   * waiting on another slot could then wait forever); callers bound how many
   * they open at once (grep's open() concurrency, export one at a time).
   */
  async stream(oid: string): Promise<ReadableStream<Uint8Array>> {
    this.ensure(oid.length);
    const proc = await spawnWhenDescriptorsFree(() =>
      Bun.spawn(["git", `--git-dir=${this.gitDir}`, "cat-file", "blob", oid], { env: gitEnv(), stdout: "pipe", stderr: "ignore" }),
    );
    return proc.stdout as ReadableStream<Uint8Array>;
  }

  close(): void {
    this.batch?.close();
    this.batch = null;
  }
}

