/**
 * Accept and reject (spec 002 section 5, rules 9.1-9.4), shared by the CLI
 * and anything else that reviews a history. Runs under the work-tree lock, so
 * the server's writes and a review never interleave.
 *
 * A review sets statuses and brings the work tree to the replayed state of
 * every component it touches (reapply.ts). Nothing is written when a kept edit
 * would no longer apply (a dependency: named, with the resolution "cascade"
 * offered) or when a file was changed outside the history (rule 9.2: shown as
 * a diff; written over only when the caller confirms or forces). Errors carry
 * a `resolution` that each adapter words for its users.
 *
 * Crash safety: the review is first stored as an intent (new statuses, and the
 * bytes of every path it will write), then the logs are rewritten, then the
 * files written through the write path, and only then the intent becomes a
 * finished review. Every step is idempotent, so an interrupted review (kill -9)
 * is completed by the next history command, `recover`, `accept` or `reject`.
 */
import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound, repoChanged, WorksnapError } from "../../core/errors";
import type { RepoPath } from "../../core/repo-path";
import type { Workspace } from "../workspace";
import { withWorktreeLock } from "../write/worktree-lock";
import { writeChangesLocked, type WriteChange } from "../write/write-path";
import { putObjects, type ObjectWrite } from "./batch-store";
import { nextTimestamps } from "./clock";
import { describeExternal, matchesDisk, readDisks, type ExternalChange } from "./external";
import { HistoryObjects, type Content } from "./objects";
import { replayComponent, type Conflict, type PathOutcome } from "./reapply";
import { reviewContentRel, type HistoryStore } from "./store";
import { eventsFor, loadHistory, PathGroups, pathsOf, type HistoryModel } from "./timeline";
import { kept, type EditStatus, type LogEntry, type ReviewFinal, type ReviewRecord } from "./types";

export type ReviewStep = "intent-written" | "logs-updated" | "files-written";

export interface DiscardPolicy {
  /** Discard outside changes without asking. */
  force?: boolean;
  /** Asked when files differ from the recorded state; true discards the outside changes and goes on. */
  confirmDiscard?: (changes: ExternalChange[]) => Promise<boolean>;
  /** Called after each durable step (crash tests stop the process here). */
  onStep?: (step: ReviewStep) => void;
}

export interface ReviewRequest extends DiscardPolicy {
  action: "accept" | "reject";
  /** Edit ids or unique prefixes of them. */
  editIds?: string[];
  /** A conversation id (or a unique prefix): all its edits. */
  conversationId?: string;
  /**
   * Picks the edits from the history as it is under the work-tree lock,
   * instead of editIds or conversationId (a caller with its own rules: it may
   * refuse by throwing, and nothing changes between its choice and the review).
   */
  pick?: (model: HistoryModel) => LogEntry[];
  /** Reject the kept edits that depend on the rejected ones too. */
  cascade?: boolean;
  /** Asked, when cascade is not set, with the dependent edits a reject would reject too; true cascades. */
  confirmCascade?: (editIds: string[]) => Promise<boolean>;
}

export interface StatusChange {
  edit_id: string;
  conversation_id: string;
  operation: LogEntry["operation"];
  file_path: string;
  source_path: string | null;
  from: EditStatus;
  to: EditStatus;
}

export interface FileWrite {
  path: string;
  action: "written" | "deleted";
  /** The final hash (rule 9.4); null when deleted. */
  hash: string | null;
}

export interface ReviewResult {
  action: "accept" | "reject";
  review_id: string | null;
  changed: StatusChange[];
  /** Edits rejected because they depended on a rejected one (the request's `cascade`). */
  cascaded: string[];
  /** Edits that already had the requested status. */
  unchanged: string[];
  /**
   * Accepting a conversation: its rejected edits, which stay rejected (spec 002 section 5: accept moves pending
   * edits to accepted and touches no file; a rejected edit is accepted again only when named by id).
   */
  still_rejected: string[];
  files: FileWrite[];
  /** Paths whose outside changes were discarded (confirmed or forced). */
  discarded: string[];
  /** Interrupted reviews completed first. */
  recovered: string[];
}

