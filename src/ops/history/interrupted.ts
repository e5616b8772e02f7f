/**
 * Every write is recorded or undone, even after kill -9 (DESIGN decision 14).
 *
 * A recorded tool call seals its record before publishing its first file
 * (recorder.ts): checkpoints and diffs are durable, and a write intent
 * (`pending_writes/{id}.json`) holds the very entries the call will log. A
 * process that dies between the first rename and the log append leaves the
 * intent behind; the next process to take the work-tree lock (any write, any
 * review, a server starting, any `history` command) completes it here, before
 * it does anything else:
 *
 * - each path the call touched is compared with its state before the call and
 *   its state after (hash and mode, as the entries and the intent record them);
 * - nothing published (every path as before): the call is dropped, as if it
 *   had failed before writing: its intent and history objects are removed;
 * - something published: the call is completed. Paths still as before are
 *   brought to their recorded new state (the entry's diff, or its exact
 *   bytes, applied to the bytes before and checked against the recorded hash),
 *   through the write path, and the entries are logged. The tool call then
 *   stands whole in the work tree and in the history, pending review, and
 *   `history reject` can take it back like any other;
 * - a path that is neither (changed by someone else since the crash) is left
 *   as it is, and the entries touching it are not logged: the record never
 *   claims a state the work tree does not have.
 *
 * Completing rather than restoring the files: everything needed is durable by
 * construction (the intent is written after the objects it names), while the
 * bytes before a write are only durable when the call took a checkpoint.
 */
import { compareUtf8 } from "../../core/byte-order";
import type { FileMode } from "../../core/file-mode";
import { WorksnapError } from "../../core/errors";
import { sha256Hex } from "../../core/hash";
import type { RepoPath } from "../../core/repo-path";
import type { Workspace } from "../workspace";
import { withWorktreeLock } from "../write/worktree-lock";
import { writeChangesLocked, type WriteChange } from "../write/write-path";
import { deleteObjects } from "./batch-store";
import { readDisks, type DiskState } from "./external";
import { HistoryObjects, type Content } from "./objects";
import { applyChange } from "./reapply";
import { afterRel, checkpointMetaRel, type HistoryStore } from "./store";
import type { LogEntry, WriteIntent } from "./types";

/** What happened to one interrupted tool call. */
export interface CompletedWrite {
  intent_id: string;
  conversation_id: string;
  /** completed: its entries were logged (and unpublished files written); dropped: it had published nothing. */
  outcome: "completed" | "dropped";
  /** Edits logged. */
  logged: string[];
  /** Paths this recovery wrote (published late). */
  written: string[];
  /** Paths changed by someone else since the crash: left as they are, their edits not logged. */
  left: string[];
}

type State = { hash: string; mode: FileMode } | null;

const EMPTY = new Uint8Array(0);

/**
 * Completes or drops every interrupted recorded write. Call with the
 * work-tree lock held (worktree-lock.ts does, each time a process takes it).
 */
export async function completeInterruptedWrites(ws: Workspace, store: HistoryStore): Promise<CompletedWrite[]> {
  const intents = await store.listWriteIntents();
  const out: CompletedWrite[] = [];
  for (const intent of intents) {
    try {
      out.push(await completeOne(ws, store, intent));
    } catch (err) {
      // Every write waits for this: the message says which record is in the way.
      const e = err instanceof WorksnapError ? err : null;
      const message = `completing the interrupted write ${intent.intent_id} of conversation ${intent.conversation_id} failed: ${err instanceof Error ? err.message : String(err)}`;
      throw new WorksnapError(e?.code ?? "INTERNAL", message, { ...(e?.details ?? {}), intent_id: intent.intent_id });
    }
  }
  return out;
}

/**
 * For a process that opens the repository without writing (a `history`
 * command, a server starting): when interrupted writes are waiting, takes the
 * work-tree lock, which completes them (workspace.ts), and returns what was
 * done; nothing when none is waiting.
 */
export async function completeInterruptedWritesNow(ws: Workspace, store: HistoryStore): Promise<CompletedWrite[]> {
  if ((await store.listWriteIntents()).length === 0) return [];
  await withWorktreeLock(ws, async () => undefined);
  return ws.completedWrites.splice(0);
}

async function completeOne(ws: Workspace, store: HistoryStore, intent: WriteIntent): Promise<CompletedWrite> {
  const conv = intent.conversation_id;
  const report: CompletedWrite = { intent_id: intent.intent_id, conversation_id: conv, outcome: "completed", logged: [], written: [], left: [] };
  const logged = new Set((await store.readLog(conv)).map((e) => e.edit_id));
  const entries = intent.entries.filter((e) => !logged.has(e.edit_id));
  if (entries.length === 0) {
    // The commit logged them and died before removing the intent.
    await store.deleteWriteIntent(intent.intent_id);
    return report;
  }
  const { initial, final } = statesOf(intent, entries);
  const paths = [...final.keys()].sort(compareUtf8);
  const disk = await readDisks(ws.repo, paths);
  const published = paths.filter((p) => !sameState(initial.get(p)!, final.get(p)!) && matches(disk.get(p)!, final.get(p)!));
  if (published.length === 0) {
    report.outcome = "dropped";
    await dropObjects(store, entries);
    await store.deleteWriteIntent(intent.intent_id);
    return report;
  }

  const objects = new HistoryObjects(store);
  const changes: WriteChange[] = [];
  const done = new Set<string>(published);
  for (const p of paths) {
    if (done.has(p)) continue;
    const want = final.get(p)!;
    const d = disk.get(p)!;
    if (matches(d, want)) {
      done.add(p); // before and after alike
      continue;
    }
    if (!matches(d, initial.get(p)!) && !movedHere(p, entries, d, done, initial)) {
      report.left.push(p);
      continue;
    }
    if (want === null) {
      changes.push({ kind: "delete", path: p as RepoPath });
      done.add(p);
      continue;
    }
    const content = await newContent(p, entries, want, disk, initial, objects);
    if (!content) {
      report.left.push(p);
      continue;
    }
    changes.push({ kind: "write", path: p as RepoPath, bytes: content.bytes, mode: content.mode, follow: false });
    done.add(p);
  }
  if (changes.length > 0) await writeChangesLocked(ws, changes);
  report.written = changes.map((c) => c.path).sort(compareUtf8);

  const toLog = entries.filter((e) => pathsOf(e).every((p) => done.has(p)));
  if (toLog.length > 0) await store.withLogLock([conv], () => store.appendLog(conv, toLog));
  report.logged = toLog.map((e) => e.edit_id);
  await store.deleteWriteIntent(intent.intent_id);
  return report;
}

