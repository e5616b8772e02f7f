/**
 * The review page: conversations and their edits, newest first, each edit's
 * diff, and accept/reject per edit and per conversation. Every decision goes
 * to the server's review API, which runs the same review as `worksnap
 * history`; the page only shows and asks (review-flow.ts). It follows the
 * history live: the server sends a notice when the history changes, and the
 * page reads the state again.
 */
import { api } from "./api";
import { parseDiff, renderDiff } from "./diff-view";
import { showHelp } from "./dialogs";
import { $ } from "./dom";
import { ago, esc, fullTime, plural, shortConv, shortId } from "./text";
import { bindKeys } from "./keys";
import { recoverInterrupted, reviewFlow, type Notice } from "./review-flow";
import type { EditStatus, PageConversation, PageEdit, PageState } from "../wire";

type StatusFilter = "all" | EditStatus;

interface DiffCache {
  html: string;
  /** Rows not shown yet (a very long diff), and the full parse to show them. */
  hidden: number;
  full?: () => string;
}

const MAX_ROWS = 4_000;
/** Edits rendered at first, and added by each "show more": a history of thousands stays quick to draw. */
const PAGE_EDITS = 200;

const app = {
  state: null as PageState | null,
  status: "all" as StatusFilter,
  file: "",
  conv: "",
  selected: null as string | null,
  /** Edits whose diff the person opened or closed, by id (otherwise: open while pending). */
  open: new Map<string, boolean>(),
  diffs: new Map<string, DiffCache>(),
  loading: new Set<string>(),
  /** Edit ids of the previous state, to mark what arrived since. */
  known: null as Set<string> | null,
  fresh: new Set<string>(),
  busy: false,
  /** How many of the visible edits are drawn; a filter change starts again at one page. */
  shown: PAGE_EDITS,
};

const observer = new IntersectionObserver(
  (items) => {
    for (const it of items) if (it.isIntersecting) void loadDiff((it.target as HTMLElement).dataset.edit!);
  },
  { rootMargin: "600px 0px" },
);

// ---------------------------------------------------------------------------
// State

let refreshes = 0;

async function refresh(): Promise<void> {
  const ticket = ++refreshes;
  const s = await api.state();
  // Two reads in flight (a live notice and an action's end): only the one asked for last is shown.
  if (ticket !== refreshes) return;
  const ids = new Set(s.conversations.flatMap((c) => c.edits.map((e) => e.edit_id)));
  if (app.known) for (const id of ids) if (!app.known.has(id)) app.fresh.add(id);
  app.known = ids;
  app.state = s;
  if (app.conv !== "" && !s.conversations.some((c) => c.id === app.conv)) app.conv = "";
  render();
  if (app.fresh.size > 0) setTimeout(() => clearFresh(), 4_000);
}

function clearFresh(): void {
  for (const id of app.fresh) document.querySelector(`.card[data-edit="${CSS.escape(id)}"]`)?.classList.remove("fresh");
  app.fresh.clear();
}

function matches(e: PageEdit): boolean {
  if (app.status !== "all" && e.status !== app.status) return false;
  if (app.file !== "") {
    const f = app.file.toLowerCase();
    if (!e.file_path.toLowerCase().includes(f) && !(e.source_path ?? "").toLowerCase().includes(f)) return false;
  }
  return true;
}

function visible(): { conv: PageConversation; edits: PageEdit[] }[] {
  const out: { conv: PageConversation; edits: PageEdit[] }[] = [];
  for (const c of app.state?.conversations ?? []) {
    if (app.conv !== "" && c.id !== app.conv) continue;
    const edits = c.edits.filter(matches);
    if (edits.length > 0) out.push({ conv: c, edits });
  }
  return out;
}

function visibleEdits(): PageEdit[] {
  return visible().flatMap((v) => v.edits);
}

// ---------------------------------------------------------------------------
// Rendering

const STATUS_LABEL: Record<EditStatus, string> = { pending: "Pending", accepted: "Accepted", rejected: "Rejected" };

