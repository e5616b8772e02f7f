/**
 * Clean tracked files that hold a blob another path of the same capture holds
 * (release trees side by side, vendored copies, generated files): the first
 * path of each blob id, its leader, is read and hashed; the others, its
 * followers, are not touched. A follower takes its leader's outcome when
 * git's index vouches for it as it vouches for a clean file whose blob a warm
 * capture already knows (capture.ts): git status did not name it, and git
 * cannot convert content here (the capture's trust cutoff is set: no cutoff
 * otherwise), so at the status the fingerprint names it held its index
 * blob; and its leader's bytes were that blob. Without a cutoff, or when the
 * leader's bytes were not the blob, it is read and verified like any file.
 * A read ahead settles its followers before git status is in, when a leader
 * may turn out modified (read as other bytes under its index blob's id): the
 * capture keeps a follower only where the status found its leader clean too,
 * and reads the others (capture.ts).
 */
import { blobIdFromHex, type BlobId } from "../core/hash";
import { oidPrefixKey } from "./git-blob-map";
import type { HashItem, HashOutcome, VouchedFile } from "./hash-files";
import { perPath } from "../core/per-path";

/** Items split into the first item of each clean blob id (and every other item) and the later ones of a blob id. */
export interface FollowerSplit {
  leaders: HashItem[];
  followers: HashItem[];
  /** For each follower, the position of its leader in `leaders`. */
  leaderOf: number[];
}

/** Splits made, by the item list: a read ahead's hashing splits its list, and the copy of its git objects takes each blob once from the same split. */
const splits = new WeakMap<readonly HashItem[], FollowerSplit>();

/** The split of `items`, which must not change afterwards: made once per list. */
export function splitFollowers(items: readonly HashItem[]): FollowerSplit {
  const known = splits.get(items);
  if (known) return known;
  // each blob id's first item, by the id's first 48 bits (a number key); ids that share them, by the whole id
  const first = new Map<number, number>();
  const shared = new Map<string, number>();
  const leaders: HashItem[] = [];
  const followers: HashItem[] = [];
  const leaderOf: number[] = [];
  for (const item of items) {
    const oid = item.gitOid;
    if (oid === undefined || (item.mode !== "100644" && item.mode !== "100755")) {
      leaders.push(item);
      continue;
    }
    const key = oidPrefixKey(oid);
    let lead = first.get(key);
    if (lead !== undefined && (leaders[lead] as HashItem).gitOid !== oid) lead = shared.get(oid);
    if (lead !== undefined) {
      followers.push(item);
      leaderOf.push(lead);
    } else {
      if (first.has(key)) shared.set(oid, leaders.length);
      else first.set(key, leaders.length);
      leaders.push(item);
    }
  }
  const split = { leaders, followers, leaderOf };
  splits.set(items, split);
  return split;
}
perPath(splitFollowers);


/**
 * The split of a read ahead's items as the native planner made it from the listing (src/native/listing_plan.c:
 * the first plain record of each blob id leads it), `plainAt` giving each item's plain record and `plan` the
 * planner's answer (NativeModule.hashStartListing). A leader whose record is not an item (its name is reserved
 * or not UTF-8) stands in `leaders` as a placeholder of index -1: never an outcome, so its followers are read
 * (FollowerSettler's `again`). Remembered as the split of `items`. null when the plan does not count the items'
 * records as they were counted.
 */
export function splitFromPlan(items: readonly HashItem[], plainAt: Int32Array, plan: Int32Array): FollowerSplit | null {
  const plain = plan[0] as number;
  const count = plan[1] as number;
  if (plan.length !== 2 + plain + count || plainAt.length !== items.length) return null;
  const itemOf = new Int32Array(plain).fill(-1);
  for (let i = 0; i < items.length; i++) {
    const p = plainAt[i] as number;
    if (p >= plain) return null;
    itemOf[p] = i;
  }
  const leaders: HashItem[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const i = itemOf[plan[2 + plain + k] as number] as number;
    leaders[k] = i >= 0 ? (items[i] as HashItem) : { index: -1, path: "", gitOid: "", mode: "100644" };
  }
  const followers: HashItem[] = [];
  const leaderOf: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as HashItem;
    const k = plan[2 + (plainAt[i] as number)] as number;
    const leader = leaders[k] as HashItem;
    if (leader === item) continue;
    if (leader.index < 0 && leader.gitOid === "") leader.gitOid = item.gitOid; // a placeholder takes its blob's id
    followers.push(item);
    leaderOf.push(k);
  }
  const split = { leaders, followers, leaderOf };
  splits.set(items, split);
  return split;
}

