import type { PublicError } from "../../core/public-error";
import type { CheckResult, Outcome } from "./check";
import type { CommandResult } from "./check-cache";
import type { ContextResult } from "./context";
import type { EndResult } from "./end";
import type { DiffResult, SnapshotListEntry } from "./fix";
import type { Learning } from "./memory-store";
import type { MemoryMatch } from "./memory-match";
import type { ViolationResult } from "./learn";
import type { RestoreResult } from "./restore";
import type { RiskAssessment } from "./risk";
import type { StartResult } from "./start";
import { wireCodeOf } from "./task-errors";
import { type WireField, type WireResponse, wireValue } from "./wire";

/**
 * Renders task-layer answers as wire responses (wire.ts): the fields in the
 * spec's order and a plain-language summary that carries everything
 * essential, so a model that cannot read the line loses nothing. The only
 * module of the task layer that builds text for the model.
 */

const STATUS_MARK: Record<Outcome, string> = { pass: "✓", fail: "✗", skipped: "⏭️" };
/** Files a restore line names at most; a final `…+N` field counts the rest. */
export const RESTORE_LIST_CAP = 10;
/** Items a summary lists at most per kind. */
const SUMMARY_ITEMS = 5;

const f = (label: string, value: string | number, max?: number): WireField => ({ label, value: typeof value === "number" ? String(value) : wireValue(value, max) });
const positional = (value: string, max?: number): WireField => ({ value: wireValue(value, max) });
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const list = (items: readonly string[], cap = SUMMARY_ITEMS) => (items.length <= cap ? items.join(", ") : `${items.slice(0, cap).join(", ")} and ${items.length - cap} more`);

export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const LEVEL = { L: "Low", M: "Medium", H: "High" } as const;

function riskWords(r: RiskAssessment): string {
  if (r.reasons.length === 0) return `${LEVEL[r.level]} risk.`;
  const why = r.reasons.map((x) => (["files", "dirty"].includes(x.rule) ? x.because : `${x.rule} scope (${x.because})`));
  return `${LEVEL[r.level]} risk: ${why.join(", ")}.`;
}

/** The `learn` field: each match's short label, `;`-separated. */
function learnField(matches: readonly MemoryMatch[]): string {
  return matches.map((m) => (m.kind === "learning" ? m.learning.trigger : `pattern:${m.pattern.type}`)).join(";");
}

