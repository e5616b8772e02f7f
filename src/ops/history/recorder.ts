/**
 * The write path's history hook (edit-recorder.ts), spec 002 sections 2.2-4.
 * Called with the work-tree lock held:
 *
 * - prepare, before any byte changes: timestamps from the history clock, an
 *   edit id per change, and a checkpoint (the raw bytes before) when the
 *   conversation touches a file for the first time, or when the file is not
 *   what the conversation last left there (someone else changed it since).
 *   All checkpoints of the tool call are one batch (one pack file when there
 *   are many, batch-store.ts), made durable with one flush before prepare
 *   returns. The write path hands over the new states too (it writes exactly
 *   those bytes), so the diffs start here, in the background: slices of CPU
 *   work between which the write path's I/O goes on, written as one batch
 *   (one flush) as soon as they are made, beside the checkpoints' flush;
 * - seal, while the write path stages the new contents (it has finished
 *   before the first file is published): the diffs of changes prepare did not
 *   know the new state of, once the background batch is durable, then a write
 *   intent holding the very entries the call will log (pending_writes/, durable).
 *   From here a crash is completed by the next process that takes the
 *   work-tree lock (interrupted.ts): every file the call published gets its
 *   entry, or the call is dropped when it published nothing;
 * - commit, after the writes: the JSON Lines entries, appended to the log
 *   under the conversation's log lock (one flushed append per tool call,
 *   however many files it changed; readers count whole lines only), then the
 *   intent is removed;
 * - abort: removes what prepare and seal wrote; the log is untouched.
 *
 * The changes of one tool call share its tool_call_index and are recorded in
 * the order the write path publishes them (deletes, moves, writes), so
 * replaying the entries one by one is always possible.
 */
import { internal, repoChanged } from "../../core/errors";
import type { RepoPath } from "../../core/repo-path";
import { hashAhead } from "../../repo/hash-ahead";
import type { AheadCheckpoints, EditChange, EditContext, EditRecorder, PathState, PreparedEdit } from "../write/edit-recorder";
import { sha256Of } from "../../core/content-hash";
import { ObjectPresence, deleteObjects, putObjects, startPack, type ObjectWrite, type PendingPack } from "./batch-store";
import { nextTimestamps } from "./clock";
import { recordDiffBytes } from "./record-diff";

export { diffReplays } from "./record-diff";
import { afterRel, checkConversationId, checkpointMetaRel, checkpointRel, diffRel, type HistoryStore } from "./store";
import type { CheckpointMeta, LogEntry, WriteIntent } from "./types";

interface ConversationState {
  version: string | null;
  /** What the conversation last left at each path it touched: a hash, or null for no file. */
  known: Map<string, string | null>;
  nextIndex: number;
  lastTimestamp: string | undefined;
}

/** The stored record of one change's content: its diff file and its new state. */
interface Recorded {
  after: PathState;
  diffFile: string | null;
}

interface Draft {
  /** Index into the change list. */
  index: number;
  editId: string;
  timestamp: string;
  checkpoint: string | null;
  hashBefore: string | null;
  /** Recorded at prepare, from the new state the write path announced (`after`). */
  recorded?: Recorded;
}

interface Token {
  conversationId: string;
  toolName: string;
  toolCallIndex: number;
  drafts: Draft[];
  /** Objects written for this edit, removed again on abort. */
  created: string[];
  /** The diffs (and bytes after) of the changes whose new state prepare knew, made and written in the background. */
  diffs: Promise<void> | null;
  /** Set on abort: the background diffs stop. */
  stopped: boolean;
  /** The changes as prepare saw them. */
  changes: EditChange[];
  /** The entries to log, once sealed. */
  entries: LogEntry[] | null;
  /** The write intent seal made durable. */
  intentId: string | null;
}

const encoder = new TextEncoder();
/** Below this many files to checkpoint, checkpoints are not started ahead (they would not make a pack). */
const AHEAD_MIN_FILES = 8;

