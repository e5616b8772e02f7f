/**
 * One accept or reject as a person goes through it: the server previews the
 * review (nothing written); when later edits depend on a rejected one, or
 * files were changed outside the history, the page shows that report and asks;
 * the review then runs with exactly what was confirmed. If the history moved
 * in between, the review refuses, and the page previews and asks again.
 */
import { ApiError, api } from "./api";
import { confirmReview, showRefusal } from "./dialogs";
import { plural, shortId } from "./text";
import type { Confirmation, ExternalChange, ReviewResult, Target } from "../wire";

export interface Notice {
  tone: "ok" | "info" | "error";
  title: string;
  lines: string[];
}

/** Refusals a person can resolve here (by confirming); anything else is shown and ends the action. */
const RESOLVABLE = new Set(["cascade", "discard_outside_changes"]);
const ROUNDS = 3;

const discardOf = (external: ExternalChange[]) => external.map((c) => ({ path: c.path, current_hash: c.current_hash, current_kind: c.current_kind }));

export async function reviewFlow(action: "accept" | "reject", target: Target, label: string): Promise<Notice | null> {
  const verb = action === "accept" ? "Accept" : "Reject";
  for (let round = 0; round < ROUNDS; round++) {
    const p = await api.preview(action, target);
    if (p.refusal && !RESOLVABLE.has(String(p.refusal.details.resolution))) {
      await showRefusal(`${verb} ${label}: not possible as it stands`, p.refusal.message, p.conflicts);
      return null;
    }
    let confirmed: Confirmation = {};
    if (p.dependents.length > 0 || p.external.length > 0) {
      const n = p.changed.length + p.dependents.length;
      const ok = await confirmReview({
        title: `${verb} ${label}?`,
        intro:
          round === 0
            ? `${verb === "Accept" ? "Accepting" : "Rejecting"} ${plural(p.changed.length, "edit")} needs your decision first.`
            : "The history changed while you were deciding. This is what the review finds now.",
        dependents: p.dependents,
        conflicts: p.conflicts,
        external: p.external,
        confirmLabel: `${verb} ${plural(n, "edit")}${p.external.length > 0 ? " and discard the outside changes" : ""}`,
        danger: action === "reject" || p.external.length > 0,
      });
      if (!ok) return null;
      confirmed = { cascade_ids: p.dependents.map((d) => d.edit_id), discard: discardOf(p.external) };
    }
    try {
      return noticeFor(await api.review(action, target, confirmed), label);
    } catch (err) {
      if (err instanceof ApiError && RESOLVABLE.has(String(err.body.details.resolution))) continue;
      if (err instanceof ApiError) {
        await showRefusal(`${verb} ${label}: refused`, err.body.message);
        return null;
      }
      throw err;
    }
  }
  return { tone: "error", title: `${verb} ${label}: the history keeps changing`, lines: ["Try again in a moment."] };
}

function noticeFor(r: ReviewResult, label: string): Notice {
  const done = r.action === "accept" ? "Accepted" : "Rejected";
  if (r.changed.length === 0) return { tone: "info", title: `Nothing to do: ${label} is already ${r.action === "accept" ? "accepted" : "rejected"}`, lines: [] };
  const cascaded = new Set(r.cascaded);
  const lines: string[] = [];
  if (r.recovered.length > 0) lines.push(`completed an interrupted review first`);
  for (const id of r.cascaded) lines.push(`also rejected ${shortId(id)} (it depended on it)`);
  if (r.still_rejected.length > 0) lines.push(`${plural(r.still_rejected.length, "rejected edit")} of the conversation stay rejected (accept one by itself to apply it again)`);
  for (const p of r.discarded) lines.push(`discarded outside changes to ${p}`);
  for (const f of r.files) lines.push(`${f.action === "written" ? "wrote" : "deleted"} ${f.path}`);
  if (r.files.length === 0) lines.push("no file changed");
  const own = r.changed.filter((c) => !cascaded.has(c.edit_id)).length;
  return { tone: "ok", title: `${done} ${plural(own, "edit")}${r.cascaded.length > 0 ? ` and ${r.cascaded.length} dependent` : ""}`, lines };
}

/** Finishes an interrupted review, asking before it discards outside changes. */
export async function recoverInterrupted(): Promise<Notice | null> {
  let confirmed: Confirmation = {};
  for (let round = 0; round < ROUNDS; round++) {
    try {
      const r = await api.recover(confirmed);
      return { tone: "ok", title: r.recovered.length > 0 ? "Completed the interrupted review" : "No interrupted review", lines: [] };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const changes = err.body.details.changes as ExternalChange[] | undefined;
      if (err.body.details.reason !== "external_modification" || !changes) {
        await showRefusal("The interrupted review cannot be completed", err.body.message);
        return null;
      }
      const ok = await confirmReview({
        title: "Complete the interrupted review?",
        intro: "It was stopped before it finished writing.",
        dependents: [],
        conflicts: [],
        external: changes,
        confirmLabel: "Complete it and discard the outside changes",
        danger: true,
      });
      if (!ok) return null;
      confirmed = { discard: discardOf(changes) };
    }
  }
  return null;
}