function render(): void {
  const s = app.state;
  if (!s) return;
  const anchor = scrollAnchor();
  $("#repo").textContent = s.root;
  document.title = `${s.root} · worksnap review`;
  const counts = { pending: 0, accepted: 0, rejected: 0 };
  for (const c of s.conversations) for (const k of ["pending", "accepted", "rejected"] as const) counts[k] += c.counts[k];
  $("#summary").innerHTML = (["pending", "accepted", "rejected"] as const).map((k) => `<span class="count c-${k}"><b>${counts[k]}</b> ${k}</span>`).join("");
  for (const b of document.querySelectorAll<HTMLElement>("#status-filter button")) b.setAttribute("aria-selected", String(b.dataset.status === app.status));
  renderConvSelect(s);
  renderBanner(s);
  renderSidebar(s);
  renderEdits();
  restoreAnchor(anchor);
}

function renderConvSelect(s: PageState): void {
  const sel = $("#conv-filter") as HTMLSelectElement;
  sel.innerHTML = `<option value="">All conversations</option>${s.conversations.map((c) => `<option value="${esc(c.id)}">${esc(c.id)}</option>`).join("")}`;
  sel.value = app.conv;
}

function renderBanner(s: PageState): void {
  const banner = $("#banner");
  if (s.interrupted.length === 0) {
    banner.hidden = true;
    return;
  }
  const i = s.interrupted[0]!;
  banner.hidden = false;
  banner.innerHTML = `<span>An interrupted ${esc(i.action)} (${esc(fullTime(i.timestamp))}) has not finished writing ${esc(i.paths.join(", "))}.</span><button class="btn btn-small" data-act="recover">Complete it</button>`;
}

function countsHtml(c: Record<EditStatus, number>): string {
  return (["pending", "accepted", "rejected"] as const)
    .filter((k) => c[k] > 0)
    .map((k) => `<span class="chip chip-${k}" title="${c[k]} ${k}">${c[k]}</span>`)
    .join("");
}

function renderSidebar(s: PageState): void {
  const total = s.conversations.reduce((n, c) => n + c.edits.length, 0);
  const items = s.conversations.map((c) => {
    const files = [...new Set(c.edits.map((e) => e.file_path))];
    return `<button class="conv-item${app.conv === c.id ? " active" : ""}" data-act="select-conv" data-conv="${esc(c.id)}" title="${esc(c.id)}">
      <span class="conv-top"><span class="mono conv-id">${esc(shortConv(c.id))}</span><span class="conv-time" title="${esc(fullTime(c.last))}">${esc(ago(c.last))}</span></span>
      <span class="conv-files mono">${esc(files.slice(0, 3).join(", "))}${files.length > 3 ? ` +${files.length - 3}` : ""}</span>
      <span class="conv-counts">${countsHtml(c.counts)}</span>
    </button>`;
  });
  $("#sidebar").innerHTML = `<div class="side-head"><span>Conversations</span><span class="muted">${s.conversations.length}</span></div>
    <button class="conv-item all${app.conv === "" ? " active" : ""}" data-act="select-conv" data-conv=""><span class="conv-top"><span>All conversations</span><span class="muted">${plural(total, "edit")}</span></span></button>
    ${items.join("")}`;
}

/** The visible groups cut to the first `app.shown` edits, widened to keep the selected edit drawn; and how many are left out. */
function drawn(): { groups: { conv: PageConversation; edits: PageEdit[] }[]; hidden: number } {
  const all = visible();
  const total = all.reduce((n, g) => n + g.edits.length, 0);
  if (app.selected !== null) {
    let at = 0;
    for (const g of all) {
      const i = g.edits.findIndex((e) => e.edit_id === app.selected);
      if (i >= 0) {
        if (at + i >= app.shown) app.shown = Math.ceil((at + i + 1) / PAGE_EDITS) * PAGE_EDITS;
        break;
      }
      at += g.edits.length;
    }
  }
  if (total <= app.shown) return { groups: all, hidden: 0 };
  const groups: { conv: PageConversation; edits: PageEdit[] }[] = [];
  let left = app.shown;
  for (const g of all) {
    if (left === 0) break;
    groups.push(g.edits.length <= left ? g : { conv: g.conv, edits: g.edits.slice(0, left) });
    left -= Math.min(left, g.edits.length);
  }
  return { groups, hidden: total - app.shown };
}

