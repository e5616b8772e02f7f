import type { HashItem, HashOptions, HashOutcome } from "./hash-files";
import { errnoError, joinPaths, type NativeJob, type NativeModule, waitReady } from "./native";
import { perPath } from "../core/per-path";

/** Files the native hash job takes: clean tracked regular files (git's ids SHA-1 or SHA-256). */
export function nativeHashable(item: HashItem): boolean {
  const n = item.gitOid?.length;
  return (n === 40 || n === 64) && (item.mode === "100644" || item.mode === "100755");
}

export interface NativeHashed {
  outcomes: HashOutcome[];
  /** Items to hash again the TypeScript way: content that is not the index blob, or that changed while read. */
  fallback: HashItem[];
}

/**
 * Hashes clean tracked files with the native module (src/native/hash_job.c),
 * under the same rules as FileHasher.hashClean: a file trusted to be its
 * index blob skips git's hash; any other gets it, and one whose git hash is
 * not its index blob id (or that changed during the read) is handed back in
 * `fallback`, for FileHasher to hash and store.
 */
export async function hashNatively(
  m: NativeModule,
  opts: HashOptions & { streamThreshold: number },
  items: HashItem[],
  onProgress?: (done: number) => void,
  signal?: AbortSignal,
  onOutcome?: OutcomeListener,
  /** the job over `items`, started already (hashStartListing); placeholders of index -1 among them give no outcome */
  started?: NativeJob,
  /** told each outcome as it is known (not the fallbacks: the TypeScript path's outcomes are theirs) */
  onResult?: (o: HashOutcome) => void,
): Promise<NativeHashed> {
  const L = m.layout;
  // one repository, one object format: every item's id is as long as the first's (hashAll keeps them apart)
  const job = started ?? m.hashStart(opts.root, joinPaths(items.map((i) => i.path)), items.length, opts.trustCleanBefore, opts.streamThreshold, idBytesOf(items));
  const outcomes: HashOutcome[] = [];
  const fallback: HashItem[] = [];
  /** records turned into outcomes as the job's finished prefix grows, not all at the end */
  let taken = 0;
  const take = (upTo: number): void => {
    if (upTo <= taken) return;
    const records = m.hashRecords(job, taken, upTo);
    const from = taken;
    taken = upTo;
    const hashedAt = Date.now(); // after these files were read
    for (let k = from; k < upTo; k++) {
      const item = items[k] as HashItem;
      if (item.index < 0) continue;
      const o = outcomeOf(records, (k - from) * L.HASH_RECORD, L, item, hashedAt);
      if (o) {
        outcomes.push(o);
        onResult?.(o);
      } else fallback.push(item);
      onOutcome?.(item, o);
    }
  };
  try {
    await waitReady(
      m,
      job,
      items.length,
      (n) => {
        take(n);
        onProgress?.(n);
      },
      signal,
    );
    take(items.length);
  } finally {
    m.release(job);
  }
  return { outcomes, fallback };
}

/** The bytes of git's ids among `items` (20: SHA-1, 32: SHA-256), from the first that has one. */
function idBytesOf(items: readonly HashItem[]): number {
  for (const item of items) if (item.gitOid) return item.gitOid.length / 2;
  return 20;
}

/** Told each item's outcome as its record comes in (null: the TypeScript path must hash it, a fallback). */
export type OutcomeListener = (item: HashItem, outcome: HashOutcome | null) => void;

/** What a native hash of a clean tracked file says, or null when the TypeScript path must hash it (a fallback). */
function outcomeOf(records: Buffer, at: number, L: NativeModule["layout"], item: HashItem, hashedAt: number): HashOutcome | null {
  const status = records[at + L.HR_STATUS];
  if (status === 1) return { index: item.index, kind: "vanished" };
  if (status === 2) return { index: item.index, kind: "denied" };
  if (status === 5) return { index: item.index, kind: "special" };
  if (status === 3) throw errnoError(records.readInt32LE(at + L.HR_ERRNO), item.path);
  if (status !== 0) return null;
  const idBytes = (item.gitOid as string).length / 2;
  const gitOid = records[at + L.HR_TRUSTED] ? (item.gitOid as string) : records[at + L.HR_HASHED] ? records.toString("hex", at + L.HR_GIT, at + L.HR_GIT + idBytes) : "";
  if (gitOid !== item.gitOid) return null;
  return {
    index: item.index,
    kind: "ok",
    sha256: records.toString("hex", at + L.HR_SHA256, at + L.HR_SHA256 + 32),
    gitOid,
    mode: item.mode as "100644" | "100755",
    size: records.readDoubleLE(at + L.HR_SIZE),
    mtimeMs: records.readDoubleLE(at + L.HR_MTIME),
    ctimeMs: records.readDoubleLE(at + L.HR_CTIME),
    ino: records.readDoubleLE(at + L.HR_INO),
    hashedAt,
  };
}
perPath(outcomeOf);