function pathsOf(e: LogEntry): string[] {
  return e.source_path ? [e.source_path, e.file_path] : [e.file_path];
}

/** Each path's state before the call (its first entry's before) and after it (its last entry's after). */
function statesOf(intent: WriteIntent, entries: LogEntry[]): { initial: Map<string, State>; final: Map<string, State> } {
  const initial = new Map<string, State>();
  const final = new Map<string, State>();
  for (const e of entries) {
    const [modeBefore, modeAfter] = intent.modes[e.edit_id] ?? [null, null];
    const before: State = e.hash_before !== null && modeBefore ? { hash: e.hash_before, mode: modeBefore } : null;
    const after: State = e.hash_after !== null && modeAfter ? { hash: e.hash_after, mode: modeAfter } : null;
    if (e.operation === "move" && e.source_path) {
      if (!initial.has(e.source_path)) initial.set(e.source_path, before);
      final.set(e.source_path, null);
      if (!initial.has(e.file_path)) initial.set(e.file_path, null);
      final.set(e.file_path, after);
      continue;
    }
    if (!initial.has(e.file_path)) initial.set(e.file_path, before);
    final.set(e.file_path, e.operation === "delete" ? null : after);
  }
  return { initial, final };
}

function sameState(a: State, b: State): boolean {
  return a === null || b === null ? a === b : a.hash === b.hash && a.mode === b.mode;
}

function matches(d: DiskState, s: State): boolean {
  if (s === null) return d.kind === "missing";
  return d.kind === "file" && d.hash === s.hash && d.state!.mode === s.mode;
}

/** The call's last entry that gives `path` content (not a deletion). */
function lastWriteOf(path: string, entries: LogEntry[]): LogEntry | undefined {
  return entries.findLast((x) => x.file_path === path && x.operation !== "delete");
}

/**
 * Whether `path` holds, unchanged, the file a move of the call renamed to it from a source it has left: a move
 * with edits is published as the rename, then the new bytes renamed over it, and a process killed between the two
 * left the old bytes under the new name. (A move that changes only the case of a name is always published so:
 * the two spellings name one file on a file system that folds case.) The new bytes are still to be written.
 */
function movedHere(path: string, entries: LogEntry[], d: DiskState, done: Set<string>, initial: Map<string, State>): boolean {
  const e = lastWriteOf(path, entries);
  return e !== undefined && e.operation === "move" && done.has(e.source_path!) && matches(d, initial.get(e.source_path!) ?? null);
}

/**
 * The recorded new content of a path not yet published: its last entry's
 * change applied to the content it was made on (the path's own bytes before
 * the call, nothing for a creation, or a move's source), checked against the
 * recorded hash. Null when that cannot be had.
 */
async function newContent(
  path: string,
  entries: LogEntry[],
  want: NonNullable<State>,
  disk: Map<string, DiskState>,
  initial: Map<string, State>,
  objects: HistoryObjects,
): Promise<Content | null> {
  const e = lastWriteOf(path, entries);
  if (!e) return null;
  let on: Content;
  if (e.operation === "create") on = { bytes: EMPTY, mode: "100644" };
  else {
    const from = e.operation === "move" ? e.source_path! : path;
    // a move's source, or the move's target when the rename was published and its bytes not yet (movedHere)
    const d = [disk.get(from), disk.get(path)].find((x) => x !== undefined && x.state !== null && matches(x, initial.get(from) ?? null));
    if (!d || !d.state) return null;
    on = d.state;
  }
  const applied = applyChange(on, await objects.change(e), e.operation === "create" ? null : e.hash_before);
  if (!applied.ok) return null;
  const content = { bytes: applied.content.bytes, mode: want.mode };
  return sha256Hex(content.bytes) === want.hash ? content : null;
}

/** The history objects of a call that published nothing: its diffs, bytes after and checkpoints. */
async function dropObjects(store: HistoryStore, entries: LogEntry[]): Promise<void> {
  const rels: string[] = [];
  for (const e of entries) {
    if (e.diff_file) rels.push(e.diff_file);
    if (await store.hasObject(afterRel(e.conversation_id, e.edit_id))) rels.push(afterRel(e.conversation_id, e.edit_id));
    if (e.checkpoint_file) rels.push(e.checkpoint_file, checkpointMetaRel(e.checkpoint_file));
  }
  try {
    await deleteObjects(store, rels);
  } catch {
    // objects that share a pack with others stay, unreferenced, as after any crash before the log
  }
}
