import type { FileMode } from "../../core/file-mode";
import { closeSync, fchmodSync, fsyncSync, mkdirSync, readdirSync, openSync, renameSync, rmdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeSync } from "node:fs";
import { rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type WorksnapError, asWorksnapError, internal, invalidArgument, notFound, repoChanged } from "../../core/errors";
import { blobMatches, randomId128, type BlobId } from "../../core/hash";
import { ancestorsOf, type RepoPath } from "../../core/repo-path";
import { DurableBatch, syncDirsEach } from "../../repo/durable";
import type { Fingerprint } from "../../repo/fingerprint";
import { exchangePaths } from "../../repo/exchange";
import { blobIdOfState } from "../../core/content-hash";
import type { LineChange } from "../../core/line-change";
import type { EditChange, EditOperation, EditRecorder, PathState, PreparedEdit } from "./edit-recorder";
import { type Lease, staleLease } from "../live/leases";
import { type PinCheck, type StaleRead, StaleReadsError, staleReads } from "./pin-check";
import { settled, stageAll, StagingArea, throwFirstFailure } from "./stage";
import { assertLockIntact, withWorktreeLock } from "./worktree-lock";
import { type ParentCache, type WorktreeTarget, blockingAncestor, permFor, readTargetState, resolveWorktreeTarget, statStamp } from "./target";
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
 * existing file exchanges names with it (src/repo/exchange.ts; the old file
 * is removed with the staging area), any other is renamed into place (the
 * writes' renames issued together, done by the I/O threads); finally the
 * touched directories are flushed.
 *
 * Crash safety: each file is replaced by a rename or an exchange, so it holds
 * its old or its new bytes, never a mix. Across files the set is not atomic: a crash in the
 * publish phase (renames, no data copying) can leave some files of the set
 * changed and the rest not. Temp files of a crashed writer sit in
 * `.mcp/tmp/` (ignored by git) and are removed when the next worksnap process
 * opens the repository. When the history recorder is present its `prepare`
 * record (checkpoints) was written before the first rename, so a review can
 * restore the state. A failure that is reported (not a crash) during publish
 * rolls every touched path back to its recorded before state.
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
}

export interface KnownState {
  state: PathState;
  /** statStamp of the file, taken before its bytes were read; null when it did not exist. */
  stamp: string | null;
}

export interface WriteOutcome {
  changes: AppliedChange[];
  editIds: string[];
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
  if (changes.length === 0) return { changes: [], editIds: [], staleReads: [] };
  const plan = validate(ws, changes, opts);
  const area = new StagingArea(ws.repo.stateDir, ws.reserve);
  // The staged files are written by the I/O threads while the history records (its diffs are CPU work here).
  const staging = stageAll(ws, plan.steps, area);
  try {
    return await writeAndRecord(ws, plan, opts, staging);
  } finally {
    await staging.catch(() => undefined); // every write has finished before its file is removed
    const staged = area.files;
    area.remove();
    // Between calls: the old files the exchanges left are removed, and spares are made for the next call.
    ws.reserve?.want(staged);
  }
}