function learnWords(matches: readonly MemoryMatch[]): string {
  if (matches.length === 0) return "No matching learnings.";
  const items = matches.map((m) =>
    m.kind === "learning"
      ? `${m.learning.type} "${m.learning.trigger}" → ${m.learning.action}${m.learning.source === "team" ? " (team)" : ""}`
      : `pattern ${m.pattern.type} (${m.pattern.count}×)${m.pattern.prevention ? `: ${m.pattern.prevention}` : ""}`,
  );
  return `Relevant: ${items.join("; ")}.`;
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

// ---------------------------------------------------------------- S

export function renderStart(r: StartResult): WireResponse {
  const t = r.task;
  const fields = [
    f("id", t.id),
    f("snap", r.snap ?? ""),
    f("risk", t.risk.level),
    f("prot", t.prot),
    f("dirty", t.dirty_at_start),
    f("status", t.snapshot.status),
    f("learn", learnField(r.learn)),
  ];
  const parts = [`Task started: ${t.id} "${clip(t.title, 80)}".`];
  if (t.snapshot.status === "failed") {
    parts.push(`Snapshot failed (${t.snapshot.failure ?? "unknown"}): nothing is protected, restore is unavailable.`);
  } else {
    const named = t.files.length === 0 ? "" : `, ${t.named.held.length}/${t.files.length} named held${t.named.missing.length > 0 ? ` (not there yet: ${list(t.named.missing, 3)})` : ""}`;
    parts.push(`Snapshot ${r.snap} ${t.snapshot.status}, ${plural(t.snapshot.files, "file")}${named}.`);
  }
  if (t.snapshot.status === "failed") {
    // nothing was captured: no word about what the capture would have held
  } else if (r.dirty.against === "previous-snapshot") parts.push(`No git: whole tree captured; ${plural(t.dirty_at_start, "file")} changed since the previous task snapshot.`);
  else if (r.dirty.against === "none" && !t.base.git) parts.push("No git: whole tree captured; no earlier snapshot to count dirty files against.");
  parts.push(riskWords(t.risk), learnWords(r.learn));
  return { type: "S", fields, summary: parts.join(" ") };
}

// ---------------------------------------------------------------- X

export function renderContext(r: ContextResult): WireResponse {
  const fields = [f("risk", r.risk.level), f("prot", r.prot), f("dirty", r.dirty), f("learn", learnField(r.learn))];
  if (!r.task) {
    const summary = `Current context: no active task (snap mode start begins one). ${plural(r.dirty, "dirty file")}, nothing protected. ${riskWords(r.risk)} ${learnWords(r.learn)}`;
    return { type: "X", fields, summary };
  }
  const t = r.task;
  const changes = r.state?.changes ?? [];
  const lines = r.lines ? ` (+${r.lines.added} -${r.lines.removed})` : "";
  const parts = [
    `Current context: ${t.id} "${clip(t.title, 80)}", snapshot ${r.snap ?? "failed"}.`,
    changes.length === 0 ? "Nothing changed since the start." : `${plural(changes.length, "file")} changed${lines}: ${list(changes.map((c) => c.change.path), 3)}.`,
    `${plural(r.dirty, "dirty file")}.`,
    riskWords(r.risk),
    learnWords(r.learn),
  ];
  if (t.last_check) parts.push(`Last check ${t.last_check.mode}: ${t.last_check.status === "pass" ? "passed" : t.last_check.status === "fail" ? `failed (${plural(t.last_check.errors, "error")})` : "skipped"}.`);
  return { type: "X", fields, summary: parts.join(" ") };
}

// ---------------------------------------------------------------- C

function issueLabel(x: { path: string; line: number }): string {
  return x.line > 0 ? `${x.path}:${x.line}` : x.path;
}

interface Issue {
  path: string;
  line: number;
  what: string;
  severity: "error" | "warning";
}

/** The located problems of a check, errors first: what `issues` names. */
function issuesOf(r: CheckResult): Issue[] {
  const out: Issue[] = [];
  for (const c of r.commands) for (const d of c.diagnostics) out.push({ path: d.path, line: d.line, what: `${c.name}: ${d.message}`, severity: d.severity });
  for (const x of r.findings) out.push({ path: x.path, line: x.line, what: `${x.rule}: ${x.message}`, severity: x.severity });
  return [...out.filter((i) => i.severity === "error"), ...out.filter((i) => i.severity === "warning")];
}

export function renderCheck(r: CheckResult, now = Date.now()): WireResponse {
  const issues = issuesOf(r);
  let issueField = issues.map(issueLabel).join(",");
  if (r.mode === "impact" && r.impact) issueField = r.impact.dependents.map((d) => d.path).join(",");
  if (issueField === "") issueField = r.commands.filter((c) => !c.passed).map((c) => `${c.name}:exit ${c.exitCode}`).join(",");
  const fields = [
    f("status", STATUS_MARK[r.status]),
    f("err", `${r.errors}E`),
    f("warn", `${r.warnings}W`),
    f("ts", STATUS_MARK[r.subsystems.ts]),
    f("lint", STATUS_MARK[r.subsystems.lint]),
    f("tests", STATUS_MARK[r.subsystems.tests]),
    f("issues", issueField),
  ];
  const head = r.status === "fail" ? "failed" : r.status === "pass" ? "passed" : "skipped (nothing to run)";
  const counts = r.errors + r.warnings === 0 ? "" : `: ${[r.errors > 0 ? plural(r.errors, "error") : "", r.warnings > 0 ? plural(r.warnings, "warning") : ""].filter(Boolean).join(", ")}`;
  const scope =
    r.scope.from === "task"
      ? r.scope.files.length === 0
        ? " (nothing changed since the task started)"
        : ` in ${plural(r.scope.files.length, "changed file")}`
      : r.scope.from === "files"
        ? ` in ${plural(r.scope.files.length, "given file")}`
        : "";
  const parts = [`Check ${r.mode} ${head}${counts}${scope}.`];
  if (r.commands.length > 0) parts.push(`${r.commands.map((c) => commandWords(c, now)).join("; ")}.`);
  if (r.plan && (r.commands.length > 0 || r.missingKinds.length > 0)) parts.push(planWords(r.plan, r.commands, r.missingKinds));
  if (issues.length > 0) {
    const shown = issues.slice(0, 3).map((i) => `${issueLabel(i)} ${clip(i.what.replace(/\.$/, ""), 90)}`);
    parts.push(`${shown.join("; ")}${issues.length > 3 ? `; ${issues.length - 3} more` : ""}.`);
  }
  if (r.impact) {
    const i = r.impact;
    parts.push(
      i.total === 0
        ? "No file imports the changed files."
        : `${plural(i.total, "file")} depend${i.total === 1 ? "s" : ""} on them: ${list(i.dependents.map((d) => d.path), 5)}; tests: ${i.tests.length === 0 ? "none" : list(i.tests, 5)}.`,
    );
  }
  if (r.cycles && r.cycles.length === 0) parts.push("No import cycle through the changed files.");
  if (r.docs && r.docs.length === 0) parts.push("No stale documentation.");
  return { type: "C", fields, summary: parts.join(" ") };
}

function commandWords(c: CommandResult, now: number): string {
  const status = c.passed ? "passed" : `failed (exit ${c.exitCode}, ${plural(c.errors, "error")})`;
  const warn = c.warnings > 0 ? ` ${plural(c.warnings, "warning")}` : "";
  const cached = c.cached ? `, cached (same tree, ${age(c.ranAt, now)} ago)` : "";
  let tail = "";
  if (!c.passed && c.diagnostics.length === 0) tail = `, output ends: ${clip(c.outputTail.trim().split("\n").slice(-2).join(" / "), 160)}`;
  const notCached = c.notCached ? " (not cached: the tree changed while it ran)" : "";
  return `${c.name} ${status}${warn}${cached}${tail}${notCached}`;
}

function planWords(plan: NonNullable<CheckResult["plan"]>, ran: readonly CommandResult[], missing: readonly string[]): string {
  const sources = [...new Set(ran.map((c) => c.source.split(" ")[0] as string))];
  const origin = plan.origin;
  const where =
    origin.kind === "head" ? `at HEAD ${origin.commit.slice(0, 12)}` : origin.kind === "worktree" ? "in the work tree (no git)" : "nowhere: no commit yet";
  const parts = [`Commands from ${sources.length > 0 ? sources.join(", ") : "the configuration"} ${where}.`];
  if (plan.drift.length > 0) parts.push(`Uncommitted edits to ${list(plan.drift, 3)} not used.`);
  if (missing.length > 0) parts.push(`No ${missing.join("/")} command.`);
  if (plan.notes.length > 0) parts.push(`${plan.notes.join("; ")}.`);
  return parts.join(" ");
}

// ---------------------------------------------------------------- E

export function renderEnd(r: EndResult): WireResponse {
  const t = r.task;
  const survey = `{${(Object.entries(r.survey) as [string, number][]).map(([k, v]) => `"${k}":${v}`).join(",")}}`;
  const fields: WireField[] = [
    f("status", r.outcome === "completed" ? "OK" : "ERR"),
    f("learn", `${r.learnings.length}L`),
    f("files", `${r.files}F`),
    f("lines", `+${r.lines.added}-${r.lines.removed}`),
    f("summary", t.title, 60),
    positional(survey, 200),
  ];
  const parts = [`Task ended: ${t.id} ${r.outcome}.`];
  parts.push(`${plural(r.files, "file")} changed (+${r.lines.added}/-${r.lines.removed} lines${r.lines.binary > 0 ? `, ${r.lines.binary} binary` : ""}).`);
  parts.push(`${plural(r.learnings.length, "learning")} captured.`);
  if (r.survey.helpfulness !== undefined) parts.push(`Helpfulness rated ${r.survey.helpfulness}/5.`);
  if (t.last_check?.status === "fail") parts.push(`The last check (${t.last_check.mode}) failed with ${plural(t.last_check.errors, "error")}.`);
  return { type: "E", fields, summary: parts.join(" ") };
}

// ---------------------------------------------------------------- L / V

export function renderLearn(l: Learning): WireResponse {
  const fields = [f("status", "OK"), f("id", l.id), f("type", l.type)];
  return { type: "L", fields, summary: `Learning captured: ${l.type} "${clip(l.trigger, 80)}" → ${clip(l.action, 120)}.` };
}

export function renderViolation(r: ViolationResult): WireResponse {
  const v = r.record;
  const fields = [f("status", "OK"), f("type", v.type), f("count", v.count), f("promote", r.promote), f("auto", r.auto)];
  const parts = [`Violation '${v.type}' recorded (${plural(v.count, "occurrence")}).`];
  if (r.promote === "NO") parts.push(`Stored; a pattern at 3.`);
  else if (r.promote === "PROMOTED") parts.push("Promoted to a pattern: future task starts show it, check patterns applies it.");
  else parts.push("A pattern: task starts show it, check patterns applies it.");
  if (r.auto === "YES") parts.push(r.detector ? `Automated by detector ${r.detector.name} (now errors).` : "Marked for automation: add a worksnap.json patterns rule.");
  else if (r.detector) parts.push(`Detector ${r.detector.name} checks it.`);
  return { type: "V", fields, summary: parts.join(" ") };
}

// ---------------------------------------------------------------- R / D

export function renderList(r: { count: number; entries: SnapshotListEntry[] }, now = Date.now()): WireResponse {
  const fields: WireField[] = [f("count", r.count), ...r.entries.map((e) => positional(`${e.snap}:${age(e.created_at, now)}:${e.files}f`))];
  if (r.count > r.entries.length) fields.push({ value: `…+${r.count - r.entries.length}` });
  const items = r.entries.slice(0, 3).map((e) => `${e.snap} ${e.task} "${clip(e.title, 40)}"`);
  const more = r.count > 3 ? `; ${r.count - 3} older` : "";
  const summary = r.count === 0 ? "0 snapshots available (snap mode start takes one per task)." : `${plural(r.count, "snapshot")} available: ${items.join("; ")}${more}.`;
  return { type: "R", fields, summary };
}

export function renderRestore(r: RestoreResult): WireResponse {
  const shown = r.files.slice(0, RESTORE_LIST_CAP);
  const fields: WireField[] = [f("status", r.dryRun ? "DRYRUN" : "OK"), f("files", r.files.length), ...shown.map((x) => positional(x.path, 200))];
  if (r.files.length > shown.length) fields.push({ value: `…+${r.files.length - shown.length}` });
  const names = list(r.files.map((x) => `${x.path}${x.action === "delete" ? " (deleted)" : ""}`), 5);
  let summary: string;
  if (r.files.length === 0) summary = `Nothing to restore: the work tree matches snapshot ${r.snap}.`;
  else if (r.dryRun) summary = `Dry run: restoring ${r.snap} would change ${plural(r.files.length, "file")}: ${names}. Nothing written.`;
  else summary = `Restored ${plural(r.files.length, "file")} from snapshot ${r.snap}: ${names}. Undo: worksnap history reject --conv ${r.conversation}`;
  return { type: "R", fields, summary };
}

export function renderDiff(r: DiffResult): WireResponse {
  const fields = [f("from", r.from), f("to", r.to), f("added", `+${r.added.length}`), f("removed", `-${r.removed.length}`), f("changed", `~${r.changed.length}`)];
  const parts = [`Diff: +${r.added.length} added, -${r.removed.length} removed, ~${r.changed.length} changed${r.basis === "task" ? " since the task started" : ""}.`];
  if (r.added.length > 0) parts.push(`Added: ${list(r.added, 5)}.`);
  if (r.removed.length > 0) parts.push(`Removed: ${list(r.removed, 5)}.`);
  if (r.changed.length > 0) parts.push(`Changed: ${list(r.changed, 5)}.`);
  return { type: "D", fields, summary: parts.join(" ") };
}

// ---------------------------------------------------------------- !

export function renderError(err: PublicError): WireResponse {
  const code = wireCodeOf(err);
  // a refusal of the arguments reads as its problems, without the tool's name in front
  const problems = Array.isArray(err.details.problems) && err.details.problems.every((p) => typeof p === "string") ? (err.details.problems as string[]) : [];
  const message = problems.length > 0 ? problems.join("; ") : err.message;
  const completed = Array.isArray(err.details.completed) && err.details.completed.length > 0 ? ` Before it: ${(err.details.completed as string[]).join("; ")}.` : "";
  const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
  return { type: "!", fields: [f("code", code), f("reason", message, 160)], summary: `Error: ${sentence}${completed}${hintFor(code)}` };
}

function hintFor(code: string): string {
  switch (code) {
    case "SNAPSHOT_NOT_FOUND":
      return " snap_fix action list shows them.";
    case "INVALID_MODE":
      return " snap_help topic modes lists them.";
    case "VALIDATION_FAILED":
      return " snap_help topic tools lists the arguments.";
    default:
      return "";
  }
}
