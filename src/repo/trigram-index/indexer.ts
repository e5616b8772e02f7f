/**
 * Keeps the trigram index up with the repository: the blobs of git's index
 * (the clean tracked files' contents, named by their blob ids) that no
 * segment holds yet are read from the work tree, checked against their blob
 * id (by its SHA-256 alone where a capture verified the pair of that and the
 * blob id, `known`: one hash a byte instead of two; a file that differs from
 * the index is left for a later pass), and
 * indexed in segments of up to FILES_PER_JOB files, at most two jobs in
 * flight (reading one while the other's segment is built).
 *
 * Budgets: `memoryBudget` bounds the trigram lists the jobs in flight hold
 * (4 bytes a trigram of a file, twice over while a segment is built), by
 * deferring files past it to the next job; `diskBudget` bounds the segments
 * on disk: past it, segments of which fewer than half the blobs are still in
 * git's index are removed, and if that is not enough, nothing more is built.
 *
 * A server builds in the background, on the native module's low-priority
 * threads (kick(): one pass at a time, another when asked meanwhile), or
 * without the module in TypeScript on a worker thread, one job at a time;
 * `worksnap index build` builds in the foreground (without the module, on the
 * calling thread).
 */
import { join } from "node:path";
import { ROOT } from "../../core/repo-path";
import { indexIdentity } from "../index-identity";
import { nativeModule } from "../native";
import type { RepoRoot } from "../root";
import { plainIndexFilePieces, plainIndexFiles, startIndexListing } from "../tree-scan";
import { BINARY, DEFERRED, EXPECT_GIT_SHA1, EXPECT_GIT_SHA256, EXPECT_SHA256_OF_GIT_SHA1, EXPECT_SHA256_OF_GIT_SHA256, TEXT, buildSegment, type BuildItem } from "./build";
import type { TrigramIndex } from "./store";

export interface IndexerOptions {
  /** bytes of segments on disk at most; 0: build nothing */
  diskBudget: number;
  /** bytes of trigram lists held while building */
  memoryBudget: number;
  /** low-priority native threads (a server) rather than the foreground (a command) */
  background: boolean;
  /** files larger than this are not indexed (grep reads them) */
  fileLimit?: number;
  /**
   * The SHA-256 of a git blob id's bytes, where a capture verified the pair (the blob store's map): such a file
   * is checked by its SHA-256 alone, and its git id recorded as given.
   */
  known?: (gitOid: string) => string | undefined;
}

export const DEFAULT_DISK_BUDGET = 1024 * 1024 * 1024;
export const DEFAULT_MEMORY_BUDGET = 96 * 1024 * 1024;
const DEFAULT_FILE_LIMIT = 256 * 1024 * 1024;
const FILES_PER_JOB = 2048;
const JOBS_IN_FLIGHT = 2;

export interface IndexerPass {
  /** blobs of git's index not indexed before the pass */
  missing: number;
  indexed: number;
  /** bytes read into the index */
  bytes: number;
  segments: number;
  /** blobs left for a later pass: the file differs from the index, is gone, too large, or the disk budget ran out */
  left: number;
  ms: number;
  /** the disk budget stopped the pass */
  full: boolean;
}

export class TrigramIndexer {
  private running: Promise<IndexerPass> | null = null;
  private again = false;
  /** blob ids whose file did not hold them, and the index they were tried with: not tried again until it changes */
  private failed = new Map<string, string>();
  /** the last pass, for `index status` and the bench */
  last: IndexerPass | null = null;
  /** The distinct blob ids of git's index a pass asked for coverage listed, and that index's identity (update). */
  private listed: { identity: string; oids: string[] } | null = null;
  /** Told after a pass that indexed something (a server collects its garbage then). */
  onIndexed: (pass: IndexerPass) => void = () => undefined;
  private closed = false;
  private readonly abort = new AbortController();
  /**
   * git's index and the trigram index (identity, version) after a pass that left nothing it could do: a kick
   * while both are the same has nothing to do either, and does not list git's index again (90,000 entries, about
   * 40 ms of a server's idle time after every call).
   */
  private doneFor: string | null = null;