function renderEdits(): void {
  observer.disconnect();
  const main = $("#edits");
  const s = app.state!;
  const { groups, hidden } = drawn();
  if (groups.length === 0) {
    main.innerHTML =
      s.conversations.length === 0
        ? `<div class="empty"><svg viewBox="0 0 24 24" aria-hidden="true"><rect x="3" y="3" width="18" height="18" rx="5" /><path d="M8 12.5l2.6 2.6L16.5 9" /></svg><h2>No recorded edits yet</h2><p>Edits an agent makes through worksnap's tools appear here as they happen.</p></div>`
        : `<div class="empty"><h2>No edit matches</h2><p>${plural(s.conversations.reduce((n, c) => n + c.edits.length, 0), "edit")} recorded. Change the filters to see them.</p></div>`;
    return;
  }
  if (app.selected === null || !groups.some((g) => g.edits.some((e) => e.edit_id === app.selected))) app.selected = groups[0]!.edits[0]!.edit_id;
  main.innerHTML =
    groups.map((g) => convSection(g.conv, g.edits)).join("") +
    (hidden > 0 ? `<button class="btn more-edits" data-act="more-edits">Show ${plural(Math.min(hidden, PAGE_EDITS), "more edit")} <span class="muted">(${hidden} not shown)</span></button>` : "");
  for (const card of main.querySelectorAll<HTMLElement>(".card")) {
    const id = card.dataset.edit!;
    const cached = app.diffs.get(id);
    if (cached) fillDiff(card, id, cached);
    else if (isOpen(id)) observer.observe(card);
  }
}

function convSection(c: PageConversation, edits: PageEdit[]): string {
  const pending = c.counts.pending;
  const rejectable = c.counts.pending + c.counts.accepted;
  return `<section class="conv" data-conv="${esc(c.id)}">
    <div class="conv-head">
      <div class="conv-title"><span class="label">Conversation</span><span class="mono" title="${esc(c.id)}">${esc(c.id)}</span></div>
      <div class="conv-meta muted">${plural(c.edits.length, "edit")} · ${esc(ago(c.last))} ${countsHtml(c.counts)}</div>
      <div class="conv-actions">
        <button class="btn btn-small btn-accept" data-act="accept-conv" data-conv="${esc(c.id)}" ${pending + c.counts.rejected === 0 ? "disabled" : ""} title="Accept every edit of this conversation (Shift A)">Accept all</button>
        <button class="btn btn-small btn-reject" data-act="reject-conv" data-conv="${esc(c.id)}" ${rejectable === 0 ? "disabled" : ""} title="Reject every edit of this conversation (Shift R)">Reject all</button>
      </div>
    </div>
    ${edits.map(card).join("")}
  </section>`;
}

function isOpen(id: string): boolean {
  const e = findEdit(id);
  return app.open.get(id) ?? e?.status === "pending";
}

