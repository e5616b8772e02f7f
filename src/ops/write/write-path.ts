import { modeOfStat, type FileMode } from "../../core/file-mode";
import { closeSync, fchmodSync, fstatSync, fsyncSync, readdirSync, statSync, writeSync } from "node:fs";
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { WorksnapError, asWorksnapError, diskFull, internal, invalidArgument, isDiskFull, notFound, readOnlyFileSystem, repoChanged } from "../../core/errors";
import { blobMatches, type BlobId } from "../../core/hash";
import { ancestorsOf, baseName, joinRepoPath, parentOf, type RepoPath } from "../../core/repo-path";
import { besideName } from "../../repo/beside-temps";
import { CREATE_OPEN, type DirHandle } from "../../repo/dir-handle";
import { DurableBatch } from "../../repo/durable";
import { caseKey } from "../../repo/name-case";
import { hashAhead } from "../../repo/hash-ahead";
import type { Fingerprint } from "../../repo/fingerprint";
import { blobIdOfState } from "../../core/content-hash";
import type { LineChange } from "../../core/line-change";
import type { AheadCheckpoints, EditChange, EditOperation, EditRecorder, PathState, PreparedEdit } from "./edit-recorder";
import { type Lease, staleLease } from "../live/leases";
import { type PinCheck, type StaleRead, StaleReadsError, staleReads } from "./pin-check";
import { settled, stageAll, StagingArea, throwFirstFailure, type Staged } from "./stage";
import { assertLockIntact, withWorktreeLock } from "./worktree-lock";
import { type WorktreeTarget, WorktreeAccess, blockingAncestor, permFor, readTargetState, resolveWorktreeTarget, statStamp } from "./target";
import type { Workspace } from "../workspace";

/**
 * The one work-tree write path (DESIGN "Layers"): path safety, lock, history
 * record, atomic writes. Workspace tools, history reject/replay and task
 * restore all change files through here.
 *
 * A change set is validated whole before the first byte is written: every
 * path resolved inside the root, every precondition (compare-and-swap,
 * no-overwrite, file-in-the-way) checked, every "before" state read (or taken
 * from the caller's reads of the same files, when their stat is unchanged).
 * Then all new contents are staged in `.mcp/tmp/` (stage.ts: a
 * server's spare files, or a staging directory of the call's own) and made
 * durable together (one flush for the whole set: src/repo/durable.ts), and
 * only then published, in the order deletes, moves, writes: a write over an
 * existing file exchanges names with it (renameat2 RENAME_EXCHANGE; the old
 * file is removed with the staging area), any other is renamed into place
 * (the writes' renames issued together, done by the I/O threads); finally the
 * touched directories are flushed.
 *
 * Every file operation names an entry of a directory held open for the call
 * (target.ts, repo/dir-handle.ts): directories are resolved beneath the root
 * without following symlinks, once, and the staged file, the target, new
 * directories, removals and moves are all relative to those descriptors. A
 * directory swapped for a symlink during the call cannot redirect a write out
 * of the root or into `.git`: the write fails (REPO_CHANGED) or lands in the
 * real directory.
 *
 * Crash safety: each file is replaced by a rename or an exchange, so it holds
 * its old or its new bytes, never a mix. Across files the set is not atomic: a crash in the
 * publish phase (renames, no data copying) can leave some files of the set
 * changed and the rest not. Temp files of a crashed writer sit in
 * `.mcp/tmp/` (ignored by git) and are removed when the next worksnap process
 * opens the repository. When the history recorder is present, `seal` has made
 * the call's record durable (checkpoints, diffs, the entries to log) before
 * the first rename, so the next process to take the lock completes the record
 * of a call that a crash interrupted (history/interrupted.ts). A failure that
 * is reported (not a crash) during publish rolls every touched path back to
 * its recorded before state.
 */

export type WriteChange =
  | {
      kind: "write";
      path: RepoPath;
      bytes: Uint8Array;
      /** Git mode to write; omitted keeps an existing file's mode (new files: 100644). "120000" writes a symlink. */
      mode?: FileMode;
      /** Follow a symlink at `path` to its target (write_file); otherwise a symlink there is replaced (patches). */
      follow?: boolean;
      /** Compare-and-swap: the current blob must be this one; null = the path must not exist. */
      expect?: BlobId | null;
      /** Recorded operation for an existing file: "edit" (patch) or "replace" (whole content); new files are "create". */
      operation?: "edit" | "replace";
      /** For an edit: the line changes that turn the file's current bytes into `bytes` (the history's diff is made from them). */
      lines?: LineChange[];
    }
  | { kind: "delete"; path: RepoPath }
  | {
      kind: "move";
      from: RepoPath;
      path: RepoPath;
      /** New content at the destination (a rename with edits); omitted moves the bytes as they are. */
      bytes?: Uint8Array;
      mode?: FileMode;
      /** Replace an existing destination file; by default an existing destination is refused. */
      overwrite?: boolean;
    };

