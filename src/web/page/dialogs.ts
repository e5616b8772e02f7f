/**
 * The page's questions and reports, in one modal <dialog>: the dependency
 * report before a reject (with the cascade choice), files changed outside
 * the history (shown as diffs, discarded only when confirmed), refusals, and
 * the keyboard shortcuts.
 */
import { parseDiff, renderDiff } from "./diff-view";
import { $ } from "./dom";
import { esc, plural, shortConv, shortId } from "./text";
import type { Conflict, ExternalChange, StatusChange } from "../wire";

export interface ConfirmSpec {
  title: string;
  intro: string;
  dependents: StatusChange[];
  conflicts: Conflict[];
  external: ExternalChange[];
  confirmLabel: string;
  danger: boolean;
}

function open(html: string, focus: string): Promise<string> {
  const dlg = $("#dialog") as HTMLDialogElement;
  dlg.innerHTML = html;
  return new Promise((resolve) => {
    const onClick = (ev: Event) => {
      const b = (ev.target as HTMLElement).closest<HTMLElement>("[data-dlg]");
      if (b) dlg.close(b.dataset.dlg);
    };
    dlg.addEventListener("click", onClick);
    dlg.addEventListener(
      "close",
      () => {
        dlg.removeEventListener("click", onClick);
        resolve(dlg.returnValue || "cancel");
      },
      { once: true },
    );
    dlg.returnValue = "";
    dlg.showModal();
    dlg.querySelector<HTMLElement>(focus)?.focus();
  });
}

function editRow(c: { edit_id: string; operation: string; file_path: string; source_path: string | null; conversation_id: string }, note?: string): string {
  const path = c.source_path ? `${c.source_path} → ${c.file_path}` : c.file_path;
  return `<li class="dep"><span class="mono id">${esc(shortId(c.edit_id))}</span><span class="op op-${esc(c.operation)}">${esc(c.operation)}</span><span class="mono path">${esc(path)}</span><span class="dep-conv mono" title="${esc(c.conversation_id)}">${esc(shortConv(c.conversation_id))}</span>${note ? `<div class="why">${esc(note)}</div>` : ""}</li>`;
}

function externalBlock(c: ExternalChange): string {
  const what =
    c.current_kind === "missing" ? "was deleted" : c.current_kind === "dir" ? "is now a directory" : c.current_kind === "other" ? "is now a special file" : c.expected_hash === null ? "was created" : "was modified";
  const diff = c.current_kind === "file" || c.current_kind === "missing" ? renderDiff(parseDiff(c.diff), c.path) : `<p class="muted">${esc(c.diff)}</p>`;
  return `<section class="ext"><h4><span class="mono">${esc(c.path)}</span> <span class="muted">${what} since its last recorded edit</span></h4><div class="ext-diff">${diff}</div>${c.diff_truncated ? '<p class="muted small">The diff was cut short.</p>' : ""}</section>`;
}

/** Asks before a review that needs a cascade or discards outside changes; true when the person confirms. */
export async function confirmReview(s: ConfirmSpec): Promise<boolean> {
  const why = new Map(s.conflicts.map((c) => [c.edit_id, c.message]));
  const parts: string[] = [`<header><h3>${esc(s.title)}</h3></header><div class="dlg-body"><p>${esc(s.intro)}</p>`];
  if (s.dependents.length > 0) {
    parts.push(
      `<h4 class="section-title">${plural(s.dependents.length, "later edit depends", "later edits depend")} on this</h4><p class="muted">Without it ${s.dependents.length === 1 ? "it" : "they"} no longer appl${s.dependents.length === 1 ? "ies" : "y"}. Rejecting ${s.dependents.length === 1 ? "it" : "them"} too keeps every file consistent.</p><ul class="deps">${s.dependents.map((d) => editRow(d, why.get(d.edit_id))).join("")}</ul>`,
    );
  }
  if (s.external.length > 0) {
    parts.push(
      `<h4 class="section-title warn">${plural(s.external.length, "file was", "files were")} changed outside the edit history</h4><p class="muted">Continuing discards these changes: each file is set to what the review computes.</p>${s.external.map(externalBlock).join("")}`,
    );
  }
  parts.push(
    `</div><footer><button class="btn" data-dlg="cancel" id="dlg-cancel">Cancel</button><button class="btn ${s.danger ? "btn-danger" : "btn-primary"}" data-dlg="ok" id="dlg-ok">${esc(s.confirmLabel)}</button></footer>`,
  );
  return (await open(parts.join(""), "#dlg-cancel")) === "ok";
}

export async function showRefusal(title: string, message: string, conflicts: Conflict[] = []): Promise<void> {
  const list = conflicts.length > 0 ? `<ul class="deps">${conflicts.map((c) => editRow({ ...c, operation: c.reason.replace(/_/g, " "), file_path: c.path, source_path: null }, c.message)).join("")}</ul>` : "";
  await open(`<header><h3>${esc(title)}</h3></header><div class="dlg-body"><p>${esc(message)}</p>${list}</div><footer><button class="btn btn-primary" data-dlg="ok" id="dlg-ok">Close</button></footer>`, "#dlg-ok");
}

const KEYS: [string, string][] = [
  ["j / ↓", "Next edit"],
  ["k / ↑", "Previous edit"],
  ["a", "Accept the selected edit"],
  ["r", "Reject the selected edit"],
  ["Shift A", "Accept its whole conversation"],
  ["Shift R", "Reject its whole conversation"],
  ["o / Enter", "Show or hide its diff"],
  ["/", "Filter by file"],
  ["1 – 4", "All, pending, accepted, rejected"],
  ["t", "Switch theme"],
  ["?", "This list"],
];

export async function showHelp(): Promise<void> {
  const rows = KEYS.map(([k, v]) => `<tr><td>${k.split(" / ").map((x) => `<kbd>${esc(x)}</kbd>`).join(" ")}</td><td>${esc(v)}</td></tr>`).join("");
  await open(`<header><h3>Keyboard shortcuts</h3></header><div class="dlg-body"><table class="keys">${rows}</table></div><footer><button class="btn btn-primary" data-dlg="ok" id="dlg-ok">Close</button></footer>`, "#dlg-ok");
}
