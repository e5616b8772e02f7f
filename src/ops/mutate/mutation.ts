import { compareUtf8 } from "../../core/byte-order";
import { blobIdOfState } from "../../core/content-hash";
import { WorksnapError, internal, invalidArgument } from "../../core/errors";
import { redactAbsolutePaths } from "../../core/public-error";
import type { BlobId } from "../../core/hash";
import type { RepoPath } from "../../core/repo-path";
import type { Fingerprint } from "../../repo/fingerprint";
import type { SnapshotId } from "../../repo/manifest";
import { CONVERSATION_ID, newConversationId } from "../history/conversation-id";
import { conversationNamedOtherwise } from "../history/fs-history-store";
import { foldsCase } from "../../repo/name-case";
import type { AheadCheckpoints, PathState } from "../write/edit-recorder";
import { touch } from "../live/leases";
import { liveFingerprint, readLiveTree } from "../live/live-tree";
import { SnapshotTree, applyToSnapshot } from "./snapshot-tree";
import { appliedDiff } from "./applied-diff";
import type { LineChange } from "../../core/line-change";
import { type AppliedChange, type ChangeStatus, type KnownState, type WriteChange, type WriteOutcome, applyChangesLocked } from "../write/write-path";
import { type PinLookup, StaleReadsError } from "../write/pin-check";
import { type StaleFile, describeStaleReads, staleReadRefusal } from "./stale-reads";
import { keepShownAfter } from "../snapshot/file";
import { withWorktreeLock } from "../write/worktree-lock";
import { type WorktreeTarget, WorktreeAccess, readTargetState, resolveAndReadTargets, resolveWorktreeTarget, statStamp } from "../write/target";
import type { Workspace } from "../workspace";
import { acquireLease } from "../live/stale-lease";

/**
 * What the four workspace mutations share: the mode switch, the lease rules
 * and the answer's common fields.
 *
 * Worktree mode runs under the work-tree lock: the lease (when given) is
 * validated against the live fingerprint (STALE_LEASE if it moved, or if a
 * file the lease read has changed since), the change set is built from the
 * current files and goes through the one write path, and the answer carries
 * the fingerprint after the write and a new lease. The new lease inherits the
 * touched set of the lease it replaces, plus every affected path with its new
 * blob (null for removed paths); the lease that was used learns the new blobs
 * too. A write without lease_id is allowed (spec 2.3 issues a lease then):
 * the patch context, expected_blob and create_only protect it, and the
 * caller's pins when it passes them (what it last saw of each file, checked
 * under the lock: a write, delete or move over a pinned file that changed is
 * refused with what changed; a patch whose context still matches is applied
 * and the answer names the files in stale_reads, unless staleWrites is
 * "refuse"). An explicit lease_id always wins over pins.
 *
 * Snapshot mode builds the same change set against a stored snapshot and
 * stores the result as a new snapshot (snapshot-tree.ts); nothing is
 * recorded in the edit history because no file changes.
 */
export interface MutationArgs {
  mode: "worktree" | "snapshot";
  lease_id?: string;
  snapshot_id?: string;
  mcp_conversation_id?: string;
  /** Cancellation: honoured until the first byte is published; after that the change set completes. */
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message: string) => void;
  /** Told what the edit history recorded for a work-tree write (not called when nothing was written). */
  /** The change set's record: its edits, and whether it was its conversation's first tool call. */
  onRecorded?: (recorded: { conversation_id: string; edit_ids: string[]; first_call: boolean }) => void;
  /** What the caller last saw of each file, by resolved path (null: no file); checked when no lease_id is given. */
  pins?: PinLookup;
  /** A patch over a pinned file that changed: "warn" (applied when its context matches, named in stale_reads; the default) or "refuse". */
  staleWrites?: "warn" | "refuse";
  /** Told every path a work-tree write left, with its blob (null: removed); not called when nothing was written. */
  onWritten?: (files: WrittenFile[]) => void;
  /**
   * The answer is shown to a person and no lease outlives it (the CLI's text output, whose process ends with the
   * answer): no fingerprint is read after the write and no lease is issued, so the answer of a work-tree write has
   * no lease_id or fingerprint; and no diff is rendered into it. A lease_id given with it is still checked.
   */
  brief?: boolean;
  /**
   * Plan the change set against the work tree and answer what it would change (or its rejects), as `git apply
   * --check` does: nothing is staged, written or recorded, and no conversation starts. Work-tree mode only.
   */
  check?: boolean;
}