function card(e: PageEdit): string {
  const path = e.source_path
    ? `<span class="from">${esc(e.source_path)}</span><span class="arrow">→</span>${esc(e.file_path)}`
    : esc(e.file_path);
  const open = isOpen(e.edit_id);
  const classes = ["card", `st-${e.status}`, app.selected === e.edit_id ? "selected" : "", app.fresh.has(e.edit_id) ? "fresh" : "", open ? "open" : ""].filter(Boolean).join(" ");
  return `<article class="${classes}" data-edit="${esc(e.edit_id)}" data-status="${e.status}" tabindex="-1">
    <header class="card-head" data-act="select" data-edit="${esc(e.edit_id)}">
      <button class="twisty" data-act="toggle" data-edit="${esc(e.edit_id)}" aria-expanded="${open}" aria-label="Show diff"><svg viewBox="0 0 16 16" aria-hidden="true"><path d="M6 4l4 4-4 4" /></svg></button>
      <span class="pill pill-${e.status}">${STATUS_LABEL[e.status]}</span>
      <span class="op op-${e.operation}">${e.operation}</span>
      <span class="path mono" title="${esc(e.source_path ? `${e.source_path} → ${e.file_path}` : e.file_path)}">${path}</span>
      <span class="stat"><span class="add">+${e.added}</span><span class="del">−${e.removed}</span></span>
      <span class="meta muted"><span class="mono">${esc(shortId(e.edit_id))}</span> · call ${e.tool_call_index} · ${esc(e.tool_name)} · <span title="${esc(fullTime(e.timestamp))}">${esc(ago(e.timestamp))}</span></span>
      <span class="actions">
        <button class="btn btn-small btn-accept" data-act="accept" data-edit="${esc(e.edit_id)}" ${e.status === "accepted" ? "disabled" : ""} title="${e.status === "rejected" ? "Apply this edit again" : "Accept this edit"} (a)">Accept</button>
        <button class="btn btn-small btn-reject" data-act="reject" data-edit="${esc(e.edit_id)}" ${e.status === "rejected" ? "disabled" : ""} title="Undo this edit, keeping the others (r)">Reject</button>
      </span>
    </header>
    <div class="card-body">${open ? '<div class="diff-loading">Loading diff…</div>' : ""}</div>
  </article>`;
}

function fillDiff(cardEl: HTMLElement, id: string, d: DiffCache): void {
  if (!isOpen(id)) return;
  const body = cardEl.querySelector<HTMLElement>(".card-body")!;
  body.innerHTML = `${d.html}${d.hidden > 0 ? `<button class="more" data-act="more" data-edit="${esc(id)}">Show ${plural(d.hidden, "more line")}</button>` : ""}`;
}

async function loadDiff(id: string): Promise<void> {
  if (app.diffs.has(id) || app.loading.has(id)) return;
  app.loading.add(id);
  try {
    const { diff } = await api.edit(id);
    const e = findEdit(id);
    const rows = parseDiff(diff);
    const path = e?.file_path ?? "";
    const cache: DiffCache = { html: rows.length === 0 ? '<p class="diff-empty muted">No content change.</p>' : renderDiff(rows, path, MAX_ROWS), hidden: Math.max(0, rows.length - MAX_ROWS) };
    if (cache.hidden > 0) cache.full = () => renderDiff(rows, path);
    app.diffs.set(id, cache);
    const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"]`);
    if (el) fillDiff(el, id, cache);
  } catch (err) {
    const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"] .card-body`);
    if (el) el.innerHTML = `<p class="diff-empty error">The diff could not be loaded: ${esc((err as Error).message)}</p>`;
  } finally {
    app.loading.delete(id);
  }
}

function findEdit(id: string): PageEdit | undefined {
  for (const c of app.state?.conversations ?? []) for (const e of c.edits) if (e.edit_id === id) return e;
  return undefined;
}

/** The selected card's place on screen, kept across a re-render (new edits arrive above it). */
function scrollAnchor(): { id: string; top: number } | null {
  const id = app.selected;
  const el = id ? document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"]`) : null;
  if (!el || window.scrollY === 0) return null;
  return { id: id!, top: el.getBoundingClientRect().top };
}

function restoreAnchor(a: { id: string; top: number } | null): void {
  if (!a) return;
  const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(a.id)}"]`);
  if (el) window.scrollBy(0, el.getBoundingClientRect().top - a.top);
}

// ---------------------------------------------------------------------------
// Actions

function toast(n: Notice): void {
  const box = document.createElement("div");
  box.className = `toast toast-${n.tone}`;
  box.innerHTML = `<strong>${esc(n.title)}</strong>${n.lines.map((l) => `<div class="mono small">${esc(l)}</div>`).join("")}`;
  $("#toasts").append(box);
  setTimeout(() => box.classList.add("leaving"), 4_500);
  setTimeout(() => box.remove(), 5_000);
}

