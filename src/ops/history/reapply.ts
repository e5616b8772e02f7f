/**
 * Re-applying a history (spec 002 section 6, rules 9.1-9.3), for one
 * component of paths (timeline.ts). Two tracks walk the timeline together:
 *
 * - The record track T is the work tree as it was: it starts from the
 *   checkpoints, follows every entry exactly as recorded, and jumps to what a
 *   finished review wrote. It checks each entry's recorded state before
 *   (hash_before, or "no file" for a create or a move's destination) against
 *   its own state. A mismatch means the file was changed outside the history
 *   between two edits; the entry's checkpoint (the recorder takes one whenever
 *   the conversation finds a file not as it left it) says how, and that outside
 *   change becomes an event of its own, always kept. T's end state is the state
 *   the work tree should be in now (rule 9.2's "last recorded hash").
 *
 * - The replay track N is the work tree as it should become: from the same
 *   checkpoints it applies the kept edits (pending and accepted) and the
 *   outside changes, and skips the rejected ones. Diffs go through the patch
 *   engine (exact match, nearest offset), so line shifts from skipped edits are
 *   compensated; changes a diff cannot express (binary) need the exact bytes
 *   they were made on.
 *
 * Files are followed through moves by identity ("lineage"): T names the file
 * each entry acted on (created by an entry, or found at a path), and N applies
 * the entry to that file wherever it is in N. Rejecting a move leaves the file
 * at its source, and the later edits made at the destination still reach it.
 *
 * A kept edit that cannot be applied in N (its file is gone, its destination
 * is taken, its context no longer matches) is a dependency conflict: N goes on
 * as if it were rejected too, which is exactly the state a cascading reject produces.
 * An outside change that cannot be carried over is a conflict no cascade can
 * resolve.
 */
import type { FileMode } from "../../core/file-mode";
import { internal } from "../../core/errors";
import { sha256Hex } from "../../core/hash";
import { unifiedDiff } from "../diff/unified";
import { applyHunks } from "../patch/apply";
import { parsePatch } from "../patch/parse";
import type { HunkReject } from "../patch/types";
import type { Content, ContentChange, HistoryObjects } from "./objects";
import type { TimelineEvent } from "./timeline";
import type { EditStatus, LogEntry, ReviewRecord } from "./types";

export type ConflictReason = "missing_file" | "target_exists" | "context_mismatch" | "content_changed" | "outside_change" | "history_incomplete";

export interface Conflict {
  /** The kept edit that cannot be applied, or the edit before which an outside change was recorded. */
  edit_id: string;
  conversation_id: string;
  path: string;
  reason: ConflictReason;
  message: string;
  /** Rejecting this edit too (a cascading reject) resolves the conflict. */
  cascadable: boolean;
  hunks?: HunkReject[];
}

export interface PathOutcome {
  /** The file at the path, or null for none. */
  state: Content | null;
  hash: string | null;
  lineage: string | null;
}

export interface ReplayOutcome {
  /** T's end state: what each path should hold now. Content is loaded on demand. */
  expected: Map<string, { hash: string | null; lineage: string | null; content: () => Promise<Content | null> }>;
  /** N's end state for every path of the component (only when replaying). */
  final: Map<string, PathOutcome>;
  conflicts: Conflict[];
  /** Kept edits N had to skip (their conflicts are cascadable). */
  failed: Set<string>;
}

export interface ReplayOptions {
  /** The status each edit has after the review; defaults to the logged one. */
  statusOf: (e: LogEntry) => EditStatus;
  /** false: only the record track (the expected state), no replay. */
  replay: boolean;
}

// ---------------------------------------------------------------------------
// The record track's lazily built contents

/** A state of T: a base content, then entries applied exactly as recorded. */
interface Recipe {
  base?: () => Promise<Content>;
  prev?: Recipe;
  entry?: LogEntry;
  memo?: Content;
}

interface TState {
  hash: string | null;
  lineage: string | null;
  recipe?: Recipe;
}

const EMPTY = new Uint8Array(0);

// ---------------------------------------------------------------------------

export async function replayComponent(events: TimelineEvent[], paths: Set<string>, objects: HistoryObjects, opts: ReplayOptions): Promise<ReplayOutcome> {
  return new Replay(paths, objects, opts).run(events);
}

