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
import type { HashItem, HashOutcome, VouchedFile } from "./hash-files";

/** Items split into the first item of each clean blob id (and every other item) and the later ones of a blob id. */
export interface FollowerSplit {
  leaders: HashItem[];
  followers: HashItem[];
  /** For each follower, the position of its leader in `leaders`. */
  leaderOf: number[];
}

/** Splits made, by the item list: a read ahead splits its list to copy each blob's git object once, then hashes it. */
const splits = new WeakMap<readonly HashItem[], FollowerSplit>();

/** The split of `items`, which must not change afterwards: made once per list. */
export function splitFollowers(items: readonly HashItem[]): FollowerSplit {
  const known = splits.get(items);
  if (known) return known;
  const first = new Map<string, number>();
  const leaders: HashItem[] = [];
  const followers: HashItem[] = [];
  const leaderOf: number[] = [];
  for (const item of items) {
    const clean = item.gitOid !== undefined && (item.mode === "100644" || item.mode === "100755");
    if (!clean) {
      leaders.push(item);
      continue;
    }
    const lead = first.get(item.gitOid as string);
    if (lead !== undefined) {
      followers.push(item);
      leaderOf.push(lead);
    } else {
      first.set(item.gitOid as string, leaders.length);
      leaders.push(item);
    }
  }
  const split = { leaders, followers, leaderOf };
  splits.set(items, split);
  return split;
}

/**
 * The followers' outcomes taken from their leaders where the index vouches for them (`trusting`: the capture's
 * cutoff is set) and the leader's bytes were the blob; the others come back in `again`, to be read.
 */
export function settleFollowers(split: FollowerSplit, leaderOutcomes: HashOutcome[], trusting: boolean): { outcomes: VouchedFile[]; again: HashItem[] } {
  const { leaders, followers, leaderOf } = split;
  if (!trusting) return { outcomes: [], again: followers };
  // each leader's outcome at its item's index (outcomes come in no particular order)
  let top = 0;
  for (const item of leaders) if (item.index > top) top = item.index;
  const byIndex = new Array<HashOutcome | undefined>(top + 1);
  for (const o of leaderOutcomes) byIndex[o.index] = o;
  /** each leader's blob id, made once for all its followers */
  const blobs = new Array<BlobId | undefined>(leaders.length);
  const outcomes: VouchedFile[] = [];
  const again: HashItem[] = [];
  for (let k = 0; k < followers.length; k++) {
    const item = followers[k] as HashItem;
    const pos = leaderOf[k] as number;
    const leader = leaders[pos] as HashItem;
    const lead = byIndex[leader.index];
    if (lead?.kind !== "ok" || lead.gitOid !== leader.gitOid) {
      again.push(item);
      continue;
    }
    const blob = (blobs[pos] ??= blobIdFromHex(lead.sha256));
    outcomes.push({ index: item.index, kind: "vouched", leadAt: leader.index, blob, sha256: lead.sha256, gitOid: lead.gitOid, mode: item.mode as VouchedFile["mode"], size: lead.size });
  }
  return { outcomes, again };
}
