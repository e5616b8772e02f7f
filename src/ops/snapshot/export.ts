import { mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { diskFullErrno, invalidArgument, isMissingPath, notFound, permissionDenied, tooLarge, WorksnapError } from "../../core/errors";
import { hexOfBlobId } from "../../core/hash";
import { ROOT, type RepoPath } from "../../core/repo-path";
import { AtomicFileWriter } from "../../repo/atomic-stream";
import { bundleEntryName, bundleManifestPieces, BUNDLE_FILES_PREFIX, BUNDLE_MANIFEST } from "../../repo/bundle";
import { captureEntries } from "../../repo/capture";
import type { Fingerprint } from "../../repo/fingerprint";
import { manifestJson, snapshotIdOf, type SnapshotId } from "../../repo/manifest";
import { BLOCK, putTarHeader, tarHeader, tarPadding, tarTrailer, type TarHeaderFields } from "../../repo/tar";
import { touch } from "../live/leases";
import { readLiveTree } from "../live/live-tree";
import type { BranchFields } from "../live/read-context";
import { asMissing, corruptBlob, ExportReads, missingBlob } from "./export-reads";
import { inScope, parseScopeArg, sideEntries, type SideEntry } from "./tree-side";
import { manifestStats } from "../../repo/snapshot-store";
import type { NativeJob } from "../../repo/native";
import { refuseNamedUnreadable, unreadableFields, type UnreadableFields } from "./unreadable";
import type { Workspace } from "../workspace";
import { acquireLease } from "../live/stale-lease";

export interface ExportArgs {
  mode?: "snapshot" | "worktree";
  snapshot_id?: string;
  lease_id?: string;
  paths?: string[];
  /** Absolute file to write; default `.mcp/exports/<snapshot hex>.tar`. */
  output?: string;
  /** With `output`: that file is this descriptor of the process (the CLI's stdout for `-o -`), written into as a stream. */
  outputFd?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export type ExportResult = BranchFields & UnreadableFields & {
  /** The snapshot the bundle holds (a sub-snapshot's own id when `paths` narrowed a stored snapshot). */
  snapshot_id: SnapshotId;
  /** Set when `paths` narrowed a stored snapshot: the snapshot the files came from. */
  source_snapshot_id?: SnapshotId;
  /** Where the bundle was written: repo-relative when inside the root. */
  path: string;
  bytes: number;
  sha256: string;
  files: number;
};

/** Progress is reported each time this many more entries are in the bundle. */
const PROGRESS_STEP = 2000;
const FILES_PREFIX = new TextEncoder().encode(BUNDLE_FILES_PREFIX);

/**
 * snapshot_export: a deterministic tar bundle of a stored snapshot, or of the
 * live tree (captured as a snapshot first, under a lease). The same snapshot
 * gives the same bytes on any machine. The file appears only when complete;
 * a missing blob is NOT_FOUND naming it, and nothing is left behind.
 */
export async function exportSnapshot(ws: Workspace, args: ExportArgs): Promise<ExportResult> {
  const scope = parseScopeArg(args.paths);
  const src = args.mode === "worktree" ? await captureLive(ws, args, scope) : openStored(ws, args, scope);
  const hex = src.snapshotId.slice(7);
  const output = args.output === undefined ? null : args.outputFd !== undefined ? { path: args.output, stream: true } : bundleDestination(args.output);
  const target = output?.path ?? join(ws.repo.stateDir, "exports", `${hex}.tar`);
  if (!output?.stream) {
    try {
      mkdirSync(dirname(target), { recursive: true });
    } catch (err) {
      throw output ? outputError(args.output!, err) : err;
    }
  }
  const sizes = await blobSizes(ws, src.entries, src.snapshotId);
  const written = await writeBundle(ws, src, sizes, target, output === null ? null : { name: args.output!, stream: output.stream, fd: args.outputFd }, args);
  // a stream is named as given; a file by where it now is (through a symlink: the file replaced)
  const where = output?.stream ? args.output! : target;
  const rel = relative(ws.repo.root, where);
  const result: ExportResult = {
    ...src.branch,
    snapshot_id: src.snapshotId,
    path: rel.startsWith("..") || rel === "" ? where : rel.split(sep).join("/"),
    bytes: written.bytes,
    sha256: written.sha256,
    files: src.entries.length,
  };
  if (src.sourceId && src.sourceId !== src.snapshotId) result.source_snapshot_id = src.sourceId;
  return { ...result, ...unreadableFields(src.unreadable ?? []) };
}

interface BundleSource {
  snapshotId: SnapshotId;
  sourceId?: SnapshotId;
  fingerprint: Fingerprint;
  /** the canonical manifest's bytes */
  manifest: Uint8Array;
  entries: SideEntry[];
  branch: BranchFields;
  /** What a live capture could not read (UnreadableFields). */
  unreadable?: string[];
}

function openStored(ws: Workspace, args: ExportArgs, scope: RepoPath[]): BundleSource {
  if (args.mode !== undefined && args.mode !== "snapshot") throw invalidArgument('mode must be "snapshot" or "worktree"', { arg: "mode" });
  if (args.snapshot_id === undefined) throw invalidArgument('pass snapshot_id, or mode "worktree" to export the live tree', { arg: "snapshot_id" });
  if (args.lease_id !== undefined) throw invalidArgument('lease_id applies to mode "worktree" only', { arg: "lease_id" });
  const id = ws.snapshots.resolve(args.snapshot_id);
  const { snapshot: snap, manifest: stored } = ws.snapshots.loadWithManifest(id);
  const entries = sideEntries(snap.entries, scope);
  requireEach(scope, entries, `snapshot ${id}`);
  const whole = entries.length === snap.entries.length;
  const narrowed = whole ? null : manifestJson(entries);
  const snapshotId = narrowed === null ? id : snapshotIdOf(snap.meta.fingerprint, narrowed);
  const manifest = narrowed === null ? stored : new TextEncoder().encode(narrowed);
  return { snapshotId, sourceId: id, fingerprint: snap.meta.fingerprint, manifest, entries, branch: { cache_hint: "immutable", snapshot_id: snapshotId } };
}

/** The live tree under `scope`, captured and saved as a snapshot (the id the bundle carries), every exported file touched. */
async function captureLive(ws: Workspace, args: ExportArgs, scope: RepoPath[]): Promise<BundleSource> {
  if (args.snapshot_id !== undefined) throw invalidArgument('snapshot_id applies to mode "snapshot" only', { arg: "snapshot_id" });
  const live = await readLiveTree(ws, scope);
  const lease = await acquireLease(ws, args.lease_id, live.fingerprint);
  refuseNamedUnreadable(ws.repo, scope, live.unreadable);
  requireEach(scope, live.entries, "the work tree (or it is ignored)");
  const captured = await captureEntries(ws.repo, ws.blobs, live.entries, { signal: args.signal, onProgress: args.onProgress });
  refuseNamedUnreadable(ws.repo, scope, captured.unreadable);
  const unreadable = [...live.unreadable, ...captured.unreadable];
  const manifest = manifestJson(captured.entries);
  const snapshotId = snapshotIdOf(live.fingerprint, manifest);
  await ws.snapshots.save(
    {
      snapshot_id: snapshotId,
      fingerprint: live.fingerprint,
      created_at: new Date().toISOString(),
      manifest_stats: manifestStats(captured.entries.length, captured.entries.reduce((n, e) => n + e.size, 0), unreadable.length),
      paths: scope,
    },
    manifest,
  );
  for (const e of captured.entries) touch(lease, e.path, e.blob);
  return {
    snapshotId,
    fingerprint: live.fingerprint,
    manifest: new TextEncoder().encode(manifest),
    entries: captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode })),
    branch: { cache_hint: "until_dirty", lease_id: lease.id, fingerprint: live.fingerprint },
    unreadable,
  };
}