  constructor(
    private readonly repo: RepoRoot,
    readonly index: TrigramIndex,
    private readonly opts: IndexerOptions,
  ) {}

  /** Starts a background pass unless one runs (then one more follows it). Never throws; errors end the pass. */
  kick(): void {
    if (this.closed || this.opts.diskBudget <= 0 || !this.repo.gitDir) return;
    if (!this.running && this.doneFor !== null && this.doneFor === this.stateKey()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.update().finally(() => {
      this.running = null;
      if (this.again && !this.closed) {
        this.again = false;
        this.kick();
      }
    });
    this.running.catch(() => {});
  }

  /** git's index file and the trigram index as they are now (doneFor). */
  private stateKey(): string {
    this.index.refresh();
    return `${indexIdentity(join(this.repo.gitDir as string, "index")) ?? ""}\0${this.index.version}`;
  }

  /** Resolves when no pass runs. */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }

  /** Stops building: jobs not started are dropped. */
  close(): void {
    this.closed = true;
    this.abort.abort(new Error("indexer closed"));
  }

  /**
   * One pass: indexes what git's index holds and the index does not. `forCoverage`: the pass keeps its listing's
   * distinct blob ids for the next coverage(), which then needs no second listing of git's index (the
   * `index build` command's answer: a listing of 90k entries is 150-250 ms at the end of a build).
   */
  async update(opts: { forCoverage?: boolean } = {}): Promise<IndexerPass> {
    const t0 = performance.now();
    const pass: IndexerPass = { missing: 0, indexed: 0, bytes: 0, segments: 0, left: 0, ms: 0, full: false };
    this.index.refresh();
    const identity = this.repo.gitDir ? (indexIdentity(join(this.repo.gitDir, "index")) ?? "") : "";
    const listing = await startIndexListing(this.repo, [ROOT]);
    const room = this.makeRoom(listing.stdout);
    const queue: BuildItem[] = [];
    const seen = new Set<string>();
    const distinct = opts.forCoverage ? new Set<string>() : null;
    // the listing is taken a piece at a time: the first job starts on the first piece, the rest is listed beside it
    const pieces = plainIndexFilePieces(listing.stdout);
    let listed = false;
    const listMore = () => {
      const next = pieces.next();
      if (next.done) return void (listed = true);
      for (const e of next.value) {
        const oid = e.gitOid as string;
        distinct?.add(oid);
        if (seen.has(oid) || this.index.hasOid(oid) || this.failed.get(oid) === identity) continue;
        seen.add(oid);
        pass.missing++;
        const sha256 = this.opts.known?.(oid);
        if (sha256) queue.push({ path: e.path, kind: oid.length === 40 ? EXPECT_SHA256_OF_GIT_SHA1 : EXPECT_SHA256_OF_GIT_SHA256, id: sha256, gitOid: oid });
        else queue.push({ path: e.path, kind: oid.length === 40 ? EXPECT_GIT_SHA1 : EXPECT_GIT_SHA256, id: oid });
      }
    };
    if (!room) {
      while (!listed) listMore();
      pass.full = pass.missing > 0;
    }
    const m = nativeModule();
    const pairCap = Math.max(1, Math.floor(this.opts.memoryBudget / 8 / JOBS_IN_FLIGHT));
    const build = { fileLimit: this.opts.fileLimit ?? DEFAULT_FILE_LIMIT, pairCap, background: this.opts.background, signal: this.abort.signal };
    const inFlight = new Set<Promise<void>>();
    while (!pass.full && (!listed || queue.length > 0 || inFlight.size > 0)) {
      this.abort.signal.throwIfAborted(); // closed: no more jobs (those in flight were dropped)
      // a job takes a full share of files while the listing lasts, what is left after it
      while (!listed && queue.length < FILES_PER_JOB) listMore();
      while (queue.length > 0 && inFlight.size < (m ? JOBS_IN_FLIGHT : 1)) {
        if (this.index.diskBytes >= this.opts.diskBudget) {
          pass.full = true;
          break;
        }
        const items = queue.splice(0, FILES_PER_JOB);
        const job: Promise<void> = buildSegment(m, this.repo.root, items, build).then((r) => {
          inFlight.delete(job);
          if (r.segment) {
            this.index.add(this.repo.stateDir, r.segment);
            pass.segments++;
          }
          pass.bytes += r.bytes;
          r.status.forEach((s, i) => {
            const item = items[i] as BuildItem;
            if (s === TEXT || s === BINARY) pass.indexed++;
            else if (s === DEFERRED) queue.push(item);
            else this.failed.set(item.gitOid ?? item.id, identity);
          });
        });
        // a job that fails while the listing goes on is not awaited yet: its failure comes out of the race below
        job.catch(() => {});
        inFlight.add(job);
      }
      if (pass.full) break;
      // with jobs running, the listing goes on a piece at a time, between their answers
      if (!listed) {
        listMore();
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else if (inFlight.size > 0) await Promise.race(inFlight);
    }
    // stopped by the disk budget: the rest of the listing still counts (missing, coverage)
    while (!listed) listMore();
    await Promise.all(inFlight);
    pass.left = pass.missing - pass.indexed;
    pass.ms = performance.now() - t0;
    // every blob indexed or failed for this index of git's (none deferred, no budget reached): done until either changes
    this.doneFor = !pass.full && identity !== "" ? `${identity}\0${this.index.version}` : null;
    this.listed = distinct && identity !== "" ? { identity, oids: [...distinct] } : null;
    this.last = pass;
    if (pass.indexed > 0 || pass.segments > 0) {
      try {
        this.onIndexed(pass);
      } catch {
        // a listener's failure is not the pass's
      }
    }
    return pass;
  }

  /** How much of git's index the index holds, and its size. */
  async coverage(): Promise<{ segments_total: number; blobs_indexed: number; disk_bytes: number; index_blobs: number; index_blobs_covered: number }> {
    this.index.refresh();
    let oids: Iterable<string> = [];
    const listed = this.listed;
    this.listed = null;
    if (this.repo.gitDir) {
      // the last pass's listing when git's index is the one it listed (identity taken before that listing)
      if (listed && listed.identity === indexIdentity(join(this.repo.gitDir, "index"))) oids = listed.oids;
      else oids = new Set(plainIndexFiles((await startIndexListing(this.repo, [ROOT])).stdout).map((e) => e.gitOid as string));
    }
    let blobs = 0;
    let covered = 0;
    for (const oid of oids) {
      blobs++;
      if (this.index.hasOid(oid)) covered++;
    }
    return { segments_total: this.index.segmentCount, blobs_indexed: this.index.blobs, disk_bytes: this.index.diskBytes, index_blobs: blobs, index_blobs_covered: covered };
  }

  /** Removes every segment; returns how many. */
  clear(): number {
    this.index.refresh();
    const names = this.index.list().map((s) => s.name);
    this.index.remove(names);
    return names.length;
  }

  /**
   * Within the disk budget: when over it, segments most of whose blobs git's index no longer holds are removed
   * (their blobs that it still holds are indexed again). False when still over.
   */
  private makeRoom(listing: Uint8Array): boolean {
    if (this.index.diskBytes < this.opts.diskBudget) return true;
    const live = new Set(plainIndexFiles(listing).map((e) => e.gitOid as string));
    const counts = new Map<string, { live: number; all: number }>();
    for (const { oid, segment } of this.index.gitOids()) {
      const c = counts.get(segment) ?? { live: 0, all: 0 };
      c.all++;
      if (live.has(oid)) c.live++;
      counts.set(segment, c);
    }
    const stale = [...counts].filter(([, c]) => c.live * 2 < c.all).map(([name]) => name);
    if (stale.length > 0) this.index.remove(stale);
    return this.index.diskBytes < this.opts.diskBudget;
  }
}
