/**
 * The page's JSON API. Every action is the op the CLI runs (historyShow,
 * previewReview, reviewEdits, recoverReviews), so the page and `worksnap
 * history` never disagree; errors are the same typed errors, answered as
 * `{error: {code, message, details}}` with an HTTP status by code.
 *
 * A person confirms a cascade or the discarding of outside changes for what
 * the page showed them: the request names the dependent edits and the
 * current hashes of the changed files it displayed, and the review goes on
 * only if what it finds is no more than that. Anything new is refused again,
 * with the new report.
 */
import { invalidArgument, type ErrorCode } from "../core/errors";
import { publicError } from "../core/public-error";
import type { ExternalChange } from "../ops/history/external";
import { historyShow } from "../ops/history/query";
import { previewReview, recoverReviews, reviewEdits, type DiscardPolicy, type ReviewRequest } from "../ops/history/review";
import type { HistoryStore } from "../ops/history/store";
import type { Workspace } from "../ops/workspace";
import { DiffStats, pageState } from "./state";
import type { Confirmation, PageState, ReviewPreview, ReviewResult } from "./wire";

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 400,
  NOT_FOUND: 404,
  PERMISSION_DENIED: 403,
  REPO_CHANGED: 409,
  STALE_LEASE: 409,
  TOO_LARGE: 413,
  INTERNAL: 500,
  BUSY: 503,
};

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/**
 * The web adapter's one error mapping: the error as publicError shows it
 * (repo-relative paths, no stack); the page is the machine owner's, like the
 * CLI, so other absolute paths stay.
 */
export function errorResponse(err: unknown, root: string | null = null): Response {
  const e = publicError(err, { root, foreignPaths: "keep" });
  const details = e.code === "INTERNAL" ? {} : e.details;
  return json({ error: { code: e.code, message: e.message, details } }, STATUS_BY_CODE[e.code]);
}

/** A review request as the page sends it: the target and what the person confirmed. */
interface ReviewBody extends Confirmation {
  action?: unknown;
  edit_ids?: unknown;
  conversation_id?: unknown;
}

export class ReviewApi {
  private readonly stats = new DiffStats();

  constructor(
    private readonly ws: Workspace,
    private readonly store: HistoryStore,
  ) {}

  state(): Promise<Response> {
    return this.run<PageState>(async () => pageState(this.store, this.ws.repo.root, this.stats));
  }

  edit(id: string): Promise<Response> {
    return this.run<{ diff: string }>(async () => {
      const shown = await historyShow(this.store, id);
      if (shown.kind !== "edit") throw invalidArgument(`${id} is not an edit id`, { edit_id: id });
      return { entry: shown.edits[0]!.entry, diff: shown.edits[0]!.diff };
    });
  }

  preview(body: unknown): Promise<Response> {
    return this.run<ReviewPreview>(async () => previewReview(this.ws, this.store, reviewRequest(body as ReviewBody)));
  }

  review(body: unknown): Promise<Response> {
    return this.run<ReviewResult>(async () => {
      const b = body as ReviewBody;
      const cascade = new Set(stringList(b.cascade_ids, "cascade_ids"));
      return reviewEdits(this.ws, this.store, {
        ...reviewRequest(b),
        ...discardPolicy(b),
        confirmCascade: async (ids) => ids.every((id) => cascade.has(id)),
      });
    });
  }

  recover(body: unknown): Promise<Response> {
    return this.run<{ recovered: string[] }>(async () => recoverReviews(this.ws, this.store, discardPolicy(body as Confirmation)));
  }

  /** Answers what `fn` returns; `T` is the page's type for it (wire.ts), which the op's result must fit. */
  private async run<T>(fn: () => Promise<T>): Promise<Response> {
    try {
      return json(await fn());
    } catch (err) {
      return errorResponse(err, this.ws.repo.root);
    }
  }
}

function reviewRequest(b: ReviewBody): ReviewRequest {
  if (!b || typeof b !== "object") throw invalidArgument("the request body must be a JSON object", {});
  if (b.action !== "accept" && b.action !== "reject") throw invalidArgument('action must be "accept" or "reject"', { arg: "action" });
  if (b.conversation_id !== undefined) {
    if (typeof b.conversation_id !== "string") throw invalidArgument("conversation_id must be a string", { arg: "conversation_id" });
    if (b.edit_ids !== undefined) throw invalidArgument("give edit_ids or conversation_id, not both", { arg: "edit_ids" });
    return { action: b.action, conversationId: b.conversation_id };
  }
  return { action: b.action, editIds: stringList(b.edit_ids, "edit_ids") };
}

function discardPolicy(b: Confirmation): DiscardPolicy {
  const shown = new Map<string, string>();
  const key = (hash: string | null, kind: string) => `${kind}:${hash ?? ""}`;
  if (b?.discard !== undefined) {
    const bad = () => invalidArgument("discard must be a list of {path, current_hash, current_kind}", { arg: "discard" });
    if (!Array.isArray(b.discard)) throw bad();
    for (const d of b.discard) {
      if (!d || typeof d.path !== "string" || typeof d.current_kind !== "string" || (d.current_hash !== null && typeof d.current_hash !== "string")) throw bad();
      shown.set(d.path, key(d.current_hash, d.current_kind));
    }
  }
  return { confirmDiscard: async (changes: ExternalChange[]) => changes.every((c) => shown.get(c.path) === key(c.current_hash, c.current_kind)) };
}

function stringList(v: unknown, name: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw invalidArgument(`${name} must be a list of strings`, { arg: name });
  return v as string[];
}