/** What a review would do, computed without writing anything (previewReview). */
export interface ReviewPreview {
  action: "accept" | "reject";
  /** Status changes of the edits asked for. */
  changed: StatusChange[];
  /** Kept edits that depend on rejected ones: a cascading reject rejects them too. */
  dependents: StatusChange[];
  /** Edits that already have the requested status. */
  unchanged: string[];
  /** Why kept edits could not be replayed (dependents, or conflicts no cascade resolves). */
  conflicts: Conflict[];
  /** Files changed outside the history that the review would discard (rule 9.2). */
  external: ExternalChange[];
  /** What the files would become (with the dependents rejected too, when there are any). */
  files: FileWrite[];
  /** The refusal the review would answer with, as asked and without confirmations; null when it goes through. */
  refusal: { code: string; message: string; details: Record<string, unknown> } | null;
  /** Interrupted reviews the review would complete first (the preview does not include their effect). */
  interrupted: string[];
}

export function reviewEdits(ws: Workspace, store: HistoryStore, req: ReviewRequest): Promise<ReviewResult> {
  return withWorktreeLock(ws, () => reviewLocked(ws, store, req));
}

/**
 * The review `req` asks for, computed as it would run but writing nothing:
 * status changes, dependent edits, outside changes, the files it would write
 * and the refusal it would give. A person sees this before deciding; the
 * review itself checks everything again.
 */
export function previewReview(ws: Workspace, store: HistoryStore, req: ReviewRequest): Promise<ReviewPreview> {
  return withWorktreeLock(ws, () => previewLocked(ws, store, req));
}

/** Completes reviews that were interrupted (a crash between their first and last write). */
export function recoverReviews(ws: Workspace, store: HistoryStore, policy: DiscardPolicy = {}): Promise<{ recovered: string[]; files: FileWrite[] }> {
  return withWorktreeLock(ws, () => recoverLocked(ws, store, policy));
}

// ---------------------------------------------------------------------------

/** Everything a review decides before it writes. */
interface ReviewPlan {
  model: HistoryModel;
  /** New statuses of the edits asked for (without the dependents). */
  overrides: Map<string, EditStatus>;
  unchanged: string[];
  /** Accepting a conversation: its rejected edits, left rejected. */
  stillRejected: string[];
  conflicts: Conflict[];
  /** Kept edits the replay had to skip: the dependents a cascade rejects. */
  failed: Set<string>;
  outside: ExternalChange[];
  changes: WriteChange[];
  files: FileWrite[];
  finals: ReviewFinal[];
  contents: Uint8Array[];
}