/** A path a work-tree write left behind, as the caller may pin it. */
export interface WrittenFile {
  path: string;
  blob: BlobId | null;
  /**
   * The file had changed since the caller saw it and the answer did not show
   * that change whole (a patch applied with a warning): the caller does not
   * know the content it now holds.
   */
  unseen?: true;
}

export interface TreeTarget {
  requested: RepoPath;
  path: RepoPath;
  kind: "missing" | "file" | "symlink" | "dir" | "other";
}

/** Read access to the tree a mutation is built against (live files or a snapshot). */
export interface TreeView {
  mode: "worktree" | "snapshot";
  resolve(path: RepoPath, follow: boolean): Promise<TreeTarget>;
  /** Content of a resolved file path (symlinks as their text); null when absent. */
  read(path: RepoPath): Promise<PathState>;
  /** Files below a resolved directory, sorted by bytes (the work tree: tracked and untracked, not ignored). */
  filesUnder(dir: RepoPath): Promise<RepoPath[]>;
  /**
   * resolve (no final symlink followed) and, unless the path is a directory, read, for many paths at once; each
   * path's failure is its own. Where a view has it, it is what reading many files costs least.
   */
  readMany?(paths: readonly RepoPath[]): Promise<({ target: TreeTarget; state: PathState | Error } | Error)[]>;
}

export interface Built<T> {
  /** null: write nothing (a rejected patch). */
  changes: WriteChange[] | null;
  extra: T;
  /**
   * The changes were computed from the bytes the view read (a patch): the
   * write path takes those reads as the before states (no second read), and
   * refuses when a file changed in between.
   */
  fromReads?: boolean;
}

export interface ChangedEntry {
  path: string;
  status: ChangeStatus;
  from?: string;
  blob?: BlobId;
  mode?: "100755" | "120000";
  /** The path as asked for, when a symlink made the write land elsewhere. */
  requested_path?: string;
}

export type MutationBranch =
  | { cache_hint: "until_dirty"; lease_id: string; fingerprint: Fingerprint }
  /** a work-tree write asked for brief (MutationArgs.brief) */
  | { cache_hint: "until_dirty"; lease_id?: undefined; fingerprint?: undefined }
  | { cache_hint: "immutable"; snapshot_id: SnapshotId; base_snapshot_id: SnapshotId };

export type MutationResult<T> = MutationBranch &
  T & {
    changed: ChangedEntry[];
    changed_total: number;
    truncated: boolean;
    /** What the write changed, as a capped unified diff (write_file and apply_patch). */
    diff?: string;
    /** Changed files whose diff was left out of `diff` (wholly or in part). */
    diff_omitted?: number;
    /** Pinned files that had changed since the caller saw them when the write went ahead (a patch whose context matched). */
    stale_reads?: StaleFile[];
    stale_reads_total?: number;
    mcp_conversation_id?: string;
    note?: string;
    /** A check (MutationArgs.check): `changed` and `diff` say what the change set would do; nothing was written. */
    checked?: true;
  };

/** An answer, and every change in full for the op that builds on it. */
export interface Mutated<T> {
  result: MutationResult<T>;
  applied: AppliedChange[];
}

/** Changed paths listed in an answer; past this, changed_total says how many there were. */
export const CHANGED_CAP = 200;

export interface MutationOptions {
  /** Put the applied change in the answer as a capped diff (applied-diff.ts). */
  showDiff?: boolean;
  /** A pinned file that changed: refuse the change set (write, delete, move; the default) or report it (a patch, under args.staleWrites "warn"). */
  onStale?: "refuse" | "report";
}

/** How a refusal names the change set, by the spec 002 tool name. */
const WHAT: Record<string, string> = { write_file: "The write", edit_file_diff: "The patch", delete_file: "The delete", move_file: "The move" };