async function writeAndRecord(ws: Workspace, plan: Plan, opts: WriteOptions, staging: Promise<void>): Promise<WriteOutcome> {
  const recorder = opts.recorder ?? null;
  let prepared: PreparedEdit | null = null;
  const done: Step[] = [];
  try {
    if (recorder) {
      prepared = await recorder.prepare({ conversationId: opts.conversationId ?? "", toolName: opts.toolName ?? "" }, plan.steps.flatMap((s) => s.edits));
    }
    await staging;
    if (opts.signal?.aborted) throw internal("the request was cancelled; nothing was written", { cancelled: true });
    assertLockIntact(ws);
    await publish(ws, plan, done);
  } catch (err) {
    await staging.catch(() => undefined); // every write has finished before anything is rolled back
    rollback(ws, done);
    throw await withAbort(recorder, prepared, asWorksnapError(err));
  }
  opts.onPublished?.();
  let editIds: string[] = [];
  if (recorder && prepared) {
    try {
      editIds = (await recorder.commit(prepared, plan.steps.flatMap((s) => s.edits))).editIds;
    } catch (err) {
      // Every write is recorded or undone: a history that failed to record takes the files back.
      rollback(ws, plan.steps);
      throw await withAbort(recorder, prepared, asWorksnapError(err));
    }
  }
  return { changes: plan.steps.map((s) => s.applied), editIds, staleReads: plan.staleReads };
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
  staged?: string;
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

function validate(ws: Workspace, changes: WriteChange[], opts: WriteOptions): Plan {
  const repo = ws.repo;
  const parents: ParentCache = new Map();
  const befores = new Map<string, Before>();
  const claim = (t: WorktreeTarget, dirOk = false): Before => {
    if (befores.has(t.path)) {
      throw invalidArgument(`the change set touches ${t.path} more than once${t.path !== t.requested ? ` (as ${t.requested})` : ""}`, { path: t.path });
    }
    const state = dirOk && t.kind === "dir" ? null : readBefore(t, opts.known);
    const b: Before = { target: t, state, perm: t.kind === "file" ? (t.stat!.mode & 0o7777) : null };
    befores.set(t.path, b);
    return b;
  };
  const steps: Step[] = [];
  for (const c of changes) {
    if (c.kind === "write") {
      const dest = claim(resolveWorktreeTarget(repo, c.path, c.follow === true, parents));
      checkExpect(dest, c.expect);
      const mode = c.mode ?? (dest.state && dest.state.mode !== "120000" ? dest.state.mode : "100644");
      const after: PathState = { bytes: c.bytes, mode };
      const status: ChangeStatus = dest.state ? "modified" : "created";
      const operation: EditOperation = dest.state ? (c.operation ?? "replace") : "create";
      steps.push({
        change: c,
        dest,
        after,
        perm: permFor(mode, dest.state?.mode === "120000" ? null : dest.perm),
        plainRename: false,
        edits: [{ operation, path: dest.target.path, before: dest.state, after, ...(operation === "edit" && c.lines ? { lines: c.lines } : {}) }],
        applied: { status, path: dest.target.path, requested: c.path, before: dest.state, after, blob: blobIdOfState(c.bytes) },
      });
    } else if (c.kind === "delete") {
      const dest = claim(resolveWorktreeTarget(repo, c.path, false, parents), true);
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
      const srcTarget = resolveWorktreeTarget(repo, c.from, false, parents);
      if (srcTarget.kind === "missing") throw notFound(`${c.from} does not exist`, { path: c.from });
      if (srcTarget.kind === "dir") throw invalidArgument(`${c.from} is a directory; move its files one by one`, { path: c.from });
      const destTarget = resolveWorktreeTarget(repo, c.path, false, parents);
      if (destTarget.path === srcTarget.path) {
        throw invalidArgument(`cannot move ${c.from} onto itself`, { from: c.from, to: c.path });
      }
      const source = claim(srcTarget);
      const dest = claim(destTarget);
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
        edits,
        applied: { status: "renamed", path: dest.target.path, requested: c.path, from: source.target.path, before: src, after, blob: blobIdOfState(after.bytes) },
      });
    }
  }
  checkShape(ws, steps);
  if (opts.lease) checkLeaseBlobs(opts.lease, befores);
  const stale = opts.pins ? staleReads(opts.pins.pins, befores.values()) : [];
  if (stale.length > 0 && opts.pins?.onStale === "refuse") throw new StaleReadsError(stale);
  return { steps, befores, staleReads: stale };
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
function checkShape(ws: Workspace, steps: Step[]): void {
  const removed = new Set<string>();
  const created = new Set<string>();
  for (const s of steps) {
    if (s.after === null) removed.add(s.dest.target.path);
    if (s.source) removed.add(s.source.target.path);
  }
  for (const s of steps) {
    if (s.after === null) {
      if (s.dest.target.kind === "dir" && readdirSync(s.dest.target.abs).length > 0) {
        throw invalidArgument(`${s.dest.target.requested} is a directory that is not empty; delete it with recursive: true`, { path: s.dest.target.requested });
      }
      continue;
    }
    const path = s.dest.target.path;
    if (s.dest.target.kind === "dir") throw invalidArgument(`${s.dest.target.requested} is a directory, not a file`, { path: s.dest.target.requested });
    if (s.dest.target.kind === "other") throw invalidArgument(`${s.dest.target.requested} is not a regular file`, { path: s.dest.target.requested });
    const blocker = blockingAncestor(ws.repo.root, path, removed);
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
  for (const [path, b] of befores) {
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

function writeStaged(tmp: string, state: NonNullable<PathState>, perm: number): void {
  if (state.mode === "120000") {
    symlinkSync(Buffer.from(state.bytes.buffer, state.bytes.byteOffset, state.bytes.byteLength), tmp);
    return;
  }
  const fd = openSync(tmp, "wx", 0o600);
  try {
    let off = 0;
    while (off < state.bytes.length) off += writeSync(fd, state.bytes, off, state.bytes.length - off);
    // open()'s mode passes through the umask; the recorded mode must be exact.
    fchmodSync(fd, perm);
  } finally {
    closeSync(fd);
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function publish(ws: Workspace, plan: Plan, done: Step[]): Promise<void> {
  const dirs = new Set<string>();
  const made = new Set<string>();
  const removedPaths: string[] = [];
  /** Staged writes: renamed by the I/O threads, all at once (other work, like the history's diffs, goes on meanwhile). */
  const renames: Promise<void>[] = [];
  try {
    publishSteps(plan, done, dirs, made, removedPaths, renames);
  } finally {
    // Every rename has finished (or failed) before the caller rolls back or goes on.
    await settled(renames);
  }
  throwFirstFailure(await Promise.allSettled(renames));
  for (const p of removedPaths) pruneEmptyParents(ws.repo.root, p, dirs);
  await syncDirs(ws, dirs);
}

/** The synchronous part of publishing: removals, moves, and the writes' renames started (pushed on `renames`). */
function publishSteps(plan: Plan, done: Step[], dirs: Set<string>, made: Set<string>, removedPaths: string[], renames: Promise<void>[]): void {
  const order = (s: Step) => (s.after === null ? 0 : s.source ? 1 : 2);
  for (const s of [...plan.steps].sort((a, b) => order(a) - order(b))) {
    const dest = s.dest.target;
    done.push(s);
    if (s.after === null) {
      if (dest.kind === "dir") rmdirSync(dest.abs);
      else unlinkSync(dest.abs);
      removedPaths.push(dest.path);
      dirs.add(dirname(dest.abs));
      continue;
    }
    const parent = dirname(dest.abs);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    if (s.plainRename) renameSync(s.source!.target.abs, dest.abs);
    else if (s.staged && !s.source) {
      // The last group: independent renames; a file that exists is replaced by exchanging names (exchange.ts), and
      // the old file goes with the staging area.
      if (!(s.dest.state !== null && exchangePaths(s.staged, dest.abs))) renames.push(rename(s.staged, dest.abs));
    }
    else if (s.staged) renameSync(s.staged, dest.abs);
    else writeBeside(dest.abs, s.after, s.perm);
    dirs.add(parent);
    if (s.source) {
      if (!s.plainRename) rmSync(s.source.target.abs, { force: true });
      removedPaths.push(s.source.target.path);
      dirs.add(dirname(s.source.target.abs));
    }
  }
}

/**
 * The renames made durable: directories on the file system of `.mcp/tmp` as
 * one batch (one syncfs when there are many), any other one by its own fsync.
 */
async function syncDirs(ws: Workspace, dirs: Set<string>): Promise<void> {
  const tmpDir = join(ws.repo.stateDir, "tmp");
  const tmpDev = statSync(tmpDir).dev;
  const local: string[] = [];
  const foreign: string[] = [];
  for (const d of dirs) {
    let dev = -1;
    try {
      dev = statSync(d).dev;
    } catch {
      continue; // removed meanwhile (pruned): its parent is in the set
    }
    (dev === tmpDev ? local : foreign).push(d);
  }
  const batch = new DurableBatch(tmpDir);
  try {
    await Promise.all([batch.syncDirs(local), syncDirsEach(foreign)]);
  } finally {
    batch.close();
  }
}

/** A target on another file system than `.mcp/tmp`: staged beside it (same directory), then renamed. */
function writeBeside(target: string, state: NonNullable<PathState>, perm: number): void {
  const tmp = join(dirname(target), `.${target.slice(target.lastIndexOf("/") + 1)}.worksnap-${process.pid}-${randomId128().slice(0, 8)}`);
  try {
    writeStaged(tmp, state, perm);
    if (state.mode !== "120000") fsyncPath(tmp);
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Directories emptied by a removal go too, as git does; never the root. */
function pruneEmptyParents(root: string, path: string, dirs: Set<string>): void {
  const ancestors = ancestorsOf(path);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const abs = join(root, ancestors[i] as string);
    try {
      rmdirSync(abs);
      dirs.add(dirname(abs));
    } catch {
      return; // not empty (or already gone): stop climbing
    }
  }
}

/** Best effort: every path touched by a published step back to its before state. */
function rollback(ws: Workspace, done: Step[]): void {
  const befores = done.flatMap((s) => (s.source ? [s.dest, s.source] : [s.dest])).reverse();
  for (const b of befores) {
    try {
      const abs = b.target.abs;
      if (b.target.kind === "dir") {
        mkdirSync(abs, { recursive: true });
        continue;
      }
      if (b.state === null) {
        rmSync(abs, { force: true });
        pruneEmptyParents(ws.repo.root, b.target.path, new Set());
        continue;
      }
      mkdirSync(dirname(abs), { recursive: true });
      writeBeside(abs, b.state, b.perm ?? permFor(b.state.mode, null));
    } catch {
      // keep restoring the others; the original error is what the caller sees
    }
  }
}