/** AheadCheckpoints' token. */
interface Ahead {
  recorder: HistoryRecorder;
  conv: string;
  /** The edit id drawn for each path read. */
  editIds: Map<string, string>;
  objects: ObjectWrite[];
  pack: PendingPack;
}
/** Diffs made between two turns of the event loop (so the I/O under way meanwhile makes progress). */
const YIELD_EVERY = 16;

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class HistoryRecorder implements EditRecorder {
  private readonly conversations = new Map<string, ConversationState>();

  constructor(private readonly store: HistoryStore) {}

  /**
   * The checkpoints a change set of these read states would take, started before the change set is made (a
   * patch read its files and has yet to apply its hunks): a pack the store writes and makes durable meanwhile
   * (FsHistoryStore.startPack: one synchronous writev on an I/O thread), so that prepare finds it on the disk.
   * The same decisions as prepare's (the conversation's known states, names already taken), with an edit id
   * drawn here for each path, which prepare then gives the change of that path. Null for fewer than
   * AHEAD_MIN_FILES files to take, or where the store cannot.
   */
  async checkpointAhead(conversationId: string, reads: { path: RepoPath; state: PathState }[]): Promise<AheadCheckpoints | null> {
    const files = reads.filter((r): r is { path: RepoPath; state: NonNullable<PathState> } => r.state !== null);
    if (files.length < AHEAD_MIN_FILES) return null;
    const conv = checkConversationId(conversationId);
    const state = await this.state(conv);
    hashAhead(files.map((r) => r.state.bytes));
    const presence = new ObjectPresence(this.store);
    const objects: ObjectWrite[] = [];
    const editIds = new Map<string, string>();
    for (const r of files) {
      const editId = crypto.randomUUID();
      editIds.set(r.path, editId);
      await this.checkpointIfNeeded(conv, state, { operation: "edit", path: r.path, before: r.state }, sha256Of(r.state.bytes), editId, presence, objects);
    }
    if (objects.length < 2 * AHEAD_MIN_FILES) return null;
    const pack = startPack(this.store, objects);
    if (!pack) return null;
    const token: Ahead = { recorder: this, conv, editIds, objects, pack };
    return { token, discard: () => pack.discard() };
  }

  async prepare(ctx: EditContext, changes: EditChange[], ahead: AheadCheckpoints | null = null): Promise<PreparedEdit> {
    const conv = checkConversationId(ctx.conversationId);
    const given = ahead && (ahead.token as Ahead).recorder === this && (ahead.token as Ahead).conv === conv ? (ahead.token as Ahead) : null;
    if (!ctx.toolName) throw internal("the write path recorded a change without a tool name");
    await this.refuseDuringInterruptedReview(changes);
    const state = await this.state(conv);
    const order = recordOrder(changes);
    const stamps = await nextTimestamps(this.store, changes.length, state.lastTimestamp);
    const token: Token = {
      conversationId: conv,
      toolName: ctx.toolName,
      toolCallIndex: state.nextIndex,
      drafts: [],
      created: [],
      diffs: null,
      stopped: false,
      changes,
      entries: null,
      intentId: null,
    };
    const presence = new ObjectPresence(this.store);
    const checkpoints: ObjectWrite[] = [];
    for (let k = 0; k < order.length; k++) {
      const index = order[k]!;
      const change = changes[index]!;
      const editId = given?.editIds.get(checkpointPath(change) ?? "") ?? crypto.randomUUID();
      const hashBefore = change.before ? sha256Of(change.before.bytes) : null;
      token.drafts.push({ index, editId, timestamp: stamps[k]!, hashBefore, checkpoint: await this.checkpointIfNeeded(conv, state, change, hashBefore, editId, presence, checkpoints) });
    }
    // The checkpoints are durable when prepare returns. The diffs are made meanwhile and after, in slices between
    // which the write path's I/O (writing the checkpoints, staging, publishing) goes on; commit writes them.
    // The checkpoints started ahead are used when they are exactly these; otherwise they go, and these are written.
    const adopted = given && sameObjects(given.objects, checkpoints) ? given.pack : null;
    if (!adopted) void ahead?.discard(); // removed once its write is over
    const checkpointsWritten = adopted ? this.placeAhead(token, adopted) : this.writeObjects(token, checkpoints);
    token.diffs = this.makeDiffs(token, changes);
    token.diffs.catch(() => undefined); // awaited by commit or abort
    try {
      await checkpointsWritten;
    } catch (err) {
      // nothing of a failed prepare stays: the diffs may have been written meanwhile
      await this.stopDiffs(token);
      await this.removeObjects(token.created);
      throw err;
    }
    return { token };
  }

  /** The diff objects of every change whose new state is known, a slice at a time, then written as one batch. */
  private async makeDiffs(token: Token, changes: EditChange[]): Promise<void> {
    const diffs: ObjectWrite[] = [];
    for (let k = 0; k < token.drafts.length; k++) {
      if (k % YIELD_EVERY === 0) {
        await yieldToIo();
        if (token.stopped) return;
      }
      const d = token.drafts[k]!;
      const change = changes[d.index]!;
      if (change.operation === "delete" || change.after !== undefined) d.recorded = recordChange(token.conversationId, d.editId, change, diffs);
    }
    if (!token.stopped) await this.writeObjects(token, diffs);
  }

  private async stopDiffs(token: Token): Promise<void> {
    token.stopped = true;
    await token.diffs?.catch(() => undefined);
  }

  /**
   * The diffs, and an intent naming the entries to log, durable before the
   * first file is published (a crash after that is completed from them).
   */
  async seal(prepared: PreparedEdit): Promise<void> {
    const token = prepared.token as Token;
    if (token.entries) return;
    if (token.diffs) await token.diffs;
    const objects: ObjectWrite[] = [];
    const records = token.drafts.map((d) => d.recorded ?? (d.recorded = recordChange(token.conversationId, d.editId, token.changes[d.index]!, objects)));
    await this.writeObjects(token, objects);
    const entries = token.drafts.map((d, k) => entryFor(token, d, token.changes[d.index]!, records[k]!));
    const modes: WriteIntent["modes"] = {};
    for (const d of token.drafts) {
      const c = token.changes[d.index]!;
      modes[d.editId] = [c.before?.mode ?? null, c.operation === "delete" ? null : (c.after?.mode ?? null)];
    }
    const intent: WriteIntent = { intent_id: crypto.randomUUID(), timestamp: entries[0]?.timestamp ?? "", conversation_id: token.conversationId, entries, modes };
    await this.store.putWriteIntent(intent);
    token.intentId = intent.intent_id;
    token.entries = entries;
  }

  async commit(prepared: PreparedEdit, changes: EditChange[]): Promise<{ editIds: string[]; toolCallIndex: number }> {
    const token = prepared.token as Token;
    const conv = token.conversationId;
    for (const d of token.drafts) {
      const change = changes[d.index];
      if (!change) throw internal("the write path committed a different change list than it prepared");
      const announced = d.recorded;
      if (announced && change.operation !== "delete" && !sameState(announced.after, change.after ?? null)) {
        throw internal(`the write path committed ${change.path} with other bytes than it announced at prepare`, { path: change.path });
      }
    }
    await this.seal(prepared);
    const entries = token.entries!;
    await this.store.withLogLock([conv], () => this.store.appendLog(conv, entries));
    // Logged: the intent has done its work (a crash before this removal finds its entries logged and removes it).
    if (token.intentId) await this.store.deleteWriteIntent(token.intentId);
    token.intentId = null;
    const state = this.conversations.get(conv);
    if (state) {
      for (const e of entries) applyToKnown(state.known, e);
      state.nextIndex = token.toolCallIndex + 1;
      state.lastTimestamp = entries[entries.length - 1]?.timestamp ?? state.lastTimestamp;
      state.version = await this.store.logVersion(conv);
    }
    const ids = new Array<string>(changes.length);
    for (const d of token.drafts) ids[d.index] = d.editId;
    return { editIds: ids, toolCallIndex: token.toolCallIndex };
  }

  async abort(prepared: PreparedEdit): Promise<void> {
    const token = prepared.token as Token;
    await this.stopDiffs(token);
    if (token.intentId) await this.store.deleteWriteIntent(token.intentId);
    token.intentId = null;
    await this.removeObjects(token.created);
  }

  // -------------------------------------------------------------------------

  /** A pack started ahead, finished (durable and in place) as this edit's objects; on failure nothing of it stays. */
  private async placeAhead(token: Token, pack: PendingPack): Promise<void> {
    await pack.finish();
    token.created.push(...pack.rels);
  }

  /** One batch for all objects of a step; on failure nothing of it stays. */
  private async writeObjects(token: Token, objects: ObjectWrite[]): Promise<void> {
    if (objects.length === 0) return;
    try {
      await putObjects(this.store, objects);
    } catch (err) {
      await this.removeObjects(objects.map((o) => o.rel));
      throw err;
    }
    for (const o of objects) token.created.push(o.rel);
  }

  private async removeObjects(rels: string[]): Promise<void> {
    await deleteObjects(this.store, rels);
    rels.length = 0;
  }

  /** A review that crashed half-way owns the paths it was writing until it is completed. */
  private async refuseDuringInterruptedReview(changes: EditChange[]): Promise<void> {
    const intents = await this.store.listIntents();
    if (intents.length === 0) return;
    const touched = new Set<string>(changes.flatMap((c) => (c.sourcePath ? [c.path, c.sourcePath] : [c.path])));
    for (const intent of intents) {
      const hit = intent.finals.find((f) => touched.has(f.path));
      if (hit) {
        throw repoChanged(
          `${hit.path} is being restored by an interrupted \`worksnap history ${intent.action}\` (started ${intent.timestamp}); run \`worksnap history recover\` to finish it, then retry`,
          { path: hit.path, review_id: intent.review_id },
        );
      }
    }
  }

  private async state(conv: string): Promise<ConversationState> {
    const version = await this.store.logVersion(conv);
    const cached = this.conversations.get(conv);
    if (cached && cached.version === version) return cached;
    const entries = await this.store.readLog(conv);
    const known = new Map<string, string | null>();
    let next = 0;
    let last: string | undefined;
    for (const e of entries) {
      applyToKnown(known, e);
      next = Math.max(next, e.tool_call_index + 1);
      if (last === undefined || e.timestamp > last) last = e.timestamp;
    }
    const state = { version, known, nextIndex: next, lastTimestamp: last };
    this.conversations.set(conv, state);
    return state;
  }

  /**
   * A checkpoint holds the bytes a replay starts from. Needed when the change
   * reads an existing file the conversation has not seen in this state: its
   * first touch, or after someone else changed it.
   */
  private async checkpointIfNeeded(
    conv: string,
    state: ConversationState,
    change: EditChange,
    hash: string | null,
    editId: string,
    presence: ObjectPresence,
    objects: ObjectWrite[],
  ): Promise<string | null> {
    const path = checkpointPath(change);
    if (!path || !change.before || hash === null) return null;
    if (state.known.has(path) && state.known.get(path) === hash) return null;
    let rel = checkpointRel(conv, path);
    if (state.known.has(path) || (await presence.has(rel))) rel = checkpointRel(conv, path, editId);
    const meta: CheckpointMeta = { path, mode: change.before.mode, hash };
    objects.push({ rel, bytes: change.before.bytes }, { rel: checkpointMetaRel(rel), bytes: encoder.encode(`${JSON.stringify(meta)}\n`) });
    await presence.note(rel);
    return rel;
  }
}