function requireEach(scope: RepoPath[], entries: { path: string }[], where: string): void {
  if (scope.length === 1 && scope[0] === ROOT) return;
  for (const p of scope) {
    if (!entries.some((e) => inScope(e.path, [p]))) throw notFound(`${p} is not in ${where}`, { path: p });
  }
}

/** Every blob must be present before a byte is written, so a missing one fails fast and by name. */
async function blobSizes(ws: Workspace, entries: SideEntry[], snapshotId: SnapshotId): Promise<number[]> {
  const sizes = await ws.blobs.sizes(entries.map((e) => e.blob));
  const missing = sizes.indexOf(null);
  if (missing >= 0) throw missingBlob(entries[missing] as SideEntry, snapshotId);
  return sizes as number[];
}

/**
 * Where `output` sends the bundle. A regular file is replaced whole (the bundle made in `.mcp/tmp`, flushed,
 * renamed over it), through a symlink to it as `tar -f` and `cp` write through one; a name not there yet is
 * made; a pipe or a character device (`/dev/stdout`, `/dev/null`, a FIFO) is written into as a stream, as `tar
 * -f` does, since a rename would put a regular file in its place (as root, in place of /dev/null). A directory,
 * a block device or a socket is refused before anything is read.
 */
function bundleDestination(output: string): { path: string; stream: boolean } {
  let st;
  try {
    st = statSync(output);
  } catch (err) {
    if (isMissingPath(err)) return { path: output, stream: false };
    throw outputError(output, err);
  }
  if (st.isFile()) return { path: realpathSync(output), stream: false };
  if (st.isFIFO() || st.isCharacterDevice()) return { path: output, stream: true };
  const what = st.isDirectory() ? "a directory" : st.isBlockDevice() ? "a block device" : st.isSocket() ? "a socket" : "not a file";
  throw invalidArgument(`the output ${output} is ${what}; name a file, a pipe or a character device such as /dev/stdout`, { arg: "output", path: output });
}