export async function runMutation<T extends object>(
  ws: Workspace,
  args: MutationArgs,
  toolName: string,
  build: (view: TreeView) => Promise<Built<T>>,
  opts: MutationOptions = {},
): Promise<Mutated<T>> {
  const conv = conversationOf(args);
  if (!conv.minted && foldsCase(ws.repo.root)) {
    const other = conversationNamedOtherwise(ws.repo.stateDir, conv.id);
    if (other !== null) {
      throw invalidArgument(
        `mcp_conversation_id ${conv.id} differs from the conversation ${other} only in case, and this file system does not tell names apart by case: their histories would share files. Pass ${other}, or another id`,
        { arg: "mcp_conversation_id", conversation_id: other },
      );
    }
  }
  const finish = (branch: MutationBranch, built: Built<T>, changes: AppliedChange[], recorded: boolean, note?: string) =>
    finishAnswer(branch, built, changes, conv, recorded, opts.showDiff === true && args.brief !== true, note);
  const progress = (done: number, message: string) => args.onProgress?.(done, 3, message);
  if (args.mode === "snapshot") {
    if (args.snapshot_id === undefined) throw invalidArgument('mode "snapshot" needs snapshot_id', { arg: "snapshot_id" });
    if (args.lease_id !== undefined) throw invalidArgument('lease_id applies to mode "worktree" only', { arg: "lease_id" });
    const baseId = ws.snapshots.resolve(args.snapshot_id);
    const tree = new SnapshotTree(ws, ws.snapshots.load(baseId));
    progress(0, "reading the snapshot");
    const built = await build(snapshotView(tree));
    checkCancelled(args.signal);
    if (built.changes === null) {
      return finish({ cache_hint: "immutable", snapshot_id: baseId, base_snapshot_id: baseId }, built, [], false);
    }
    progress(1, "storing the new snapshot");
    const derived = await applyToSnapshot(ws, tree, built.changes);
    return finish({ cache_hint: "immutable", snapshot_id: derived.snapshotId, base_snapshot_id: baseId }, built, derived.changes, false);
  }
  if (args.mode !== "worktree") throw invalidArgument('mode must be "worktree" or "snapshot"', { arg: "mode" });
  if (args.check === true && args.lease_id !== undefined) throw invalidArgument("a check writes nothing: it takes no lease_id", { arg: "lease_id" });
  if (args.snapshot_id !== undefined) throw invalidArgument('snapshot_id applies to mode "snapshot" only', { arg: "snapshot_id" });
  return withWorktreeLock(ws, async () => {
    // The directories the change set reads and writes are held open for the whole call (write/target.ts).
    const access = new WorktreeAccess(ws.repo);
    // The checkpoints of a many-file read, started as soon as the files are read (EditRecorder.checkpointAhead).
    let ahead: AheadCheckpoints | null = null;
    const checkpointReads = async (states: { path: RepoPath; state: PathState }[]) => {
      if (ahead !== null || !ws.recorder?.checkpointAhead || args.check === true) return;
      // only a head start: where it fails, prepare writes the checkpoints itself (and reports what fails then)
      ahead = await ws.recorder.checkpointAhead(conv.id, states).catch(() => null);
    };
    try {
      // With a lease, git computes the fingerprint while the change set is built (both only read, under the lock):
      // the lease is validated before anything is written, and a stale lease is reported before any error of the
      // build. Without one, the fingerprint before the write has no use once the write changes something (the answer
      // carries the one after it), so it is read only for an answer that writes nothing: on a large tree that is a
      // whole `git status` less per write.
      const fingerprintRead = args.lease_id !== undefined ? liveFingerprint(ws) : null;
      fingerprintRead?.catch(() => undefined);
      progress(0, "reading the work tree");
      const reads = new Map<string, KnownState>();
      let built: Built<T>;
      try {
        built = await build(worktreeView(ws, access, reads, checkpointReads));
      } catch (err) {
        const fp = await fingerprintRead?.catch(() => null);
        if (fp && args.lease_id !== undefined) await acquireLease(ws, args.lease_id, fp);
        throw err;
      }
      const fingerprint = fingerprintRead ? await fingerprintRead : null;
      const lease = args.lease_id !== undefined && fingerprint ? await acquireLease(ws, args.lease_id, fingerprint) : null;
      checkCancelled(args.signal);
      await access.rulesKnown;
      const changes = built.changes === null ? null : withoutNoOps(access, built.changes, reads);
      if (changes === null || changes.length === 0) {
        // a rejected patch or a write that changes nothing: nothing is written or recorded, and no conversation starts
        const unchanged = built.changes !== null ? unchangedNote(built.changes) : undefined;
        if (args.brief) return finish({ cache_hint: "until_dirty" }, built, [], false, unchanged);
        const now = fingerprint ?? (await liveFingerprint(ws));
        const kept = lease ?? ws.leases.issue(now);
        return finish({ cache_hint: "until_dirty", lease_id: kept.id, fingerprint: now }, built, [], false, unchanged);
      }
      built.changes = changes;
      if (args.check === true) {
        const checked = finish({ cache_hint: "until_dirty" }, built, changes.map((c) => wouldApply(c, reads)), false, "checked: nothing was written");
        checked.result.checked = true;
        return checked;
      }
      progress(1, "writing");
      // The new fingerprint is read as soon as the files are published, while the history appends its log: the work
      // tree no longer changes under the lock, and the history lives in .mcp, which git does not list.
      let fingerprintAfter: Promise<Fingerprint> | null = null;
      const pins = lease === null && args.pins ? { pins: args.pins, onStale: opts.onStale ?? "refuse" } : undefined;
      let outcome: WriteOutcome;
      try {
        outcome = await applyChangesLocked(ws, built.changes, {
          recorder: ws.recorder,
          conversationId: conv.id,
          toolName,
          lease: lease && fingerprint ? { lease, fingerprint } : undefined,
          pins,
          signal: args.signal,
          known: built.fromReads ? reads : undefined,
          checkpointsAhead: built.fromReads ? ahead : null,
          access,
          onPublished: () => {
            if (args.brief) return;
            fingerprintAfter = liveFingerprint(ws);
            fingerprintAfter.catch(() => undefined);
          },
        });
      } catch (err) {
        if (!(err instanceof StaleReadsError)) throw err;
        throw staleReadRefusal(await describeStaleReads(ws, err.reads), err.reads.length, WHAT[toolName] ?? "The change");
      }
      if (outcome.editIds.length > 0) args.onRecorded?.({ conversation_id: conv.id, edit_ids: outcome.editIds, first_call: outcome.toolCallIndex === 0 });
      const stale = outcome.staleReads.length > 0 ? await describeStaleReads(ws, outcome.staleReads) : [];
      if (args.onWritten) {
        // what the caller will pin is kept, so a refusal after someone else's change can show it (after the answer)
        keepShownAfter(ws, outcome.changes.flatMap((c) => (c.blob && c.after && c.after.mode !== "120000" ? [{ blob: c.blob, bytes: c.after.bytes }] : [])));
        args.onWritten(writtenFiles(outcome, stale));
      }
      let branch: MutationBranch = { cache_hint: "until_dirty" };
      const learning = lease ? [lease] : [];
      if (!args.brief) {
        progress(2, "reading the new fingerprint");
        let after: Fingerprint;
        try {
          after = await (fingerprintAfter ?? liveFingerprint(ws));
        } catch (err) {
          throw writtenUnread(err, conv.id, outcome.changes);
        }
        const next = ws.leases.issue(after);
        if (lease) for (const [p, b] of lease.touched) next.touched.set(p, b);
        learning.push(next);
        branch = { cache_hint: "until_dirty", lease_id: next.id, fingerprint: after };
      }
      for (const c of outcome.changes) {
        for (const l of learning) {
          if (c.from) touch(l, c.from, null);
          touch(l, c.path, c.blob);
        }
      }
      const result = finish(branch, built, outcome.changes, true);
      if (outcome.staleReads.length > 0) {
        result.result.stale_reads = stale;
        result.result.stale_reads_total = outcome.staleReads.length;
      }
      return result;
    } finally {
      // Removed once its write is over, without holding the answer (a rejected patch answers at once); nothing
      // once the history took them. A process that exits first leaves the temp file to the next, as a crash does.
      void (ahead as AheadCheckpoints | null)?.discard();
      access.close();
    }
  });
}