interface NFile {
  lineage: string;
  path: string;
  bytes: Uint8Array;
  mode: FileMode;
}

class Replay {
  private readonly t = new Map<string, TState>();
  private readonly n = new Map<string, NFile>(); // by lineage
  private readonly at = new Map<string, NFile>(); // by path
  private readonly conflicts: Conflict[] = [];
  private readonly failed = new Set<string>();

  constructor(
    private readonly paths: Set<string>,
    private readonly objects: HistoryObjects,
    private readonly opts: ReplayOptions,
  ) {}

  async run(events: TimelineEvent[]): Promise<ReplayOutcome> {
    for (const ev of events) {
      if (ev.kind === "review") this.review(ev.review);
      else await this.entry(ev.entry);
    }
    const expected: ReplayOutcome["expected"] = new Map();
    for (const [path, s] of this.t) {
      expected.set(path, { hash: s.hash, lineage: s.lineage, content: () => (s.recipe ? this.materialize(s.recipe) : Promise.resolve(null)) });
    }
    const final = new Map<string, PathOutcome>();
    if (this.opts.replay) {
      for (const path of this.paths) {
        const f = this.at.get(path);
        final.set(path, f ? { state: { bytes: f.bytes, mode: f.mode }, hash: sha256Hex(f.bytes), lineage: f.lineage } : { state: null, hash: null, lineage: null });
      }
    }
    return { expected, final, conflicts: this.conflicts, failed: this.failed };
  }

  // -- the record track ------------------------------------------------------

  private review(r: ReviewRecord): void {
    for (const f of r.finals) {
      if (!this.paths.has(f.path)) continue;
      const rel = f.content_file;
      const mode = f.mode ?? "100644";
      const base = async () => {
        const c = await this.objects.content(rel!, mode);
        if (sha256Hex(c.bytes) !== f.hash) throw internal(`review ${r.review_id} is damaged: ${rel} does not have the recorded hash`, { review_id: r.review_id });
        return c;
      };
      this.t.set(f.path, { hash: f.hash, lineage: f.lineage, recipe: rel ? { base } : undefined });
    }
  }

  private async entry(e: LogEntry): Promise<void> {
    const needs: { path: string; hash: string | null }[] =
      e.operation === "create"
        ? [{ path: e.file_path, hash: null }]
        : e.operation === "move"
          ? [
              { path: e.source_path!, hash: e.hash_before },
              { path: e.file_path, hash: null },
            ]
          : [{ path: e.file_path, hash: e.hash_before }];
    let known = true;
    for (const need of needs) {
      if (!(await this.reconcile(e, need.path, need.hash))) {
        // Not replayable (a conflict no cascade resolves); T goes on by hashes alone so later checks stay meaningful.
        this.t.set(need.path, { hash: need.hash, lineage: `${e.edit_id}:${need.path}` });
        known = false;
      }
    }
    const lineage = this.advanceRecord(e);
    if (this.opts.replay && known) await this.replayEntry(e, lineage);
  }

  /**
   * Makes T agree with what the entry found at `path`. False when the history
   * cannot say what the file was (no checkpoint): the component cannot be replayed.
   */
  private async reconcile(e: LogEntry, path: string, hash: string | null): Promise<boolean> {
    const cur = this.t.get(path);
    if (cur && cur.hash === hash) return true;
    if (hash === null) {
      // The entry found no file where T has one: it was removed outside the history.
      this.t.set(path, { hash: null, lineage: null });
      if (cur && cur.lineage) this.outsideDelete(e, cur.lineage);
      return true;
    }
    const cp = e.checkpoint_file ? await this.objects.checkpoint(e.checkpoint_file) : null;
    if (!cp || cp.path !== path || cp.hash !== hash) {
      const what = cur === undefined ? "what it was before this edit" : "how it was changed outside the history before this edit";
      this.conflict(e, path, "history_incomplete", `${path}: the history does not record ${what} (no checkpoint); it cannot be replayed`, false);
      return false;
    }
    const base = { base: async () => ({ bytes: cp.bytes, mode: cp.mode }) };
    if (cur === undefined || cur.hash === null) {
      // First sight of the file, or it appeared outside the history: a file of its own.
      const lineage = `${e.edit_id}:${path}`;
      this.t.set(path, { hash, lineage, recipe: base });
      if (this.opts.replay) {
        if (cur === undefined) this.place({ lineage, path, bytes: cp.bytes, mode: cp.mode });
        else this.outsideCreate(e, { lineage, path, bytes: cp.bytes, mode: cp.mode });
      }
      return true;
    }
    const old = cur.recipe ? await this.materialize(cur.recipe) : null;
    this.t.set(path, { hash, lineage: cur.lineage, recipe: base });
    if (this.opts.replay && cur.lineage) await this.outsideEdit(e, cur.lineage, path, old, { bytes: cp.bytes, mode: cp.mode });
    return true;
  }