export type ChangeStatus = "created" | "modified" | "deleted" | "renamed";

export interface AppliedChange {
  status: ChangeStatus;
  /** Repo-relative path acted on (after following symlinks). */
  path: RepoPath;
  /** The path as asked for. */
  requested: RepoPath;
  /** A rename's source. */
  from?: RepoPath;
  /** For a rename, the source's state; otherwise `path`'s. */
  before: PathState;
  after: PathState;
  blob: BlobId | null;
}

export interface WriteOptions {
  /** Records the change set (edit history); null or omitted records nothing. */
  recorder?: EditRecorder | null;
  conversationId?: string;
  /** The spec 002 tool name: write_file | edit_file_diff | delete_file | move_file | restore. */
  toolName?: string;
  /** Per-file staleness: a path the lease observed with a blob must still hold that blob. */
  lease?: { lease: Lease; fingerprint: Fingerprint };
  /**
   * Per-file staleness without a lease: the caller's pins (pin-check.ts). A
   * pinned file whose content changed is refused, or reported in the
   * outcome's staleReads.
   */
  pins?: PinCheck;
  /** Checked once more after staging: a cancelled request publishes nothing. */
  signal?: AbortSignal;
  /**
   * Before states the caller read under the same lock and computed the changes
   * from (a patch), by resolved path. Reused when the file's stat stamp is
   * unchanged; when it changed and so did the bytes, the change set was made
   * for content that is gone: REPO_CHANGED, nothing written.
   */
  known?: Map<string, KnownState>;
  /**
   * Called once every file is published and durable, before the history
   * records the change set (the work tree holds its final state from then on,
   * unless recording fails and the files are taken back).
   */
  onPublished?: () => void;
  /**
   * Checkpoints the caller started when it read the before states (EditRecorder.checkpointAhead), for the
   * recorder's prepare; the caller drops them if the call ends without using them.
   */
  checkpointsAhead?: AheadCheckpoints | null;
  /** The caller's access to the work tree (it read the before states through it); by default the call opens its own. */
  access?: WorktreeAccess;
}

export interface KnownState {
  state: PathState;
  /** statStamp of the file, taken before its bytes were read; null when it did not exist. */
  stamp: string | null;
}

export interface WriteOutcome {
  changes: AppliedChange[];
  editIds: string[];
  /** The recorded tool call's index in its conversation (0: its first); null when nothing was recorded. */
  toolCallIndex: number | null;
  /** Pinned files that had changed when the set was written (PinCheck "report"). */
  staleReads: StaleRead[];
}

/** The whole write path: takes the work-tree lock, then applyChangesLocked. */
export async function applyChanges(ws: Workspace, changes: WriteChange[], opts: WriteOptions = {}): Promise<WriteOutcome> {
  return withWorktreeLock(ws, () => applyChangesLocked(ws, changes, opts));
}

/**
 * For callers that already hold the lock (history reject and replay): path
 * safety and atomic writes, never recorded.
 */
export async function writeChangesLocked(ws: Workspace, changes: WriteChange[]): Promise<WriteOutcome> {
  return applyChangesLocked(ws, changes, { recorder: null });
}

/** The write path for a caller holding the work-tree lock (it validates leases under the same lock). */
export async function applyChangesLocked(ws: Workspace, changes: WriteChange[], opts: WriteOptions): Promise<WriteOutcome> {
  assertLockIntact(ws);
  if (changes.length === 0) return { changes: [], editIds: [], toolCallIndex: null, staleReads: [] };
  const access = opts.access ?? new WorktreeAccess(ws.repo);
  try {
    hashAhead(statesToHash(changes, opts));
    await access.rulesKnown;
    const plan = validate(access, changes, opts);
    const area = new StagingArea(access.handles, ws.reserve);
    // The staged files are written by the I/O threads while the history records (its diffs are CPU work here).
    const staging = stageAll(ws, access, plan.steps, area);
    // awaited only once the history's record is prepared: a failure before then (a full disk) is not unhandled
    staging.catch(() => undefined);
    let failed = true;
    try {
      const outcome = await writeAndRecord(ws, access, plan, opts, staging);
      failed = false;
      return outcome;
    } finally {
      await staging.catch(() => undefined); // every write has finished before its file is removed
      const staged = area.files;
      // A failed call leaves nothing behind when it answers; after a success the reserve removes the old files the
      // exchanges left between calls, and makes spares for the next call.
      area.remove(failed);
      ws.reserve?.want(staged);
    }
  } finally {
    if (!opts.access) access.close();
  }
}