/**
 * What the write left, for the caller's pins: every written path with its
 * blob, a removed one (a delete, a move's source) with null. A file whose
 * change since the caller saw it was not shown whole (not listed, or its diff
 * cut or binary) is marked unseen, and so is a move's destination when its
 * source was.
 */
function writtenFiles(outcome: WriteOutcome, stale: StaleFile[]): WrittenFile[] {
  const known = new Set(stale.filter((f) => f.diff_complete).map((f) => f.path));
  const unseen = new Set(outcome.staleReads.filter((r) => !known.has(r.path)).map((r) => r.path as string));
  const out: WrittenFile[] = [];
  for (const c of outcome.changes) {
    if (c.from) out.push(unseen.has(c.from) ? { path: c.from, blob: null, unseen: true } : { path: c.from, blob: null });
    const blind = unseen.has(c.path) || (c.from !== undefined && unseen.has(c.from));
    out.push(blind ? { path: c.path, blob: c.blob, unseen: true } : { path: c.path, blob: c.blob });
  }
  return out;
}

function checkCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw internal("the request was cancelled; nothing was written", { cancelled: true });
}

interface Conversation {
  id: string;
  minted: boolean;
}

function conversationOf(args: MutationArgs): Conversation {
  const given = args.mcp_conversation_id;
  if (given === undefined) return { id: newConversationId(), minted: true };
  if (typeof given !== "string" || !CONVERSATION_ID.test(given)) {
    throw invalidArgument(
      `mcp_conversation_id ${JSON.stringify(given)} is not valid: use 1-128 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit (or omit it to get one)`,
      { arg: "mcp_conversation_id" },
    );
  }
  return { id: given, minted: false };
}

