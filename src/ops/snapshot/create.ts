import { join } from "node:path";
import { searchUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound } from "../../core/errors";
import { ROOT, isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import { captureEntries, type CaptureResult } from "../../repo/capture";
import type { StagedFile } from "../../repo/atomic-write";
import type { Fingerprint, GitState } from "../../repo/fingerprint";
import type { SnapshotId } from "../../repo/manifest";
import type { GitTreeInputs, ScanSkips, TreeEntry } from "../../repo/tree-scan";
import { fingerprintJson } from "../../repo/fingerprint";
import type { GitResult } from "../../repo/git";
import { Prehash } from "../../repo/prehash";
import { flaggedEntriesDigest, startIndexListing } from "../../repo/tree-scan";
import { indexIdentity } from "../../repo/index-identity";
import { MAX_ABSENT, WarmCache, warmKey } from "../../repo/warm-cache";
import { INDEX_READS, indexChanging, indexSettle, liveTreeOf, readLiveInputs } from "../live/live-tree";
import { manifestStats, type ManifestStats, type SnapshotMeta } from "../../repo/snapshot-store";
import { refuseNamedUnreadable, unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";
import { acquireLease } from "../live/stale-lease";

export interface CreateSnapshotArgs {
  paths?: string[];
  lease_id?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /**
   * Named paths that hold no candidate file are left out (and listed in
   * `missing`) instead of failing with NOT_FOUND. The snapshot's `paths` still
   * name them: the snapshot covers them, as absent.
   */
  allowMissing?: boolean;
  /** The git state, when the caller read it already (to choose the paths from the status); git roots only. */
  gitState?: GitState;
}

export type CreateSnapshotResult = UnreadableFields & {
  snapshot_id: SnapshotId;
  cache_hint: "immutable";
  fingerprint: Fingerprint;
  created_at: string;
  manifest_stats: ManifestStats;
  skipped: ScanSkips & { vanished: number };
  /** With allowMissing: the named paths that held no file, in the order named. */
  missing?: string[];
};

/**
 * snapshot_create: captures the named paths (`.` = the whole tree) or, with
 * only a lease, the files that lease touched. The id is content-addressed, so
 * capturing an unchanged state again returns the same snapshot.
 */
export async function createSnapshot(ws: Workspace, args: CreateSnapshotArgs): Promise<CreateSnapshotResult> {
  if (args.paths === undefined && args.lease_id === undefined) {
    throw invalidArgument("pass paths (\".\" for the whole tree) or a lease_id whose touched files to capture", { arg: "paths" });
  }
  const named = args.paths === undefined ? null : parseScope(args.paths);
  const scope = named ?? [ROOT];
  // On a cold store, clean tracked files are read while git status runs (see Prehash).
  const indexFile = ws.repo.gitDir ? join(ws.repo.gitDir, "index") : null;
  for (let read = 1; ; read++) {
    // a read after the index changed starts afresh: no read ahead, and the caller's state is not the index's now
    const first = read === 1;
    // taken before anything reads the index (the caller's status, the read ahead's listing): see IndexReplaced
    const indexBefore = first && args.gitState ? args.gitState.index : indexFile ? indexIdentity(indexFile) : null;
    const comparedBefore = Date.now();
    const early = first && named && ws.repo.gitDir && Prehash.worthwhile(ws.blobs) ? startIndexListing(ws.repo, scope) : undefined;
    const prehash = early ? new Prehash(ws.repo, ws.blobs, early, scope, comparedBefore, args.onProgress) : undefined;
    try {
      return await create(ws, first ? args : { ...args, gitState: undefined }, named, scope, prehash, early, { file: indexFile, before: indexBefore });
    } catch (err) {
      if (!(err instanceof IndexReplaced)) throw err;
      if (read >= INDEX_READS) throw indexChanging(read);
    } finally {
      // Settled already when the capture used it; stopped here when the state was captured before or on error.
      await prehash?.cancel();
    }
    await indexSettle(read);
  }
}

/**
 * The index was replaced while a capture read it (another program staged or unstaged files): its status and its
 * listing may be of two indexes, and the capture a tree that never was (readLiveTree). Nothing is saved, and the
 * capture runs again.
 */
class IndexReplaced extends Error {}

async function create(
  ws: Workspace,
  args: CreateSnapshotArgs,
  named: RepoPath[] | null,
  scope: RepoPath[],
  prehash: Prehash | undefined,
  early: Promise<GitResult> | undefined,
  index: { file: string | null; before: string | null },
): Promise<CreateSnapshotResult> {
  // The fingerprint does not tell which index entries git status does not look at (warm-cache.ts): a remembered
  // capture names the index file it read, taken before anything is read, and a capture during which the index was
  // replaced is neither remembered nor saved (IndexReplaced).
  const indexFile = index.file;
  const indexBefore = index.before;
  const replaced = () => indexFile !== null && indexIdentity(indexFile) !== indexBefore;
  const inputs = await readLiveInputs(ws, scope, { lazyListing: true, listing: early, state: args.gitState });
  const fingerprint = inputs.fingerprint;
  let wanted: RepoPath[];
  if (args.lease_id !== undefined) {
    const lease = await acquireLease(ws, args.lease_id, fingerprint);
    wanted = named ?? [...lease.touched.entries()].filter(([, blob]) => blob !== null).map(([p]) => p as RepoPath);
    if (wanted.length === 0) throw invalidArgument("the lease has touched no files yet; pass paths to capture", { arg: "lease_id" });
  } else {
    wanted = named as RepoPath[];
  }
  const warm = named && inputs.git ? new WarmCache(ws.repo.stateDir) : null;
  // With a tree-able index, index_oid already names every tracked path, mode and blob; only an unmerged
  // index needs the listing itself in the key.
  const listing = inputs.git && fingerprint.index_oid === "" ? await inputs.git.listing() : new Uint8Array();
  const key = warm && inputs.git ? warmKey(fingerprintJson(fingerprint), scope, listing, inputs.git.untracked.map((u) => u.path)) : "";
  const hit = warm ? await warm.lookup(key, ws.repo.root, indexBefore, async () => flaggedEntriesDigest(await (inputs.git as GitTreeInputs).listing())) : null;
  if (hit && ws.snapshots.has(hit.snapshot_id)) {
    if (replaced()) throw new IndexReplaced();
    ws.snapshots.freshen(hit.snapshot_id); // handed out again: used now, as far as gc's retention goes
    const meta = ws.snapshots.loadMeta(hit.snapshot_id.slice(7));
    const out: CreateSnapshotResult = { snapshot_id: meta.snapshot_id, cache_hint: "immutable", fingerprint, created_at: meta.created_at, manifest_stats: meta.manifest_stats, skipped: hit.skipped };
    if (args.allowMissing) out.missing = missingOf(wanted, ws.snapshots.load(meta.snapshot_id).entries);
    return out;
  }
  const live = await liveTreeOf(inputs);
  const touchedSet = named ? null : new Set<string>(wanted);
  const candidates = touchedSet ? live.entries.filter((e) => touchedSet.has(e.path)) : live.entries;
  // a path named explicitly that cannot be read is refused; a caller that allows missing paths gets it named instead
  if (named && !args.allowMissing) refuseNamedUnreadable(ws.repo, named, live.unreadable);
  const missing = missingOf(wanted, candidates);
  if (missing.length > 0 && !args.allowMissing) {
    throw notFound(`${missing[0]} does not exist in the work tree (or is ignored)`, { path: missing[0] });
  }
  // the manifest is encoded, written and hashed for the id as the capture completes its entries
  const manifest = ws.snapshots.manifestWriter(fingerprint);
  let captured: CaptureResult;
  let staged: StagedFile;
  let id: Promise<SnapshotId>;
  try {
    captured = await captureEntries(ws.repo, ws.blobs, candidates, {
      signal: args.signal,
      onProgress: args.onProgress,
      gitComparedAt: live.gitComparedAt,
      prehash,
      learntByCaller: true,
      onEntry: (entry) => manifest.add(entry),
    });
    if (named && !args.allowMissing) refuseNamedUnreadable(ws.repo, named, captured.unreadable);
    // before anything is kept: the pairs a capture of two indexes learnt may be wrong (CaptureResult.learnt)
    if (replaced()) throw new IndexReplaced();
    // entered at the map's flush, while the I/O threads flush the manifest (below)
    ws.blobs.gitMap.addLater(captured.learnt);
    ({ staged, id } = manifest.end());
  } catch (err) {
    manifest.abort();
    throw err;
  }
  const unreadable = [...live.unreadable, ...captured.unreadable];
  let meta: SnapshotMeta;
  try {
    let bytes = 0;
    for (const e of captured.entries) bytes += e.size;
    const snapshotId = await id;
    const saving = ws.snapshots.save(
      {
        snapshot_id: snapshotId,
        fingerprint,
        created_at: new Date().toISOString(),
        manifest_stats: manifestStats(captured.entries.length, bytes, unreadable.length),
        paths: wanted,
      },
      staged,
    );
    // the blobs the capture learnt enter the map while the I/O threads flush the manifest
    ws.blobs.gitMap.flush();
    meta = await saving;
  } catch (err) {
    await staged.discard();
    throw err;
  }
  const snapshotId = meta.snapshot_id;
  const skipped = { ...live.skipped, vanished: captured.vanished.length };
  // a capture that skipped files is not remembered: the same state, readable again, must be captured whole
  const absent = live.absentSkipWorktree;
  if (warm && captured.vanished.length === 0 && unreadable.length === 0 && absent.length <= MAX_ABSENT && !replaced()) {
    const loose = looseEntries(candidates, captured.entries);
    const flagged = flaggedEntriesDigest(await (inputs.git as GitTreeInputs).listing());
    warm.put(key, { snapshot_id: snapshotId, loose, skipped, ...(absent.length > 0 ? { absent } : {}), index: indexBefore, flagged });
  }
  const out: CreateSnapshotResult = {
    snapshot_id: snapshotId,
    cache_hint: "immutable",
    fingerprint,
    created_at: meta.created_at,
    manifest_stats: meta.manifest_stats,
    skipped,
    ...unreadableFields(unreadable),
  };
  // what could not be read is named as unreadable, not missing
  if (args.allowMissing) out.missing = missingOf(wanted, [...captured.entries, ...unreadable.map((path) => ({ path }))]);
  return out;
}

/** The captured entries git does not hold (untracked or changed), as [path, sha256 hex], for the warm cache. */
function looseEntries(candidates: readonly TreeEntry[], entries: readonly { path: string; blob: string }[]): [string, string][] {
  const loose: [string, string][] = [];
  // nothing vanished or was unreadable: the entries are the candidates one for one, in the same order
  let same = entries.length === candidates.length;
  for (let i = 0; same && i < entries.length; i++) same = entries[i]!.path === candidates[i]!.path;
  if (same) {
    for (let i = 0; i < entries.length; i++) if (!candidates[i]!.gitOid) loose.push([entries[i]!.path, entries[i]!.blob.slice(7)]);
    return loose;
  }
  const fromGit = new Set(candidates.filter((c) => c.gitOid).map((c) => c.path));
  for (const e of entries) if (!fromGit.has(e.path)) loose.push([e.path, e.blob.slice(7)]);
  return loose;
}

/** The wanted paths (files or directories) under which no entry lies; entries are sorted by path. */
function missingOf(wanted: RepoPath[], entries: readonly { path: string }[]): string[] {
  return wanted.filter((p) => p !== ROOT && !hasWithin(entries, p));
}

/** Whether entries sorted by path hold `dir` itself or a path below it (binary search: lists can be long). */
function hasWithin(sorted: readonly { path: string }[], dir: string): boolean {
  // Every path starting with `dir` sorts together; siblings such as "dir-x" or "dir.ts" can sit before "dir/...".
  for (let i = searchUtf8(sorted, dir, (e) => e.path); i < sorted.length; i++) {
    const p = (sorted[i] as { path: string }).path;
    if (!p.startsWith(dir)) return false;
    if (isWithin(p, dir as RepoPath)) return true;
  }
  return false;
}

function parseScope(paths: string[]): RepoPath[] {
  if (!Array.isArray(paths) || paths.length === 0) throw invalidArgument("paths must be a non-empty array", { arg: "paths" });
  const out: RepoPath[] = [];
  for (const raw of paths) {
    const p = parseRepoPath(raw, "paths");
    refuseReserved(p);
    if (!out.includes(p)) out.push(p);
  }
  return out.includes(ROOT) ? [ROOT] : out;
}
