import type { GitResult } from "./git";
import { ROOT, type RepoPath } from "../core/repo-path";
import { ConversionCheck } from "./content-conversion";
import { STREAM_THRESHOLD, type HashItem, type HashOutcome } from "./hash-files";
import { splitFollowers, splitFromPlan, type FollowerSplit } from "./blob-followers";
import { hashInParallel } from "./hash-pool";
import { nativeModule, type NativeJob } from "./native";
import type { RepoBlobStore } from "./repo-blob-store";
import type { RepoRoot } from "./root";
import { RACY_MARGIN_MS } from "./stat-cache";
import { plainIndexItems, plainIndexItemsAt } from "./tree-scan";
import { perPath } from "../core/per-path";

/**
 * The files being read ahead, known as soon as the index listing is in, and
 * where a path is among them. A capture asks for its candidates in byte
 * order, the order of the items (both come from the listing, whose path
 * strings they share), so the answer is almost always the next item, found by
 * identity; a path out of step (a run of files git status named, which the
 * capture takes as they are) is looked up in a map of every path, made on the
 * first such miss, and the cursor goes on from there.
 */
export class PrehashList {
  private next = 0;
  private byPath: Map<string, number> | null = null;

  constructor(readonly items: HashItem[]) {}

  /** The index of `path`'s item (and of its outcome), if it is read ahead. */
  find(path: string): number | undefined {
    const items = this.items;
    for (let k = this.next; k < items.length && k < this.next + LOOK_AHEAD; k++) {
      if ((items[k] as HashItem).path === path) {
        this.next = k + 1;
        return k;
      }
    }
    if (!this.byPath) {
      this.byPath = new Map();
      for (let k = 0; k < items.length; k++) this.byPath.set((items[k] as HashItem).path, k);
    }
    const k = this.byPath.get(path);
    if (k !== undefined) this.next = k + 1;
    return k;
  }
}

perPath(PrehashList.prototype.find);

/** Items find() steps over before it looks a path up. */
const LOOK_AHEAD = 8;

/**
 * Clean tracked files read and hashed while `git status` is still running:
 * on a cold store that is most of a capture's work, and it needs only the
 * index listing, which comes back long before the status. The status then
 * decides which of these results count (files it names as changed are read
 * again as what they are). Trust works as in captureEntries: a file counts
 * as its index blob without git's hash only if its ctime, taken after the
 * read, is safely older than the moment the status started.
 */
export class Prehash {
  private readonly abort = new AbortController();
  /** What is being read, long before it is read. */
  readonly listed: Promise<PrehashList>;
  /** Every outcome, each at its item's index; rejects if cancelled. */
  readonly outcomes: Promise<HashOutcome[]>;
  /** The copy of the read files' git objects into the private store. */
  readonly importing: Promise<void>;
  /** Whether git may convert content here, asked of the read files' directories; the capture asks it of the rest. */
  readonly conversion: ConversionCheck;
  /**
   * Whether the reading has a trust cutoff, and so settles followers from their leaders (blob-followers.ts):
   * known before the reading starts. False when the read ahead fails or is cancelled first.
   */
  readonly vouching: Promise<boolean>;