async function planReview(ws: Workspace, store: HistoryStore, model: HistoryModel, req: ReviewRequest): Promise<ReviewPlan> {
  const named = resolveTargets(model, req);
  const to: EditStatus = req.action === "accept" ? "accepted" : "rejected";
  // A conversation accepted as a whole accepts what is pending in it; a rejected edit is revived only by its id.
  const byConversation = req.conversationId !== undefined && req.action === "accept";
  const targets = byConversation ? named.filter((e) => e.status !== "rejected") : named;
  const stillRejected = byConversation ? named.filter((e) => e.status === "rejected").map((e) => e.edit_id) : [];
  const overrides = new Map<string, EditStatus>();
  const unchanged: string[] = [];
  for (const t of targets) {
    if (t.status === to) unchanged.push(t.edit_id);
    else overrides.set(t.edit_id, to);
  }
  const plan: ReviewPlan = { model, overrides, unchanged, stillRejected, conflicts: [], failed: new Set(), outside: [], changes: [], files: [], finals: [], contents: [] };
  if (overrides.size === 0) return plan;

  // Only a change between kept (pending, accepted) and rejected changes what the files should hold.
  const replay = targets.some((t) => overrides.has(t.edit_id) && kept(t.status) !== kept(to));
  const paths = new PathGroups(model.entries).component(targets.flatMap(pathsOf));
  const objects = new HistoryObjects(store);
  const statusOf = (e: LogEntry) => overrides.get(e.edit_id) ?? e.status;
  const out = await replayComponent(eventsFor(model, paths), paths, objects, { statusOf, replay });
  plan.conflicts = out.conflicts;
  plan.failed = out.failed;

  // What each path should hold after the review, and which paths the review answers for.
  const desired = (p: string): { hash: string | null; lineage: string | null; content: () => Promise<Content | null> } => {
    if (replay) {
      const f = out.final.get(p) as PathOutcome;
      return { hash: f.hash, lineage: f.lineage, content: async () => f.state };
    }
    return out.expected.get(p)!;
  };
  const checked = new Set<string>(targets.filter((t) => overrides.has(t.edit_id)).flatMap(pathsOf));
  for (const p of paths) {
    const want = desired(p);
    const was = out.expected.get(p)!;
    if (want.hash !== was.hash || want.lineage !== was.lineage) checked.add(p);
  }
  const order = [...checked].sort(compareUtf8);

  // Rule 9.2: the files must be what the history last recorded.
  const disk = await readDisks(ws.repo, order);
  for (const p of order) {
    const d = disk.get(p)!;
    const exp = out.expected.get(p)!;
    if (!matchesDisk(exp.hash, d)) plan.outside.push(describeExternal(p, await exp.content(), exp.hash, d));
  }

  // The writes, and the finals the review records.
  for (const p of order) {
    const want = desired(p);
    const was = out.expected.get(p)!;
    const d = disk.get(p)!;
    const state = want.hash === null ? null : await want.content();
    const differs = state === null ? d.kind !== "missing" : d.kind !== "file" || d.hash !== want.hash || d.state!.mode !== state.mode;
    if (!differs && want.hash === was.hash && want.lineage === was.lineage) continue;
    if (differs) {
      if (state === null) plan.changes.push({ kind: "delete", path: p as RepoPath });
      else plan.changes.push({ kind: "write", path: p as RepoPath, bytes: state.bytes, mode: state.mode, follow: false });
      plan.files.push({ path: p, action: state === null ? "deleted" : "written", hash: want.hash });
    }
    plan.finals.push({ path: p, hash: want.hash, mode: state?.mode ?? null, content_file: null, lineage: want.lineage, hash_before: d.hash });
    plan.contents.push(state?.bytes ?? new Uint8Array(0));
  }
  return plan;
}

function statusChange(model: HistoryModel, id: string, to: EditStatus): StatusChange {
  const e = model.byId.get(id)!;
  return { edit_id: id, conversation_id: e.conversation_id, operation: e.operation, file_path: e.file_path, source_path: e.source_path, from: e.status, to };
}

async function previewLocked(ws: Workspace, store: HistoryStore, req: ReviewRequest): Promise<ReviewPreview> {
  const model = await loadHistory(store);
  const plan = await planReview(ws, store, model, req);
  let refusal: ReviewPreview["refusal"] = null;
  try {
    if (plan.overrides.size > 0) {
      await refuseConflicts(plan.conflicts, { action: req.action, cascade: req.cascade }, plan.overrides);
      if (plan.outside.length > 0) await confirmOrRefuse(plan.outside, { force: req.force });
    }
  } catch (err) {
    if (!(err instanceof WorksnapError)) throw err;
    refusal = { code: err.code, message: err.message, details: err.details };
  }
  return {
    action: req.action,
    changed: [...plan.overrides].map(([id, to]) => statusChange(model, id, to)),
    dependents: req.action === "reject" ? [...plan.failed].filter((id) => !plan.overrides.has(id)).map((id) => statusChange(model, id, "rejected")) : [],
    unchanged: plan.unchanged,
    conflicts: plan.conflicts,
    external: plan.outside,
    files: plan.files,
    refusal,
    interrupted: model.intents.map((r) => r.review_id),
  };
}