/**
 * Settles followers from their leaders' outcomes (the capture's cutoff is set: no follower is split off
 * otherwise): where the leader's bytes were the blob, a follower takes the leader's outcome; the others come
 * back in `again`, to be read. Outcomes may be given as they come (`leader`, then `advance`, while the rest is
 * still being read: the followers whose leaders are all in settle in order), and `finish` settles the rest.
 */
export class FollowerSettler {
  /** each leader's position by its item's index (-1: not a leader) */
  private readonly posOf: Int32Array;
  /** each leader's outcome by position, once in; `null`: it comes at the end (the TypeScript path hashes it) */
  private readonly byPos: (HashOutcome | null | undefined)[];
  /** each leader's blob id, made once for all its followers */
  private readonly blobs: (BlobId | undefined)[];
  /** followers before this one are settled, or wait in `late` for a leader hashed at the end */
  private next = 0;
  private readonly late: number[] = [];
  private readonly outcomes: VouchedFile[] = [];
  private readonly again: HashItem[] = [];

  constructor(
    private readonly split: FollowerSplit,
    /** told each follower's outcome as it is settled (not those read again: theirs come from the reading) */
    private readonly onResult?: (o: HashOutcome) => void,
  ) {
    let top = -1;
    for (const item of split.leaders) if (item.index > top) top = item.index;
    this.posOf = new Int32Array(top + 1).fill(-1);
    this.byPos = new Array(split.leaders.length);
    for (let pos = 0; pos < split.leaders.length; pos++) {
      const item = split.leaders[pos] as HashItem;
      if (item.index >= 0) this.posOf[item.index] = pos;
      else this.byPos[pos] = null; // a placeholder (splitFromPlan): its followers are read
    }
    this.blobs = new Array(split.leaders.length);
  }

  /** A leader's outcome as it comes; null when it goes to the TypeScript path, whose outcome `finish` gets. */
  leader(item: HashItem, outcome: HashOutcome | null): void {
    const pos = item.index < this.posOf.length ? (this.posOf[item.index] as number) : -1;
    if (pos >= 0) this.byPos[pos] = outcome;
  }

  /** Settles the followers, in order, up to the first whose leader has not come yet. */
  advance(): void {
    const { followers, leaderOf } = this.split;
    for (; this.next < followers.length; this.next++) {
      const pos = leaderOf[this.next] as number;
      const lead = this.byPos[pos];
      if (lead === undefined) return;
      if (lead === null) this.late.push(this.next);
      else this.settle(this.next, pos, lead);
    }
  }

  /** Every leader's outcome (in any order): the followers not settled yet are settled from them. */
  finish(leaderOutcomes: HashOutcome[]): { outcomes: VouchedFile[]; again: HashItem[] } {
    for (const o of leaderOutcomes) {
      const pos = o.index < this.posOf.length ? (this.posOf[o.index] as number) : -1;
      if (pos >= 0) this.byPos[pos] = o;
    }
    const { followers, leaderOf } = this.split;
    for (const k of this.late) this.settle(k, leaderOf[k] as number, this.byPos[leaderOf[k] as number]);
    for (; this.next < followers.length; this.next++) this.settle(this.next, leaderOf[this.next] as number, this.byPos[leaderOf[this.next] as number]);
    return { outcomes: this.outcomes, again: this.again };
  }

  private settle(k: number, pos: number, lead: HashOutcome | null | undefined): void {
    const item = this.split.followers[k] as HashItem;
    const leader = this.split.leaders[pos] as HashItem;
    // the leader's bytes must be the follower's own index blob (whichever way the split was made)
    if (lead?.kind !== "ok" || lead.gitOid !== item.gitOid) {
      this.again.push(item);
      return;
    }
    const blob = (this.blobs[pos] ??= blobIdFromHex(lead.sha256));
    const o: VouchedFile = { index: item.index, kind: "vouched", leadAt: leader.index, blob, sha256: lead.sha256, gitOid: lead.gitOid, mode: item.mode as VouchedFile["mode"], size: lead.size };
    this.outcomes.push(o);
    this.onResult?.(o);
  }
}

perPath(FollowerSettler.prototype["settle"]);