function finishAnswer<T extends object>(
  branch: MutationBranch,
  built: Built<T>,
  changes: AppliedChange[],
  conv: Conversation,
  recorded: boolean,
  showDiff: boolean,
  note?: string,
): Mutated<T> {
  const sorted = [...changes].sort((a, b) => compareUtf8(a.path, b.path));
  const changed = sorted.slice(0, CHANGED_CAP).map(changedEntry);
  const out = {
    ...branch,
    ...built.extra,
    changed,
    changed_total: sorted.length,
    truncated: sorted.length > changed.length,
  } as MutationResult<T>;
  if (showDiff && sorted.length > 0) {
    const lines = new Map<string, LineChange[]>();
    for (const c of built.changes ?? []) if (c.kind === "write" && c.lines) lines.set(c.path, c.lines);
    const applied = appliedDiff(sorted, lines);
    out.diff = applied.diff;
    if (applied.omitted > 0) out.diff_omitted = applied.omitted;
  }
  if (recorded) {
    out.mcp_conversation_id = conv.id;
    if (conv.minted) {
      out.note = `Started edit conversation ${conv.id}: pass mcp_conversation_id "${conv.id}" on the next edits of this turn so they are reviewed together.`;
    }
  }
  if (note !== undefined) out.note = note;
  return { result: out, applied: sorted };
}

/**
 * A write that was made and recorded, whose answer cannot be given: the work tree's state after it could not be
 * read (the repository moved away meanwhile, git failing), and a work-tree answer carries that state and a lease
 * on it. The error says what was written, so that a caller does not take it for "nothing written" and repeat it.
 */
function writtenUnread(err: unknown, conversationId: string, changes: AppliedChange[]): WorksnapError {
  const cause = err instanceof WorksnapError ? err : null;
  const why = redactAbsolutePaths(cause ? cause.message : String((err as Error)?.message ?? err));
  const paths = changes.map((c) => c.path).sort(compareUtf8);
  const named = paths.length === 1 ? (paths[0] as string) : `${paths.length} files`;
  return new WorksnapError(
    cause?.code ?? "INTERNAL",
    `${named} written and recorded (conversation ${conversationId}), but the work tree's state after the write could not be read, so no lease comes with this answer: ${why}`,
    { ...(cause?.details ?? {}), written: true, mcp_conversation_id: conversationId, written_paths: paths.slice(0, CHANGED_CAP), written_total: paths.length },
  );
}

/** What a change would do to the work tree as the build read it (a check's answer): the write path's own shape. */
function wouldApply(c: WriteChange, reads: Map<string, KnownState>): AppliedChange {
  const stateOf = (p: RepoPath) => reads.get(p)?.state ?? null;
  if (c.kind === "delete") return { status: "deleted", path: c.path, requested: c.path, before: stateOf(c.path), after: null, blob: null };
  const before = stateOf(c.kind === "move" ? c.from : c.path);
  const bytes = c.bytes ?? before?.bytes ?? new Uint8Array();
  const after = { bytes, mode: c.mode ?? before?.mode ?? "100644" };
  if (c.kind === "move") return { status: "renamed", path: c.path, requested: c.path, from: c.from, before, after, blob: blobIdOfState(bytes) };
  return { status: before ? "modified" : "created", path: c.path, requested: c.path, before, after, blob: blobIdOfState(bytes) };
}