/** The path whose state before a change its checkpoint holds: a move's source. */
function checkpointPath(change: EditChange): RepoPath | undefined {
  return change.operation === "move" ? change.sourcePath : change.path;
}

/** Whether two object lists name the same objects with the same bytes (in any order). */
function sameObjects(a: ObjectWrite[], b: ObjectWrite[]): boolean {
  if (a.length !== b.length) return false;
  const byRel = new Map(a.map((o) => [o.rel, o.bytes]));
  return b.every((o) => {
    const bytes = byRel.get(o.rel);
    return bytes !== undefined && (bytes === o.bytes || (bytes.length === o.bytes.length && sha256Of(bytes) === sha256Of(o.bytes)));
  });
}

/** The diff of a change (and the bytes after, when the diff cannot replay it), queued on `objects`. */
function recordChange(conv: string, editId: string, change: EditChange, objects: ObjectWrite[]): Recorded {
  const after: PathState = change.operation === "delete" ? null : (change.after ?? null);
  if (change.operation !== "delete" && after === null) throw internal(`the write path committed ${change.path} without its new state`);
  const recorded: Recorded = { after, diffFile: null };
  const { bytes, replays } = recordDiffBytes(change.sourcePath ?? change.path, change.before, change.path, after, change.lines);
  if (bytes.length > 0) {
    recorded.diffFile = diffRel(conv, editId);
    objects.push({ rel: recorded.diffFile, bytes });
  }
  if (after && !replays) objects.push({ rel: afterRel(conv, editId), bytes: after.bytes });
  return recorded;
}