/** The bytes a change set will hash: each new state, and for the history each state it read before (hashAhead). */
function* statesToHash(changes: WriteChange[], opts: WriteOptions): Iterable<Uint8Array | undefined> {
  for (const c of changes) if (c.kind !== "delete") yield c.bytes;
  if (opts.recorder && opts.known) for (const k of opts.known.values()) yield k.state?.bytes;
}

async function writeAndRecord(ws: Workspace, access: WorktreeAccess, plan: Plan, opts: WriteOptions, staging: Promise<void>): Promise<WriteOutcome> {
  const recorder = opts.recorder ?? null;
  let prepared: PreparedEdit | null = null;
  let sealing: Promise<void> | null = null;
  let sealed = false;
  const done: Step[] = [];
  try {
    if (recorder) {
      prepared = await recorder.prepare({ conversationId: opts.conversationId ?? "", toolName: opts.toolName ?? "" }, plan.steps.flatMap((s) => s.edits), opts.checkpointsAhead);
      // The record a crash from the first rename on would need (diffs, the entries to log), made durable while the
      // staged files are written and flushed: both are done before the first byte is published.
      sealing = recorder.seal(prepared);
      sealing.catch(() => undefined);
    }
    await staging;
    if (sealing) {
      await sealing;
      sealed = true;
    }
    if (opts.signal?.aborted) throw internal("the request was cancelled; nothing was written", { cancelled: true });
    assertLockIntact(ws);
    await publish(ws, access, plan, done);
  } catch (err) {
    // Every write (and the seal) has finished before anything is rolled back or aborted.
    await Promise.allSettled([staging, sealing]);
    throw await undo(recorder, prepared, sealed, rollback(access, done), err);
  }
  opts.onPublished?.();
  let editIds: string[] = [];
  let toolCallIndex: number | null = null;
  if (recorder && prepared) {
    try {
      ({ editIds, toolCallIndex } = await recorder.commit(prepared, plan.steps.flatMap((s) => s.edits)));
    } catch (err) {
      // Every write is recorded or undone: a history that failed to record takes the files back.
      throw await undo(recorder, prepared, sealed, rollback(access, plan.steps), err);
    }
  }
  return { changes: plan.steps.map((s) => s.applied), editIds, toolCallIndex, staleReads: plan.staleReads };
}

/**
 * After a failure: when every published file was taken back, the history
 * record is aborted and the error reported as it is. When some could not be
 * taken back (a full disk can refuse even that), the sealed record stays:
 * the next process to take the work-tree lock completes it
 * (history/interrupted.ts), so the files that changed are recorded, never
 * orphaned; the error says so.
 */
async function undo(recorder: EditRecorder | null, prepared: PreparedEdit | null, sealed: boolean, unrestored: RepoPath[], err: unknown): Promise<WorksnapError> {
  const e = reported(err, unrestored.length === 0);
  if (unrestored.length === 0 || !sealed) return withAbort(recorder, prepared, e);
  const list = unrestored.slice(0, 20).join(", ");
  return new WorksnapError(
    e.code,
    `${e.message}. ${unrestored.length} file${unrestored.length === 1 ? "" : "s"} could not be taken back (${list}${unrestored.length > 20 ? ", ..." : ""}): the change set is recorded in the edit history when worksnap next takes the work-tree lock, to be reviewed or rejected there`,
    { ...e.details, not_restored: unrestored.slice(0, 200), recorded_later: true },
  );
}