async function reviewLocked(ws: Workspace, store: HistoryStore, req: ReviewRequest): Promise<ReviewResult> {
  const { recovered } = await recoverLocked(ws, store, req);
  const model = await loadHistory(store);
  const plan = await planReview(ws, store, model, req);
  const { overrides } = plan;
  const result: ReviewResult = {
    action: req.action,
    review_id: null,
    changed: [],
    cascaded: [],
    unchanged: plan.unchanged,
    still_rejected: plan.stillRejected,
    files: plan.files,
    discarded: [],
    recovered,
  };
  if (overrides.size === 0) return result;

  await refuseConflicts(plan.conflicts, req, overrides);
  for (const id of plan.failed) {
    overrides.set(id, "rejected");
    result.cascaded.push(id);
  }
  for (const [id, status] of overrides) result.changed.push(statusChange(model, id, status));
  if (plan.outside.length > 0) {
    await confirmOrRefuse(plan.outside, req);
    result.discarded = plan.outside.map((c) => c.path);
  }

  const { changes, finals, contents } = plan;
  const statuses = Object.fromEntries(overrides);
  if (finals.length === 0) {
    await applyStatuses(store, model, statuses);
    return result;
  }
  const [timestamp] = await nextTimestamps(store, 1);
  const record: ReviewRecord = { review_id: crypto.randomUUID(), timestamp: timestamp!, action: req.action, statuses, finals };
  const written: ObjectWrite[] = [];
  for (let i = 0; i < finals.length; i++) {
    if (finals[i]!.hash === null) continue;
    const rel = reviewContentRel(record.review_id, i);
    written.push({ rel, bytes: contents[i]! });
    finals[i]!.content_file = rel;
  }
  // One durable batch (one flush) for all the bytes the review will write, before its intent names them.
  await putObjects(store, written);
  await store.putIntent(record);
  req.onStep?.("intent-written");
  await applyStatuses(store, model, statuses);
  req.onStep?.("logs-updated");
  try {
    if (changes.length > 0) await writeChangesLocked(ws, changes);
  } catch (err) {
    // A refused write (a path no longer writable, a directory in the way) wrote nothing: undo the review.
    const previous = Object.fromEntries([...overrides.keys()].map((id) => [id, model.byId.get(id)!.status]));
    await applyStatuses(store, model, previous);
    await store.deleteIntent(record.review_id);
    await store.deleteReview(record.review_id);
    throw err;
  }
  req.onStep?.("files-written");
  await store.putReview(record);
  await store.deleteIntent(record.review_id);
  result.review_id = record.review_id;
  return result;
}

async function recoverLocked(ws: Workspace, store: HistoryStore, policy: DiscardPolicy): Promise<{ recovered: string[]; files: FileWrite[] }> {
  const intents = await store.listIntents();
  const recovered: string[] = [];
  const files: FileWrite[] = [];
  if (intents.length === 0) return { recovered, files };
  const model = await loadHistory(store);
  for (const intent of intents) {
    await applyStatuses(store, model, intent.statuses);
    const changes: WriteChange[] = [];
    const outside: ExternalChange[] = [];
    const disks = await readDisks(ws.repo, intent.finals.map((f) => f.path));
    for (const f of intent.finals) {
      const d = disks.get(f.path)!;
      const done = f.hash === null ? d.kind === "missing" : d.kind === "file" && d.hash === f.hash && d.state!.mode === f.mode;
      if (done) continue;
      const state = f.content_file ? { bytes: await store.getObject(f.content_file), mode: f.mode ?? "100644" } : null;
      if (!matchesDisk(f.hash_before, d) && !matchesDisk(f.hash, d)) outside.push(describeExternal(f.path, state, f.hash, d));
      if (state === null) changes.push({ kind: "delete", path: f.path as RepoPath });
      else changes.push({ kind: "write", path: f.path as RepoPath, bytes: state.bytes, mode: state.mode, follow: false });
      files.push({ path: f.path, action: state === null ? "deleted" : "written", hash: f.hash });
    }
    if (outside.length > 0) await confirmOrRefuse(outside, policy);
    if (changes.length > 0) await writeChangesLocked(ws, changes);
    await store.putReview(intent);
    await store.deleteIntent(intent.review_id);
    recovered.push(intent.review_id);
  }
  return { recovered, files };
}

async function confirmOrRefuse(outside: ExternalChange[], policy: DiscardPolicy): Promise<void> {
  if (policy.force) return;
  if (policy.confirmDiscard && (await policy.confirmDiscard(outside))) return;
  const names = outside.map((c) => c.path).join(", ");
  throw repoChanged(
    `${names} ${outside.length === 1 ? "was" : "were"} changed outside the edit history since the last recorded edit; nothing was written`,
    { reason: "external_modification", changes: outside, resolution: "discard_outside_changes" },
  );
}