async function act(action: "accept" | "reject", target: { edit_ids?: string[]; conversation_id?: string }, label: string): Promise<void> {
  if (app.busy) return;
  app.busy = true;
  document.body.classList.add("busy");
  try {
    const notice = await reviewFlow(action, target, label);
    if (notice) toast(notice);
  } catch (err) {
    toast({ tone: "error", title: "Something went wrong", lines: [(err as Error).message] });
  } finally {
    app.busy = false;
    document.body.classList.remove("busy");
    await refresh().catch(() => undefined);
  }
}

function select(id: string, scroll: boolean): void {
  app.selected = id;
  for (const el of document.querySelectorAll(".card.selected")) el.classList.remove("selected");
  const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"]`);
  if (!el) return;
  el.classList.add("selected");
  if (scroll) {
    el.scrollIntoView({ block: "nearest" });
    el.focus({ preventScroll: true });
  }
}

function move(delta: number): void {
  const list = visibleEdits();
  if (list.length === 0) return;
  const at = list.findIndex((e) => e.edit_id === app.selected);
  const to = Math.min(list.length - 1, Math.max(0, at < 0 ? 0 : at + delta));
  const next = list[to]!;
  if (to >= app.shown) {
    app.selected = next.edit_id;
    render(); // draws one more page, up to the selected edit
  }
  select(next.edit_id, true);
}

function toggle(id: string): void {
  app.open.set(id, !isOpen(id));
  const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"]`);
  if (!el) return;
  const open = isOpen(id);
  el.classList.toggle("open", open);
  el.querySelector(".twisty")?.setAttribute("aria-expanded", String(open));
  const body = el.querySelector<HTMLElement>(".card-body")!;
  if (!open) body.innerHTML = "";
  else {
    const cached = app.diffs.get(id);
    if (cached) fillDiff(el, id, cached);
    else {
      body.innerHTML = '<div class="diff-loading">Loading diff…</div>';
      void loadDiff(id);
    }
  }
}

function selectedEdit(): PageEdit | undefined {
  return app.selected ? findEdit(app.selected) : undefined;
}

function setStatus(s: StatusFilter): void {
  app.status = s;
  refiltered();
}

/** A filter changed: the list starts again at one page (and widens to the selected edit, drawn()). */
function refiltered(): void {
  app.shown = PAGE_EDITS;
  render();
}

// ---------------------------------------------------------------------------
// Theme

const THEMES = ["auto", "light", "dark"] as const;
type Theme = (typeof THEMES)[number];