/** A failure as the caller hears it: a full disk says so (and, when every file was taken back, that nothing was written). */
function reported(err: unknown, restored: boolean): WorksnapError {
  if (isDiskFull(err)) {
    const code = (err as { details?: { errno?: string }; code?: string }).details?.errno ?? (err as { code?: string }).code ?? "ENOSPC";
    return diskFull(restored ? "the change set did not fit; nothing was written, every file is as it was" : "the change set did not fit", code === "EDQUOT" ? "EDQUOT" : "ENOSPC");
  }
  const sys = err as NodeJS.ErrnoException;
  if (sys?.code === "EROFS") return readOnlyFileSystem(typeof sys.path === "string" ? sys.path : null, restored ? "nothing was written, every file is as it was" : "");
  return asWorksnapError(err);
}

/** Aborts the history record; the original error is the one reported, with an abort failure added to it. */
async function withAbort(recorder: EditRecorder | null, prepared: PreparedEdit | null, err: WorksnapError): Promise<WorksnapError> {
  if (!recorder || !prepared) return err;
  try {
    await recorder.abort(prepared);
  } catch (abortErr) {
    err.details.history_abort_failed = abortErr instanceof Error ? abortErr.message : String(abortErr);
  }
  return err;
}

// ---------------------------------------------------------------------------

interface Before {
  target: WorktreeTarget;
  state: PathState;
  /** Permission bits of an existing regular file. */
  perm: number | null;
}

interface Step {
  change: WriteChange;
  /** The path written (write, move destination) or removed (delete). */
  dest: Before;
  /** A move's source. */
  source?: Before;
  /** New content and how to write it; null = remove `dest`. */
  after: PathState;
  perm: number;
  /** A move without new content: the file itself is renamed. */
  plainRename: boolean;
  /**
   * A move to another spelling of the source's name on a case-folding file
   * system: the source is renamed first (publishing the destination would
   * replace it, and removing the source then would remove the result).
   */
  caseOnly?: boolean;
  staged?: Staged;
  /** Published by exchanging names with the file it replaced, which now sits under the staged name. */
  exchanged?: boolean;
  edits: EditChange[];
  applied: AppliedChange;
}

interface Plan {
  steps: Step[];
  /** Every touched path with its state before the change set, for rollback. */
  befores: Map<string, Before>;
  /** Pinned files that changed since the caller saw them (opts.pins, "report"). */
  staleReads: StaleRead[];
}