  /**
   * `statusStartedAt` must not be later than the start of the status whose
   * answer will be used (an earlier time only trusts fewer files).
   */
  constructor(
    repo: RepoRoot,
    store: RepoBlobStore,
    listing: Promise<GitResult>,
    scope: readonly RepoPath[],
    statusStartedAt: number,
    onProgress?: (done: number, total: number) => void,
  ) {
    // a listing of the whole tree at the top of the work tree is the whole index: the check looks in it
    const wholeIndex = repo.gitPrefix === "" && scope.length === 1 && scope[0] === ROOT ? listing.then((l) => l.stdout) : undefined;
    this.conversion = new ConversionCheck(repo, wholeIndex);
    this.conversion.begin(); // the configuration is read while the listing comes
    const cutoff = statusStartedAt - RACY_MARGIN_MS;
    /** the reading started natively from the listing, before it is parsed here (startPlanned) */
    let planned: Planned | null = null;
    const items = listing.then((l) => {
      // a read ahead is for a store that knows no blob (worthwhile): a lookup per file only when one came meanwhile
      const known = store.gitMap.isEmpty() ? null : store.gitMap;
      if (known) return plainIndexItems(l.stdout, (oid) => known.has(oid));
      planned = startPlanned(repo, l.stdout, cutoff);
      return planned?.items ?? plainIndexItems(l.stdout);
    });
    const unplan = () => {
      if (planned) nativeModule()?.release(planned.job);
      planned = null;
    };
    items.catch(unplan);
    let reading!: () => void;
    const readingStarted = new Promise<void>((resolve) => (reading = resolve));
    let vouch!: (on: boolean) => void;
    this.vouching = new Promise<boolean>((resolve) => (vouch = resolve));
    this.outcomes = items.then(async (list) => {
      // A reading started from the listing (startPlanned) runs with the cutoff already: it is stopped, and the
      // files read again without it, if the attributes check says git may convert content here. Otherwise the
      // check answers first (its configuration was read while the listing came; then an lstat per directory) and
      // the reading starts with its cutoff: a file read before the answer would be verified with git's hash too,
      // as much CPU again as its SHA-256. Nothing else done with the list goes in between (the copy of the git
      // objects waits for the reading to start).
      let hashing: Promise<HashOutcome[]>;
      try {
        const possible = await this.conversion.possibleFor(list);
        if (possible || this.abort.signal.aborted) unplan();
        const opts = { root: repo.root, stateDir: repo.stateDir, trustCleanBefore: possible ? 0 : cutoff };
        vouch(opts.trustCleanBefore > 0);
        const report = onProgress ? (n: number) => onProgress(n, list.length) : undefined;
        const started = planned as Planned | null;
        planned = null; // the hashing owns the job from here on, and releases it
        hashing = hashInParallel(opts, list, report, this.abort.signal, started ?? undefined, this.heard.bind(this));
      } catch (err) {
        unplan();
        throw err;
      } finally {
        vouch(false); // when the check failed (a no-op once told)
        reading();
      }
      const outcomes = new Array<HashOutcome>(list.length);
      for (const o of await hashing) outcomes[o.index] = o;
      return outcomes;
    });
    this.listed = items.then((list) => new PrehashList(list));
    items.catch(() => vouch(false));
    // each blob once: the leaders of the split the hashing uses (every item read ahead is a clean file)
    this.importing = Promise.all([items, readingStarted]).then(([list]) => store.gitObjects.importFrom(repo, leaderOids(list)));
    // A cancelled or failed read ahead is reported to whoever awaits it, never as an unhandled rejection.
    this.listed.catch(() => {});
    this.outcomes.catch(() => {});
    this.importing.catch(() => {});
  }

  /** Outcomes in the order they came before a listener subscribed (subscribe). */
  private readonly got: HashOutcome[] = [];
  private listener: ((o: HashOutcome) => void) | null = null;

  /**
   * Tells `fn` every outcome: those in already, then each as it comes, before `outcomes` settles (a capture
   * takes them while the rest is read). One listener, once: the outcomes it was told are not kept.
   */
  subscribe(fn: (o: HashOutcome) => void): void {
    if (this.listener) throw new Error("the read ahead has a listener already");
    for (const o of this.got) fn(o);
    this.got.length = 0;
    this.listener = fn;
  }

  /** An outcome as it comes: told to the listener, or kept for the first one. */
  private heard(o: HashOutcome): void {
    if (this.listener) this.listener(o);
    else this.got.push(o);
  }

  /** Worth starting when the store knows few of the index's blobs: a cold capture. */
  static worthwhile(store: RepoBlobStore): boolean {
    return store.gitMap.isEmpty();
  }

  /** Stops reading (the state turned out to be captured already); waits for the readers to stop. */
  async cancel(): Promise<void> {
    this.abort.abort(new Error("read ahead cancelled"));
    await Promise.allSettled([this.listed, this.outcomes, this.importing]);
  }
}

perPath(Prehash.prototype["heard"]);

/** The blob ids of the split's leaders (a loop: a callback run per blob is one more function for the JIT). */
function leaderOids(list: HashItem[]): string[] {
  const out: string[] = [];
  for (const leader of splitFollowers(list).leaders) if (leader.gitOid) out.push(leader.gitOid);
  return out;
}

interface Planned {
  items: HashItem[];
  job: NativeJob;
  split: FollowerSplit;
}

/**
 * The read ahead's files read from the moment the listing is in: the native module splits the listing and
 * starts on the first path of each blob id (src/native/listing_plan.c) with the cutoff, while it is parsed here
 * (a cold capture's first file read about 200 ms sooner on 90,000 paths). null without the module, or if the
 * plan does not match the parse (the reading is stopped then): the caller starts
 * the reading itself, as before.
 */
function startPlanned(repo: RepoRoot, listing: Uint8Array, cutoff: number): Planned | null {
  const m = nativeModule();
  if (!m) return null;
  let started: [NativeJob | null, Int32Array];
  try {
    started = m.hashStartListing(repo.root, listing, cutoff, STREAM_THRESHOLD);
  } catch {
    return null; // the root could not be opened (no descriptor free): the reading as before reports it
  }
  const [job, plan] = started;
  if (!job) return null;
  const parsed = plainIndexItemsAt(listing);
  const split = parsed ? splitFromPlan(parsed.items, parsed.plainAt, plan) : null;
  if (!parsed || !split) {
    m.release(job);
    return null;
  }
  return { items: parsed.items, job, split };
}