/**
 * The changes that would change something: a write of exactly the bytes and
 * mode a file already holds is dropped (nothing to write, nothing to record),
 * unless it carries a compare-and-swap the write path must still check. The
 * current state is what the build read (a patch), else read now, without
 * entering it among the build's reads.
 */
function withoutNoOps(access: WorktreeAccess, changes: WriteChange[], reads: Map<string, KnownState>): WriteChange[] {
  return changes.filter((c) => {
    if (c.kind !== "write" || c.expect !== undefined) return true;
    let current: PathState;
    // A path read under its own name is canonical (its resolution is itself): no need to resolve it again.
    const known = c.follow === true ? undefined : reads.get(c.path);
    if (known) current = known.state;
    else {
      try {
        const target = resolveWorktreeTarget(access, c.path, c.follow === true);
        current = reads.get(target.path)?.state ?? (target.kind === "file" || target.kind === "symlink" ? readTargetState(target) : null);
      } catch {
        return true; // the write path reports what is wrong with it
      }
    }
    if (current === null || (c.mode !== undefined && c.mode !== current.mode)) return true;
    return Buffer.compare(current.bytes, c.bytes) !== 0;
  });
}

function unchangedNote(changes: WriteChange[]): string {
  const paths = [...new Set(changes.map((c) => c.path))].sort(compareUtf8);
  if (paths.length === 0) return "Nothing changed: every file already holds this content. Nothing was written or recorded.";
  const named = paths.length <= 3 ? paths.join(", ") : `${paths.slice(0, 3).join(", ")} and ${paths.length - 3} more`;
  return `Nothing changed: ${named} already ${paths.length === 1 ? "holds" : "hold"} this content. Nothing was written or recorded.`;
}

function changedEntry(c: AppliedChange): ChangedEntry {
  const e: ChangedEntry = { path: c.path, status: c.status };
  if (c.from) e.from = c.from;
  if (c.blob) e.blob = c.blob;
  const mode = c.after?.mode;
  if (mode === "100755" || mode === "120000") e.mode = mode;
  if (c.requested !== c.path && c.status !== "renamed") e.requested_path = c.requested;
  return e;
}

/**
 * The live files; every read is kept in `reads` with the stat stamp taken
 * before it. Parent directories are resolved once per build, and a path just
 * resolved is read without resolving it again.
 */
function worktreeView(ws: Workspace, access: WorktreeAccess, reads: Map<string, KnownState>, onReadMany?: (states: { path: RepoPath; state: PathState }[]) => Promise<void>): TreeView {
  const resolved = new Map<string, WorktreeTarget>();
  return {
    mode: "worktree",
    resolve: async (path, follow) => {
      const t = resolveWorktreeTarget(access, path, follow);
      if (!follow) resolved.set(t.path, t);
      return t;
    },
    read: async (path) => {
      await access.rulesKnown;
      const t = resolved.get(path) ?? resolveWorktreeTarget(access, path, false);
      resolved.delete(path);
      const state = readTargetState(t);
      reads.set(t.path, { state, stamp: statStamp(t.stat) });
      return state;
    },
    filesUnder: async (dir) => (await readLiveTree(ws, [dir])).entries.map((e) => e.path as RepoPath).filter((p) => p !== dir),
    readMany: async (paths) => {
      await access.rulesKnown;
      const states: { path: RepoPath; state: PathState }[] = [];
      const out = resolveAndReadTargets(access, paths).map((r) => {
        if (!(r instanceof Error) && !(r.state instanceof Error)) {
          reads.set(r.target.path, { state: r.state, stamp: statStamp(r.target.stat) });
          states.push({ path: r.target.path, state: r.state });
        }
        return r;
      });
      await onReadMany?.(states);
      return out;
    },
  };
}

function snapshotView(tree: SnapshotTree): TreeView {
  return {
    mode: "snapshot",
    resolve: (path, follow) => tree.resolve(path, follow),
    read: (path) => tree.read(path),
    filesUnder: async (dir) => tree.filesUnder(dir),
  };
}