function validate(access: WorktreeAccess, requested: WriteChange[], opts: WriteOptions): Plan {
  const changes = access.foldsCase ? joinCaseRenames(access, requested) : requested;
  // keyed as the file system tells files apart: two spellings of one name on a case-folding one are one file
  const befores = new Map<string, Before>();
  const keyOf = (p: string) => (access.foldsCase ? caseKey(p) : p);
  const claim = (t: WorktreeTarget, dirOk = false): Before => {
    const other = befores.get(keyOf(t.path));
    if (other) {
      const as = [other.target.requested, t.requested].filter((r) => r !== t.path);
      throw invalidArgument(`the change set touches ${t.path} more than once${as.length > 0 ? ` (as ${[...new Set(as)].join(" and ")})` : ""}`, { path: t.path });
    }
    const state = dirOk && t.kind === "dir" ? null : readBefore(t, opts.known);
    const b: Before = { target: t, state, perm: t.kind === "file" ? (t.stat!.mode & 0o7777) : null };
    befores.set(keyOf(t.path), b);
    return b;
  };
  const steps: Step[] = [];
  for (const c of changes) {
    if (c.kind === "write") {
      const dest = claim(resolveWorktreeTarget(access, c.path, c.follow === true));
      checkExpect(dest, c.expect);
      const mode = c.mode ?? (dest.state && dest.state.mode !== "120000" ? dest.state.mode : "100644");
      const after: PathState = { bytes: c.bytes, mode };
      const status: ChangeStatus = dest.state ? "modified" : "created";
      const operation: EditOperation = dest.state ? (c.operation ?? "replace") : "create";
      steps.push({
        change: c,
        dest,
        after,
        // the file's exact bits while its mode as git takes it stays (git's mode need not be the disk's: core.fileMode)
        perm: dest.state && dest.state.mode === mode && dest.perm !== null ? dest.perm : permFor(mode, dest.state?.mode === "120000" ? null : dest.perm),
        plainRename: false,
        edits: [{ operation, path: dest.target.path, before: dest.state, after, ...(operation === "edit" && c.lines ? { lines: c.lines } : {}) }],
        applied: { status, path: dest.target.path, requested: c.path, before: dest.state, after, blob: blobIdOfState(c.bytes) },
      });
    } else if (c.kind === "delete") {
      const dest = claim(resolveWorktreeTarget(access, c.path, false), true);
      if (dest.target.kind === "missing") throw notFound(`${c.path} does not exist`, { path: c.path });
      steps.push({
        change: c,
        dest,
        after: null,
        perm: 0,
        plainRename: false,
        edits: dest.state ? [{ operation: "delete", path: dest.target.path, before: dest.state, after: null }] : [],
        applied: { status: "deleted", path: dest.target.path, requested: c.path, before: dest.state, after: null, blob: null },
      });
    } else {
      const srcTarget = resolveWorktreeTarget(access, c.from, false);
      if (srcTarget.kind === "missing") throw notFound(`${c.from} does not exist`, { path: c.from });
      if (srcTarget.kind === "dir") throw invalidArgument(`${c.from} is a directory; move its files one by one`, { path: c.from });
      let destTarget = resolveWorktreeTarget(access, c.path, false);
      // a new spelling of the same name, where the file system folds case: the file's name changes, nothing else
      const caseOnly = destTarget.path === srcTarget.path && baseName(c.path) !== srcTarget.name;
      if (caseOnly) destTarget = { ...destTarget, path: joinRepoPath(destTarget.parent, baseName(c.path)), name: baseName(c.path), kind: "missing", stat: null };
      else if (destTarget.path === srcTarget.path) {
        throw invalidArgument(`cannot move ${c.from} onto itself`, { from: c.from, to: c.path });
      }
      const source = claim(srcTarget);
      // (the destination is the source's file: claimed with it)
      const dest = caseOnly ? { target: destTarget, state: null, perm: null } : claim(destTarget);
      if (dest.target.kind === "dir") throw invalidArgument(`${c.path} is a directory; name the destination file path`, { path: c.path });
      if (dest.state && c.overwrite !== true) {
        throw invalidArgument(`${c.path} already exists; pass overwrite: true to replace it`, { path: c.path, blob: blobIdOfState(dest.state.bytes) });
      }
      const src = source.state as NonNullable<PathState>;
      const after: PathState = { bytes: c.bytes ?? src.bytes, mode: c.mode ?? src.mode };
      const edits: EditChange[] = [];
      if (dest.state) edits.push({ operation: "delete", path: dest.target.path, before: dest.state, after: null });
      edits.push({ operation: "move", path: dest.target.path, sourcePath: source.target.path, before: src, after });
      steps.push({
        change: c,
        dest,
        source,
        after,
        perm: after.mode === src.mode ? (source.perm ?? permFor(after.mode, null)) : permFor(after.mode, source.perm),
        plainRename: c.bytes === undefined && after.mode === src.mode,
        ...(caseOnly ? { caseOnly } : {}),
        edits,
        applied: { status: "renamed", path: dest.target.path, requested: c.path, from: source.target.path, before: src, after, blob: blobIdOfState(after.bytes) },
      });
    }
  }
  checkShape(access, steps);
  if (opts.lease) checkLeaseBlobs(opts.lease, befores);
  const stale = opts.pins ? staleReads(opts.pins.pins, befores.values()) : [];
  if (stale.length > 0 && opts.pins?.onStale === "refuse") throw new StaleReadsError(stale);
  return { steps, befores, staleReads: stale };
}

/**
 * On a file system that folds case, a delete of one spelling and a write of
 * another name one file (the edit history puts a rename that changed only
 * case back that way): that rename, with the write's content. A delete of a
 * spelling the directory no longer holds beside a write of the held one is
 * that write. Anything else stays as it is (one file twice: refused).
 */
function joinCaseRenames(access: WorktreeAccess, changes: WriteChange[]): WriteChange[] {
  const deletes = new Map<string, number>();
  changes.forEach((c, i) => c.kind === "delete" && deletes.set(caseKey(c.path), i));
  if (deletes.size === 0) return changes;
  const out: (WriteChange | null)[] = [...changes];
  for (const [i, c] of changes.entries()) {
    if (c.kind !== "write" || c.follow === true || c.expect !== undefined) continue;
    const d = deletes.get(caseKey(c.path));
    const del = d === undefined ? undefined : changes[d]!;
    if (d === undefined || del === undefined || del.path === c.path) continue;
    const held = resolveWorktreeTarget(access, del.path, false);
    if (held.kind !== "file" && held.kind !== "symlink") continue;
    if (held.name !== baseName(c.path)) out[i] = { kind: "move", from: del.path, path: c.path, bytes: c.bytes, ...(c.mode ? { mode: c.mode } : {}) };
    out[d] = null;
    deletes.delete(caseKey(c.path));
  }
  return out.filter((c): c is WriteChange => c !== null);
}

