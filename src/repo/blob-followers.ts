/**
 * Clean tracked files that hold a blob another path of the same capture holds
 * (release trees side by side, vendored copies, generated files): the first
 * path of each blob id, its leader, is read and hashed; the others, its
 * followers, are only looked at. A follower takes its leader's outcome when
 * git's index vouches for it by the rules a capture trusts a clean file by
 * (hash-files.ts, trustCleanBefore): git status did not name it, git cannot
 * convert content here (no cutoff otherwise), and its ctime is older than
 * the cutoff, so it has not changed since git found it equal to the blob;
 * and it is a regular file of the blob's size. Anything else is read and
 * verified with git's hash. The cost of a follower is one lstat, on the
 * native module's threads.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { HashItem, HashOutcome, HashedFile } from "./hash-files";
import { type NativeModule, statRecordsOf } from "./native";

/** What a follower's lstat says: the fields a capture records, or null when it is not a regular file (or gone). */
export interface FollowerStat {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

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

/** lstat of every follower, on the native threads when there are any. */
export async function statFollowers(m: NativeModule | null, root: string, items: HashItem[], signal?: AbortSignal): Promise<(FollowerStat | null)[]> {
  if (!m) return items.map((item) => statHere(join(root, item.path)));
  const L = m.layout;
  const records = await statRecordsOf(m, root, items.map((i) => i.path), signal);
  return items.map((_, k) => {
    const at = k * L.STAT_RECORD;
    if (records[at + L.SJ_STATUS] !== 0) return null;
    return { size: records.readDoubleLE(at + L.SJ_SIZE), mtimeMs: records.readDoubleLE(at + L.SJ_MTIME), ctimeMs: records.readDoubleLE(at + L.SJ_CTIME), ino: records.readDoubleLE(at + L.SJ_INO) };
  });
}

function statHere(abs: string): FollowerStat | null {
  try {
    const st = lstatSync(abs);
    return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino } : null;
  } catch {
    return null;
  }
}

/**
 * The followers' outcomes taken from their leaders where the index vouches for them (`trustBefore`: the ctime
 * cutoff; 0 trusts none); the others come back in `again`, to be read.
 */
export function settleFollowers(followers: HashItem[], stats: (FollowerStat | null)[], leaders: HashOutcome[], trustBefore: number): { outcomes: HashOutcome[]; again: HashItem[] } {
  const blobs = new Map<string, HashedFile>();
  for (const o of leaders) if (o.kind === "ok" && o.gitOid !== "") blobs.set(o.gitOid, o);
  const outcomes: HashOutcome[] = [];
  const again: HashItem[] = [];
  const hashedAt = Date.now();
  followers.forEach((item, k) => {
    const blob = blobs.get(item.gitOid as string);
    const st = stats[k];
    if (!blob || !st || st.size !== blob.size || !(st.ctimeMs < trustBefore)) return again.push(item);
    outcomes.push({ index: item.index, kind: "ok", sha256: blob.sha256, gitOid: blob.gitOid, mode: item.mode as HashedFile["mode"], size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hashedAt });
  });
  return { outcomes, again };
}