function applyTheme(t: Theme): void {
  if (t === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  $("#theme-btn").title = `Theme: ${t === "auto" ? "follows the system" : t} (t)`;
}

function cycleTheme(): void {
  const now = (localStorage.getItem("worksnap-theme") as Theme | null) ?? "auto";
  const next = THEMES[(THEMES.indexOf(now) + 1) % THEMES.length]!;
  localStorage.setItem("worksnap-theme", next);
  applyTheme(next);
}

// ---------------------------------------------------------------------------
// Live updates

function listen(): void {
  const live = $("#live");
  const label = $(".live-label", live);
  const set = (state: string, text: string) => {
    live.dataset.state = state;
    label.textContent = text;
  };
  const events = new EventSource("/api/events");
  events.addEventListener("open", () => set("on", "Live"));
  events.addEventListener("error", () => set(events.readyState === EventSource.CLOSED ? "off" : "connecting", events.readyState === EventSource.CLOSED ? "Offline" : "Reconnecting"));
  events.addEventListener("problem", (ev) => set("problem", (ev as MessageEvent).data as string));
  events.addEventListener("stamp", (ev) => {
    set("on", "Live");
    if (app.state && (ev as MessageEvent).data !== app.state.stamp && !app.busy) void refresh();
  });
}

// ---------------------------------------------------------------------------

function onClick(ev: MouseEvent): void {
  const t = (ev.target as HTMLElement).closest<HTMLElement>("[data-act]");
  if (!t || (t as HTMLButtonElement).disabled) return;
  const id = t.dataset.edit ?? "";
  switch (t.dataset.act) {
    case "accept":
    case "reject":
      ev.stopPropagation();
      select(id, false);
      void act(t.dataset.act, { edit_ids: [id] }, `edit ${shortId(id)}`);
      break;
    case "accept-conv":
    case "reject-conv":
      void act(t.dataset.act === "accept-conv" ? "accept" : "reject", { conversation_id: t.dataset.conv! }, `conversation ${shortConv(t.dataset.conv!)}`);
      break;
    case "toggle":
      ev.stopPropagation();
      select(id, false);
      toggle(id);
      break;
    case "select":
      if ((ev.target as HTMLElement).closest("button")) return;
      select(id, false);
      toggle(id);
      break;
    case "more": {
      const full = app.diffs.get(id)?.full;
      if (full) {
        app.diffs.set(id, { html: full(), hidden: 0 });
        const el = document.querySelector<HTMLElement>(`.card[data-edit="${CSS.escape(id)}"]`);
        if (el) fillDiff(el, id, app.diffs.get(id)!);
      }
      break;
    }
    case "more-edits":
      app.shown += PAGE_EDITS;
      render();
      break;
    case "select-conv":
      app.conv = t.dataset.conv ?? "";
      document.body.classList.remove("side-open");
      refiltered();
      window.scrollTo(0, 0);
      break;
    case "status":
      setStatus(t.dataset.status as StatusFilter);
      break;
    case "theme":
      cycleTheme();
      break;
    case "help":
      void showHelp();
      break;
    case "menu":
      document.body.classList.toggle("side-open");
      break;
    case "recover":
      void recoverFlow();
      break;
  }
}

async function recoverFlow(): Promise<void> {
  const notice = await recoverInterrupted();
  if (notice) toast(notice);
  await refresh();
}

async function start(): Promise<void> {
  applyTheme((localStorage.getItem("worksnap-theme") as Theme | null) ?? "auto");
  document.addEventListener("click", onClick);
  const fileInput = $("#file-filter") as HTMLInputElement;
  fileInput.addEventListener("input", () => {
    app.file = fileInput.value.trim();
    refiltered();
  });
  const convSel = $("#conv-filter") as HTMLSelectElement;
  convSel.addEventListener("change", () => {
    app.conv = convSel.value;
    refiltered();
  });
  bindKeys({
    next: () => move(1),
    prev: () => move(-1),
    accept: () => {
      const e = selectedEdit();
      if (e && e.status !== "accepted") void act("accept", { edit_ids: [e.edit_id] }, `edit ${shortId(e.edit_id)}`);
    },
    reject: () => {
      const e = selectedEdit();
      if (e && e.status !== "rejected") void act("reject", { edit_ids: [e.edit_id] }, `edit ${shortId(e.edit_id)}`);
    },
    acceptConversation: () => {
      const e = selectedEdit();
      if (e) void act("accept", { conversation_id: e.conversation_id }, `conversation ${shortConv(e.conversation_id)}`);
    },
    rejectConversation: () => {
      const e = selectedEdit();
      if (e) void act("reject", { conversation_id: e.conversation_id }, `conversation ${shortConv(e.conversation_id)}`);
    },
    toggle: () => {
      if (app.selected) toggle(app.selected);
    },
    focusFilter: () => fileInput.focus(),
    status: (i) => setStatus((["all", "pending", "accepted", "rejected"] as const)[i]!),
    theme: cycleTheme,
    help: () => void showHelp(),
  });
  try {
    await refresh();
  } catch (err) {
    $("#edits").innerHTML = `<div class="empty"><h2>The history could not be read</h2><p>${esc((err as Error).message)}</p></div>`;
  }
  listen();
  // Relative times move on.
  setInterval(() => {
    if (!app.busy && !document.querySelector("dialog[open]")) render();
  }, 60_000);
}

void start();