/** The state before the change: the caller's read when the file is unchanged since, else read now. */
function readBefore(t: WorktreeTarget, known: Map<string, KnownState> | undefined): PathState {
  const k = known?.get(t.path);
  if (!k) return readTargetState(t);
  if (k.stamp === statStamp(t.stat)) return k.state;
  const current = readTargetState(t);
  if (sameState(current, k.state)) return current;
  const currentBlob = current ? blobIdOfState(current.bytes) : null;
  throw repoChanged(
    `${t.path} changed while the change was being prepared (its blob is now ${currentBlob ?? "absent"}); nothing was written, read it again and retry`,
    { path: t.path, current_blob: currentBlob, read_blob: k.state ? blobIdOfState(k.state.bytes) : null },
  );
}

function sameState(a: PathState, b: PathState): boolean {
  if (a === null || b === null) return a === b;
  return a.mode === b.mode && Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength).equals(b.bytes);
}

function checkExpect(dest: Before, expect: BlobId | null | undefined): void {
  if (expect === undefined) return;
  const current = dest.state ? blobIdOfState(dest.state.bytes) : null;
  if (expect === null ? current === null : blobMatches(current, expect)) return;
  const path = dest.target.path;
  if (expect === null) {
    throw repoChanged(`${path} already exists (blob ${current}); create_only refuses to overwrite it`, { path, current_blob: current, expected_blob: null });
  }
  throw repoChanged(
    current === null ? `${path} does not exist, but expected_blob ${expect} was given; nothing was written` : `${path} changed: its blob is ${current}, not the expected ${expect}; nothing was written`,
    { path, current_blob: current, expected_blob: expect },
  );
}

/** Files in the way of new paths: an existing file (not removed by this set), or another new path. */
function checkShape(access: WorktreeAccess, steps: Step[]): void {
  const removed = new Set<string>();
  const created = new Set<string>();
  // the ancestors already found to be directories (one lstat per directory, not per file in it)
  const directories = new Set<string>();
  for (const s of steps) {
    if (s.after === null) removed.add(s.dest.target.path);
    if (s.source) removed.add(s.source.target.path);
  }
  for (const s of steps) {
    if (s.after === null) {
      // (read by name only for the message: the removal itself goes through the held directory and fails on a non-empty one)
      if (s.dest.target.kind === "dir" && readdirSync(join(access.repo.root, s.dest.target.path)).length > 0) {
        throw invalidArgument(`${s.dest.target.requested} is a directory that is not empty; delete it with recursive: true`, { path: s.dest.target.requested });
      }
      continue;
    }
    const path = s.dest.target.path;
    if (s.dest.target.kind === "dir") throw invalidArgument(`${s.dest.target.requested} is a directory, not a file`, { path: s.dest.target.requested });
    if (s.dest.target.kind === "other") throw invalidArgument(`${s.dest.target.requested} is not a regular file`, { path: s.dest.target.requested });
    const blocker = blockingAncestor(access, path, removed, directories);
    if (blocker) throw invalidArgument(`cannot write ${path}: ${blocker} is a file, not a directory`, { path, blocking: blocker });
    created.add(path);
  }
  for (const p of created) {
    for (const a of ancestorsOf(p)) {
      if (created.has(a)) throw invalidArgument(`the change set writes both ${a} and ${p}; ${a} cannot be a file and a directory`, { path: p, blocking: a });
    }
  }
}

function checkLeaseBlobs(l: { lease: Lease; fingerprint: Fingerprint }, befores: Map<string, Before>): void {
  const changed: ({ path: string } & NonNullable<ReturnType<Lease["touched"]["changedSince"]>>)[] = [];
  for (const b of befores.values()) {
    const path = b.target.path;
    if (b.state?.mode === "120000") continue;
    const change = l.lease.touched.changedSince(path, b.state ? b.state.bytes : null);
    if (change) changed.push({ path, ...change });
  }
  if (changed.length === 0) return;
  const err = staleLease(l.lease.id, l.fingerprint, `${changed.map((c) => c.path).join(", ")} changed since the lease read ${changed.length === 1 ? "it" : "them"}`);
  err.details.changed = changed;
  throw err;
}

// ---------------------------------------------------------------------------

/** Directories whose entries a publish changed, to be flushed. */
type TouchedDirs = Set<DirHandle>;