async function refuseConflicts(conflicts: Conflict[], req: Pick<ReviewRequest, "action" | "cascade" | "confirmCascade">, overrides: Map<string, EditStatus>): Promise<void> {
  if (conflicts.length === 0) return;
  const fatal = conflicts.filter((c) => !c.cascadable);
  if (fatal.length > 0) {
    throw repoChanged(`the history cannot be replayed around this change; nothing was written: ${fatal.map((c) => c.message).join("; ")}`, { reason: "conflict", conflicts });
  }
  const targetsFail = conflicts.filter((c) => overrides.get(c.edit_id) === "accepted");
  if (req.action === "accept" || targetsFail.length > 0) {
    throw invalidArgument(
      `accepting would need edits that cannot be applied; nothing was written: ${conflicts.map((c) => c.message).join("; ")}. Accept the edits they depend on first, or reject the conflicting ones`,
      { reason: "dependent_edits", conflicts },
    );
  }
  if (req.cascade) return;
  const ids = [...new Set(conflicts.map((c) => c.edit_id))];
  if (req.confirmCascade && (await req.confirmCascade(ids))) return;
  throw invalidArgument(
    `later kept edits depend on the rejected one${overrides.size === 1 ? "" : "s"} and would no longer apply: ${ids.join(", ")}; nothing was written`,
    { reason: "dependent_edits", dependent_edit_ids: ids, conflicts, resolution: "cascade" },
  );
}

/** Sets statuses in the conversations' logs, each rewritten atomically under its lock. Idempotent. */
async function applyStatuses(store: HistoryStore, model: HistoryModel, statuses: Record<string, EditStatus>): Promise<void> {
  const convs = new Set<string>();
  for (const id of Object.keys(statuses)) {
    const e = model.byId.get(id);
    if (e) convs.add(e.conversation_id);
  }
  if (convs.size === 0) return;
  await store.withLogLock([...convs], async () => {
    for (const conv of [...convs].sort(compareUtf8)) {
      const log = await store.readLog(conv);
      let changed = false;
      for (const e of log) {
        const s = statuses[e.edit_id];
        if (s && e.status !== s) {
          e.status = s;
          changed = true;
        }
      }
      if (changed) await store.writeLog(conv, log);
    }
  });
}

// ---------------------------------------------------------------------------
// Finding what the person meant

const MIN_PREFIX = 4;

export function resolveEditId(model: HistoryModel, id: string): LogEntry {
  const exact = model.byId.get(id);
  if (exact) return exact;
  if (id.length < MIN_PREFIX) throw invalidArgument(`edit id ${JSON.stringify(id)} is too short; give at least ${MIN_PREFIX} characters`, { edit_id: id });
  const hits = model.entries.filter((e) => e.edit_id.startsWith(id));
  if (hits.length === 1) return hits[0]!;
  if (hits.length === 0) throw notFound(`no edit ${id} in the history`, { edit_id: id });
  throw invalidArgument(`edit id prefix ${id} is ambiguous: ${hits.slice(0, 5).map((e) => e.edit_id).join(", ")}${hits.length > 5 ? ", ..." : ""}`, {
    edit_id: id,
    candidates: hits.slice(0, 20).map((e) => e.edit_id),
  });
}

export function resolveConversationId(model: HistoryModel, id: string): string {
  if (model.byConversation.has(id)) return id;
  const hits = [...model.byConversation.keys()].filter((c) => c.startsWith(id) && id.length >= MIN_PREFIX);
  if (hits.length === 1) return hits[0]!;
  if (hits.length === 0) throw notFound(`no conversation ${id} in the history`, { conversation_id: id });
  throw invalidArgument(`conversation prefix ${id} is ambiguous: ${hits.slice(0, 5).join(", ")}`, { conversation_id: id, candidates: hits.slice(0, 20) });
}

function resolveTargets(model: HistoryModel, req: ReviewRequest): LogEntry[] {
  if (req.pick) {
    if (req.editIds !== undefined || req.conversationId !== undefined) throw invalidArgument("name the edits to review one way: pick, edit ids or a conversation", {});
    return req.pick(model);
  }
  const ids = req.editIds ?? [];
  if ((req.conversationId === undefined) === (ids.length === 0)) throw invalidArgument("name the edits to review: edit ids, or one conversation", {});
  if (req.conversationId !== undefined) return model.byConversation.get(resolveConversationId(model, req.conversationId)) ?? [];
  const seen = new Map<string, LogEntry>();
  for (const id of ids) {
    const e = resolveEditId(model, id);
    seen.set(e.edit_id, e);
  }
  return [...seen.values()];
}
