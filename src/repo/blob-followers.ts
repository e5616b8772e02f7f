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
 */
import type { HashItem, HashOutcome, VouchedFile } from "./hash-files";

/** Items split into the first item of each clean blob id (and every other item) and the later ones of a blob id. */
export function splitFollowers(items: HashItem[]): { leaders: HashItem[]; followers: HashItem[] } {
  const seen = new Set<string>();
  const leaders: HashItem[] = [];
  const followers: HashItem[] = [];
  for (const item of items) {
    const clean = item.gitOid !== undefined && (item.mode === "100644" || item.mode === "100755");
    if (!clean) leaders.push(item);
    else if (seen.has(item.gitOid as string)) followers.push(item);
    else {
      seen.add(item.gitOid as string);
      leaders.push(item);
    }
  }
  return { leaders, followers };
}

/**
 * The followers' outcomes taken from their leaders where the index vouches for them (`trusting`: the capture's
 * cutoff is set); the others come back in `again`, to be read.
 */
export function settleFollowers(followers: HashItem[], leaders: HashOutcome[], trusting: boolean): { outcomes: VouchedFile[]; again: HashItem[] } {
  if (!trusting) return { outcomes: [], again: followers };
  const blobs = new Map<string, { sha256: string; size: number }>();
  for (const o of leaders) if (o.kind === "ok" && o.gitOid !== "") blobs.set(o.gitOid, o);
  const outcomes: VouchedFile[] = [];
  const again: HashItem[] = [];
  for (const item of followers) {
    const blob = blobs.get(item.gitOid as string);
    if (!blob) again.push(item);
    else outcomes.push({ index: item.index, kind: "vouched", sha256: blob.sha256, gitOid: item.gitOid as string, mode: item.mode as VouchedFile["mode"], size: blob.size });
  }
  return { outcomes, again };
}