async function publish(ws: Workspace, access: WorktreeAccess, plan: Plan, done: Step[]): Promise<void> {
  const dirs: TouchedDirs = new Set();
  const removedPaths: RepoPath[] = [];
  /** Staged writes: renamed by the I/O threads, all at once (other work, like the history's diffs, goes on meanwhile). */
  const renames: Promise<void>[] = [];
  try {
    publishSteps(access, plan, done, dirs, removedPaths, renames);
  } finally {
    // Every rename has finished (or failed) before the caller rolls back or goes on.
    await settled(renames);
  }
  throwFirstFailure(await Promise.allSettled(renames));
  for (const p of removedPaths) pruneEmptyParents(access, p, dirs);
  await syncDirs(ws, dirs);
}

/** The directory a new path goes into, made when missing (each new directory's parent is flushed too). */
function parentFor(access: WorktreeAccess, t: WorktreeTarget, dirs: TouchedDirs): DirHandle {
  if (t.dir) return t.dir;
  const made: string[] = [];
  const dir = access.handles.ensureDir(t.parent, made);
  for (const m of made) {
    const up = access.handles.dir(parentOf(m as RepoPath));
    if (up) dirs.add(up);
  }
  return dir;
}

/** The synchronous part of publishing: removals, moves, and the writes' renames started (pushed on `renames`). */
function publishSteps(access: WorktreeAccess, plan: Plan, done: Step[], dirs: TouchedDirs, removedPaths: RepoPath[], renames: Promise<void>[]): void {
  const order = (s: Step) => (s.after === null ? 0 : s.source ? 1 : 2);
  for (const s of [...plan.steps].sort((a, b) => order(a) - order(b))) {
    const dest = s.dest.target;
    done.push(s);
    if (s.after === null) {
      const dir = dest.dir!; // it exists: validate read it
      if (dest.kind === "dir") dir.rmdir(dest.name);
      else dir.unlink(dest.name);
      removedPaths.push(dest.path);
      dirs.add(dir);
      continue;
    }
    const parent = parentFor(access, dest, dirs);
    const staged = s.staged;
    if (s.caseOnly) {
      renameCase(access, s.source!.target.dir!, s.source!.target.name, dest.name);
      if (staged) staged.dir.rename(staged.name, parent, dest.name);
      else if (!s.plainRename) writeBeside(access, parent, dest.name, s.after, s.perm);
      dirs.add(parent);
      continue;
    }
    if (s.plainRename) s.source!.target.dir!.rename(s.source!.target.name, parent, dest.name);
    else if (staged && !s.source) {
      // The last group: independent renames; a file that exists is replaced by exchanging names, and the old file
      // goes with the staging area.
      if (s.dest.state !== null && staged.dir.exchange(staged.name, parent, dest.name)) s.exchanged = true;
      else {
        const from = staged.dir.asyncPath(staged.name);
        const to = parent.asyncPath(dest.name);
        if (from !== null && to !== null) renames.push(rename(from, to));
        else staged.dir.rename(staged.name, parent, dest.name);
      }
    } else if (staged) staged.dir.rename(staged.name, parent, dest.name);
    else writeBeside(access, parent, dest.name, s.after, s.perm);
    dirs.add(parent);
    if (s.source) {
      const src = s.source.target;
      if (!s.plainRename) unlinkIfPresent(src.dir!, src.name);
      removedPaths.push(src.path);
      dirs.add(src.dir!);
    }
  }
}

/**
 * `from` renamed to `to`, another spelling of it on a case-folding file
 * system. POSIX lets a rename onto the same file do nothing, and some
 * systems do: then through a name of its own.
 */
function renameCase(access: WorktreeAccess, dir: DirHandle, from: string, to: string): void {
  dir.rename(from, dir, to);
  if (dir.list().includes(to)) return;
  const tmp = besideName(access.repo.stateDir, dir);
  dir.rename(from, dir, tmp);
  dir.rename(tmp, dir, to);
}

function unlinkIfPresent(dir: DirHandle, name: string): void {
  try {
    dir.unlink(name);
  } catch (err) {
    // a read-only file system refuses an unlink (EROFS) before it looks the name up
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" && dir.lstat(name) !== null) throw err;
  }
}

/**
 * The renames made durable: directories on the file system of `.mcp/tmp` as
 * one batch (one syncfs when there are many), any other one by its own fsync.
 */