  /** Moves T past the entry; returns the lineage the entry acted on. */
  private advanceRecord(e: LogEntry): string {
    if (e.operation === "create") {
      const empty: Recipe = { base: async () => ({ bytes: EMPTY, mode: "100644" }) };
      this.t.set(e.file_path, { hash: e.hash_after, lineage: e.edit_id, recipe: { prev: empty, entry: e } });
      return e.edit_id;
    }
    const from = e.operation === "move" ? e.source_path! : e.file_path;
    const cur = this.t.get(from)!;
    const lineage = cur.lineage!;
    if (e.operation === "delete") {
      this.t.set(from, { hash: null, lineage: null });
      return lineage;
    }
    const next: TState = { hash: e.hash_after, lineage, recipe: { prev: cur.recipe, entry: e } };
    if (e.operation === "move") this.t.set(from, { hash: null, lineage: null });
    this.t.set(e.file_path, next);
    return lineage;
  }

  private async materialize(r: Recipe): Promise<Content> {
    const chain: Recipe[] = [];
    let cur: Recipe | undefined = r;
    while (cur && !cur.memo && !cur.base) {
      chain.push(cur);
      cur = cur.prev;
    }
    if (!cur) throw internal("the history cannot say what a file held: a recorded state has no checkpoint");
    let content = cur.memo ?? (await cur.base!());
    cur.memo = content;
    for (let i = chain.length - 1; i >= 0; i--) {
      const node = chain[i]!;
      const change = await this.objects.change(node.entry!);
      const applied = applyChange(content, change);
      if (!applied.ok || sha256Hex(applied.content.bytes) !== node.entry!.hash_after) {
        throw internal(`the history is damaged: edit ${node.entry!.edit_id} does not reproduce the state it recorded`, { edit_id: node.entry!.edit_id });
      }
      content = applied.content;
      node.memo = content;
    }
    return content;
  }

  // -- the replay track ------------------------------------------------------

  private place(f: NFile): void {
    this.n.set(f.lineage, f);
    this.at.set(f.path, f);
  }

  private remove(f: NFile): void {
    this.n.delete(f.lineage);
    if (this.at.get(f.path) === f) this.at.delete(f.path);
  }

  private conflict(e: LogEntry, path: string, reason: ConflictReason, message: string, cascadable: boolean, hunks?: HunkReject[]): void {
    const c: Conflict = { edit_id: e.edit_id, conversation_id: e.conversation_id, path, reason, message, cascadable };
    if (hunks) c.hunks = hunks.slice(0, 5);
    this.conflicts.push(c);
    if (cascadable) this.failed.add(e.edit_id);
  }