function entryFor(token: Token, d: Draft, change: EditChange, r: Recorded): LogEntry {
  return {
    edit_id: d.editId,
    conversation_id: token.conversationId,
    tool_call_index: token.toolCallIndex,
    timestamp: d.timestamp,
    operation: change.operation,
    file_path: change.path,
    source_path: change.operation === "move" ? (change.sourcePath ?? null) : null,
    tool_name: token.toolName,
    status: "pending",
    diff_file: r.diffFile,
    checkpoint_file: d.checkpoint,
    hash_before: d.hashBefore,
    hash_after: r.after ? sha256Of(r.after.bytes) : null,
  };
}

function sameState(a: PathState, b: PathState): boolean {
  if (a === null || b === null) return a === b;
  if (a.mode !== b.mode) return false;
  return a.bytes === b.bytes || Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength).equals(b.bytes);
}

/** Deletes first, then moves, then writes: the write path's publish order, in which one-by-one replay works. */
export function recordOrder(changes: EditChange[]): number[] {
  const rank = (c: EditChange) => (c.operation === "delete" ? 0 : c.operation === "move" ? 1 : 2);
  return changes.map((_, i) => i).sort((a, b) => rank(changes[a]!) - rank(changes[b]!) || a - b);
}

function applyToKnown(known: Map<string, string | null>, e: LogEntry): void {
  if (e.operation === "move" && e.source_path) known.set(e.source_path, null);
  known.set(e.file_path, e.operation === "delete" ? null : e.hash_after);
}