async function syncDirs(ws: Workspace, dirs: TouchedDirs): Promise<void> {
  const tmpDir = join(ws.repo.stateDir, "tmp");
  const tmpDev = statSync(tmpDir).dev;
  const local: DirHandle[] = [];
  const foreign: DirHandle[] = [];
  for (const d of dirs) (fstatSync(d.fd).dev === tmpDev ? local : foreign).push(d);
  const batch = new DurableBatch(tmpDir);
  try {
    await batch.syncDirFds(local.map((d) => d.fd));
    for (const d of foreign) d.fsync();
  } finally {
    batch.close();
  }
}

/**
 * A file written beside its target in the same (held) directory, flushed, then
 * renamed over it: for targets on another file system than `.mcp/tmp`, and
 * for rollback.
 */
function writeBeside(access: WorktreeAccess, dir: DirHandle, name: string, state: NonNullable<PathState>, perm: number): void {
  const tmp = besideName(access.repo.stateDir, dir);
  try {
    if (state.mode === "120000" && access.symlinks) dir.symlink(state.bytes, tmp);
    else {
      const fd = dir.openFile(tmp, CREATE_OPEN, 0o600);
      try {
        let off = 0;
        while (off < state.bytes.length) off += writeSync(fd, state.bytes, off, state.bytes.length - off);
        // open()'s mode passes through the umask; the recorded mode must be exact.
        fchmodSync(fd, perm);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    dir.rename(tmp, dir, name);
  } catch (err) {
    unlinkQuietly(dir, tmp);
    throw err;
  }
}

function unlinkQuietly(dir: DirHandle, name: string): void {
  try {
    dir.unlink(name);
  } catch {
    // not there (or not ours to remove any more)
  }
}

/** Directories emptied by a removal go too, as git does; never the root. */
function pruneEmptyParents(access: WorktreeAccess, path: RepoPath, dirs: TouchedDirs): void {
  const ancestors = ancestorsOf(path);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as RepoPath;
    const up = access.handles.dir(parentOf(a));
    if (!up) return;
    try {
      up.rmdir(baseName(a));
    } catch {
      return; // not empty (or already gone): stop climbing
    }
    // a removed directory has nothing to flush (its parent's flush records the removal), and some file systems
    // (FUSE ones: exFAT and NTFS drives, sshfs) fail an fstat or fsync of it
    for (const d of dirs) if (d.rel === a || d.rel.startsWith(`${a}/`)) dirs.delete(d);
    access.handles.forget(a);
    dirs.add(up);
  }
}

/**
 * Every path touched by a published step back to its before state, through
 * the held directories; the paths that could not be restored (the original
 * error is what the caller sees, with these named).
 */
function rollback(access: WorktreeAccess, done: Step[]): RepoPath[] {
  const failed: RepoPath[] = [];
  for (const s of [...done].reverse()) {
    for (const b of s.source ? [s.dest, s.source] : [s.dest]) {
      try {
        restore(access, s, b);
      } catch {
        failed.push(b.target.path); // keep restoring the others
      }
    }
  }
  return failed;
}

function restore(access: WorktreeAccess, s: Step, b: Before): void {
  const t = b.target;
  if (t.kind === "dir") {
    access.handles.ensureDir(t.path);
    return;
  }
  if (b.state === null) {
    const dir = access.handles.dir(t.parent);
    if (dir) unlinkIfPresent(dir, t.name);
    pruneEmptyParents(access, t.path, new Set());
    return;
  }
  const dir = access.handles.ensureDir(t.parent);
  // Exchanged: the old file sits under the staged name; exchanging back restores it without writing (a full disk).
  if (b === s.dest && s.exchanged && s.staged && s.staged.dir.exchange(s.staged.name, dir, t.name)) {
    s.exchanged = false;
    return;
  }
  if (holds(dir, t.name, b.state)) return; // never replaced (the step failed before it), nothing to write
  writeBeside(access, dir, t.name, b.state, b.perm ?? permFor(b.state.mode, null));
}

/** Whether `name` in `dir` holds exactly `state` (bytes and mode). */
function holds(dir: DirHandle, name: string, state: NonNullable<PathState>): boolean {
  const st = dir.lstat(name);
  if (!st) return false;
  if (state.mode === "120000") return st.isSymbolicLink() && Buffer.from(dir.readlink(name)).equals(state.bytes);
  if (!st.isFile() || modeOfStat(st) !== state.mode || st.size !== state.bytes.length) return false;
  return Buffer.from(dir.readFile(name).bytes).equals(state.bytes);
}