/** A failure to write the bundle where `output` says, named by it (not by the temporary file it was made in). */
function outputError(output: string, err: unknown): WorksnapError {
  const full = diskFullErrno(err);
  if (full !== null) return tooLarge(`no space left writing the bundle to ${output}`, { reason: "disk_full", errno: full, arg: "output", path: output });
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const reasons: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "permission denied",
    EROFS: "a read-only file system",
    EPIPE: "the reader closed the pipe",
    ENOENT: "no file can be made in its directory",
    ENOTDIR: "a part of its directory is a file",
    EISDIR: "it is a directory",
    ENXIO: "nothing is reading from it",
  };
  const reason = (code !== undefined ? reasons[code] : undefined) ?? code ?? (err instanceof Error ? err.message : String(err));
  const message = `cannot write the bundle to ${output}: ${reason}`;
  const details = { arg: "output", path: output, ...(code ? { errno: code } : {}) };
  return code === "EACCES" || code === "EPERM" || code === "EROFS" ? permissionDenied(message, details) : invalidArgument(message, details);
}

/**
 * The bundle written to `target`. `output`: the file the caller named (null: the exports directory), by which a
 * failure to write is reported; a failure to read a blob is reported as what it is.
 */
async function writeBundle(
  ws: Workspace,
  src: BundleSource,
  sizes: number[],
  target: string,
  output: { name: string; stream: boolean; fd?: number } | null,
  args: ExportArgs,
): Promise<{ bytes: number; sha256: string }> {
  const writing = (err: unknown) => (output !== null && !(err instanceof WorksnapError) ? outputError(output.name, err) : err);
  let out: AtomicFileWriter;
  try {
    out = new AtomicFileWriter(ws.repo.stateDir, target, 0o644, { stream: output?.stream === true, fd: output?.fd });
  } catch (err) {
    throw writing(err);
  }
  /** `release`: bytes read for the bundle alone, whose memory goes back once the writer has copied them. */
  const emit = (bytes: Uint8Array, release = false) => {
    if (bytes.length === 0) return;
    try {
      out.write(bytes, release);
    } catch (err) {
      throw writing(err);
    }
  };
  /** An entry's header, made in the writer's scratch memory unless it needs a pax header. */
  const header = (fields: TarHeaderFields) => {
    const block = out.scratch(BLOCK);
    emit(putTarHeader(block, fields) ? block : tarHeader(fields));
  };
  const ahead = new ExportReads(ws, src.entries, sizes, src.snapshotId, (block) => out.giveBack(block));
  try {
    const [entriesPart, tail] = bundleManifestPieces(src.manifest, src.fingerprint, src.snapshotId);
    const manifestSize = entriesPart.length + tail.length;
    emit(tarHeader({ path: BUNDLE_MANIFEST, type: "file", mode: 0o644, size: manifestSize }));
    emit(entriesPart);
    emit(tail);
    emit(tarPadding(manifestSize));
    const total = src.entries.length;
    // runs of files the work tree holds as their blobs go into the bundle whole, headers made natively
    const put = (job: NativeJob, from: number, to: number, digests: Uint8Array, modes: Uint8Array) => {
      try {
        return out.putScanned(job, from, to, digests, modes, FILES_PREFIX);
      } catch (err) {
        throw writing(err);
      }
    };
    let progressAt = 0;
    for (let i = 0; i < total; i++) {
      if (args.signal?.aborted) throw args.signal.reason ?? new Error("aborted");
      if (args.onProgress && i >= progressAt) {
        args.onProgress(i, total);
        progressAt = i - (i % PROGRESS_STEP) + PROGRESS_STEP;
      }
      const run = await ahead.putVerified(i, put);
      if (run > 0) {
        i += run - 1;
        if (out.behind()) await out.caughtUp();
        continue;
      }
      const e = src.entries[i] as SideEntry;
      const size = sizes[i] as number;
      if (e.mode === "120000") {
        const link = await ahead.take(i);
        header({ path: bundleEntryName(e.path), type: "symlink", mode: 0o777, size: 0, linkTarget: link });
        continue;
      }
      header({ path: bundleEntryName(e.path), type: "file", mode: e.mode === "100755" ? 0o755 : 0o644, size });
      if (!ahead.streamed(i)) {
        const bytes = await ahead.take(i);
        emit(bytes, ahead.isOwn(bytes));
      } else await streamVerified(ws, e, size, src.snapshotId, emit, () => out.caughtUp());
      emit(tarPadding(size));
      if (out.behind()) await out.caughtUp();
    }
    emit(tarTrailer());
    let sha256: string;
    try {
      sha256 = await out.commit();
    } catch (err) {
      throw writing(err);
    }
    args.onProgress?.(total, total);
    return { bytes: out.written, sha256 };
  } catch (err) {
    out.abort();
    throw err;
  } finally {
    ahead.close();
  }
}

/** A blob too large to hold whole, from the store, verified as it goes; `drain` keeps the writer's queue bounded. */
async function streamVerified(
  ws: Workspace,
  e: SideEntry,
  size: number,
  snapshotId: SnapshotId,
  emit: (b: Uint8Array) => void,
  drain: () => Promise<void>,
): Promise<void> {
  const hasher = new Bun.CryptoHasher("sha256");
  let seen = 0;
  try {
    for await (const chunk of await ws.blobs.stream(e.blob)) {
      seen += chunk.length;
      if (seen > size) break;
      hasher.update(chunk);
      emit(chunk);
      await drain();
    }
  } catch (err) {
    throw asMissing(err, e, snapshotId);
  }
  // A blob missing from the private git store streams as nothing at all.
  if (seen === 0 && size > 0) throw missingBlob(e, snapshotId);
  if (seen !== size || hasher.digest("hex") !== hexOfBlobId(e.blob)) throw corruptBlob(e.blob, e.path);
}