  private async replayEntry(e: LogEntry, lineage: string): Promise<void> {
    if (this.opts.statusOf(e) === "rejected") return;
    const f = this.n.get(lineage);
    if (e.operation === "create") {
      const taken = this.at.get(e.file_path);
      if (taken) return this.conflict(e, e.file_path, "target_exists", `${e.file_path}: edit ${e.edit_id} creates this file, but in the replayed state a file is already there (an edit that removed it is rejected)`, true);
      const change = await this.objects.change(e);
      const applied = applyChange({ bytes: EMPTY, mode: "100644" }, change, null);
      if (!applied.ok) return this.conflict(e, e.file_path, "context_mismatch", `${e.file_path}: edit ${e.edit_id} cannot create the file: ${applied.message}`, true, applied.hunks);
      this.place({ lineage, path: e.file_path, ...applied.content });
      return;
    }
    const path = e.operation === "move" ? e.source_path! : e.file_path;
    if (!f) {
      return this.conflict(e, path, "missing_file", `${path}: edit ${e.edit_id} (${e.operation}) needs a file that does not exist in the replayed state (an edit it depends on is rejected)`, true);
    }
    if (e.operation === "delete") return this.remove(f);
    if (e.operation === "move") {
      const taken = this.at.get(e.file_path);
      if (taken && taken !== f) return this.conflict(e, e.file_path, "target_exists", `${e.file_path}: edit ${e.edit_id} moves ${f.path} here, but the path is taken in the replayed state`, true);
    }
    const applied = applyChange({ bytes: f.bytes, mode: f.mode }, await this.objects.change(e), e.hash_before);
    if (!applied.ok) {
      return this.conflict(e, f.path, applied.reason, `${f.path}: edit ${e.edit_id} (${e.operation}) no longer applies: ${applied.message}`, true, applied.hunks);
    }
    this.remove(f);
    this.place({ lineage, path: e.operation === "move" ? e.file_path : f.path, ...applied.content });
  }

  private outsideDelete(e: LogEntry, lineage: string): void {
    if (!this.opts.replay) return;
    const f = this.n.get(lineage);
    if (f) this.remove(f);
  }

  private outsideCreate(e: LogEntry, f: NFile): void {
    const taken = this.at.get(f.path);
    if (taken) {
      return this.conflict(e, f.path, "outside_change", `${f.path} was created outside the history before edit ${e.edit_id}, but in the replayed state the path is taken`, false);
    }
    this.place(f);
  }

  private async outsideEdit(e: LogEntry, lineage: string, path: string, old: Content | null, now: Content): Promise<void> {
    const f = this.n.get(lineage);
    if (!f) {
      return this.conflict(e, path, "outside_change", `${path} was changed outside the history before edit ${e.edit_id}; in the replayed state the file does not exist, so those changes cannot be kept`, false);
    }
    const diff = unifiedDiff(old ? { path, ...old } : null, { path, ...now });
    const parsed = diff === "" ? null : parsePatch(diff);
    const file = parsed?.files[0];
    let change: ContentChange;
    if (!parsed) change = { kind: "hunks", hunks: [] };
    else if (parsed.files.length === 1 && file && !file.binary && parsed.rejects.length === 0) change = { kind: "hunks", hunks: file.hunks, newMode: now.mode };
    else change = { kind: "exact", bytes: now.bytes, newMode: now.mode };
    const applied = applyChange({ bytes: f.bytes, mode: f.mode }, change, old ? sha256Hex(old.bytes) : null);
    if (!applied.ok) {
      return this.conflict(e, path, "outside_change", `${path} was changed outside the history before edit ${e.edit_id}, and those changes no longer apply: ${applied.message}`, false, applied.hunks);
    }
    f.bytes = applied.content.bytes;
    f.mode = applied.content.mode;
  }
}

type Applied = { ok: true; content: Content } | { ok: false; reason: ConflictReason; message: string; hunks?: HunkReject[] };

/**
 * One change on one content. `beforeHash` is what an exact (binary) change was
 * made on: it applies only to those very bytes. Undefined: applying as recorded.
 */
export function applyChange(on: Content, change: ContentChange, beforeHash?: string | null): Applied {
  if (change.kind === "delete") return { ok: true, content: on };
  if (change.kind === "exact") {
    if (beforeHash !== undefined && beforeHash !== null && sha256Hex(on.bytes) !== beforeHash) {
      return { ok: false, reason: "content_changed", message: "the change replaces the whole content (binary), and the file is no longer the one it was made on" };
    }
    return { ok: true, content: { bytes: change.bytes, mode: change.newMode ?? on.mode } };
  }
  if (change.hunks.length === 0) return { ok: true, content: { bytes: on.bytes, mode: change.newMode ?? on.mode } };
  const r = applyHunks(on.bytes, change.hunks);
  if (!r.ok) {
    return { ok: false, reason: "context_mismatch", message: r.rejects.map((h) => h.message).join("; "), hunks: r.rejects };
  }
  return { ok: true, content: { bytes: r.bytes, mode: change.newMode ?? on.mode } };
}
