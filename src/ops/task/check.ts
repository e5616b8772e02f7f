import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isBinary } from "../../core/binary";
import { compareUtf8 } from "../../core/byte-order";
import { ROOT } from "../../core/repo-path";
import { WorksnapError } from "../../core/errors";
import { readLiveTree } from "../live/live-tree";
import { createSnapshot } from "../snapshot/create";
import type { Workspace } from "../workspace";
import type { CheckKind } from "./check-config";
import type { CommandResult } from "./check-cache";
import { type CheckPlan, loadCheckPlan } from "./check-detect";
import { runChecks } from "./check-run";
import type { Finding } from "./detectors";
import { type StaleDoc, staleDocs } from "./docs-check";
import { type Cycle, type Impact, cyclesThrough, impactOf } from "./graph-analysis";
import { buildImportGraph, edgesOf } from "./import-graph";
import { promotedPatterns } from "./memory-store";
import { type ScannedFile, parseFindings, runPatterns, scannedFiles } from "./patterns";
import { shortSnapshotId } from "./snapshot-ref";
import { parseFiles } from "./start";
import { taskState } from "./task-changes";
import { type TaskRecord, taskFor, writeTask } from "./task-store";
import { withAreaLock } from "./state-files";
import { taskError } from "./task-errors";
import type { ChangePair } from "../snapshot/changes";
import { sideEntries } from "../snapshot/tree-side";
import { readGitState } from "../../repo/fingerprint";

export const CHECK_MODES = ["quick", "patterns", "full", "build", "test", "impact", "circular", "docs", "all"] as const;
export type CheckMode = (typeof CHECK_MODES)[number];

/** What each mode does: project commands of these kinds, and which analyses. */
const MODES: Record<CheckMode, { kinds: CheckKind[]; parse: boolean; patterns: boolean; impact: boolean; circular: boolean; docs: boolean }> = {
  quick: { kinds: [], parse: true, patterns: true, impact: false, circular: false, docs: false },
  patterns: { kinds: [], parse: false, patterns: true, impact: false, circular: false, docs: false },
  full: { kinds: ["typecheck", "lint", "build", "test"], parse: true, patterns: true, impact: false, circular: false, docs: false },
  build: { kinds: ["build"], parse: false, patterns: false, impact: false, circular: false, docs: false },
  test: { kinds: ["test"], parse: false, patterns: false, impact: false, circular: false, docs: false },
  impact: { kinds: [], parse: false, patterns: false, impact: true, circular: false, docs: false },
  circular: { kinds: [], parse: false, patterns: false, impact: false, circular: true, docs: false },
  docs: { kinds: [], parse: false, patterns: false, impact: false, circular: false, docs: true },
  all: { kinds: ["typecheck", "lint", "build", "test"], parse: true, patterns: true, impact: true, circular: true, docs: true },
};

export type Outcome = "pass" | "fail" | "skipped";

export interface CheckArgs {
  mode: CheckMode;
  taskId?: string;
  files?: string[];
  /** The task this MCP session started last. */
  preferred?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message: string) => void;
}

export interface CheckResult {
  mode: CheckMode;
  task: TaskRecord | null;
  /** The files the analyses looked at: changed since the task started, or the files given. */
  scope: { files: string[]; from: "task" | "files" | "none" };
  /** Parse, pattern, cycle and documentation findings, sorted by path and line. */
  findings: Finding[];
  /** The project commands run (or answered from the cache). */
  commands: CommandResult[];
  /** null when the mode runs no project command. */
  plan: CheckPlan | null;
  /** Kinds the mode runs that the project has no command for. */
  missingKinds: CheckKind[];
  impact: Impact | null;
  cycles: Cycle[] | null;
  docs: StaleDoc[] | null;
  /** The checked tree's snapshot (short id), when commands ran. */
  tree: string | null;
  errors: number;
  warnings: number;
  status: Outcome;
  subsystems: { ts: Outcome; lint: Outcome; tests: Outcome };
}

/**
 * check: the modes of spec 003 over the task's changes (or the files given).
 * quick and patterns need no project tools; full, build and test run the
 * project's own commands (check-detect.ts) on a snapshot of the whole work
 * tree, answered from the cache when that tree was checked before; impact,
 * circular and docs read the import graph and the documentation.
 */
export async function runCheck(ws: Workspace, args: CheckArgs): Promise<CheckResult> {
  const mode = MODES[args.mode];
  const given = args.files === undefined ? null : parseFiles(args.files);
  const needsScope = mode.parse || mode.patterns || mode.impact || mode.circular || mode.docs;
  let task: TaskRecord | null = null;
  try {
    task = taskFor(ws, args.taskId, args.preferred);
  } catch (err) {
    // Without a task, modes that only run project commands (and files given explicitly) still work.
    const noTask = err instanceof WorksnapError && err.details.wire_code === "NO_TASK";
    if (!noTask || args.taskId !== undefined || (needsScope && given === null && mode.kinds.length === 0)) throw err;
  }
  // One git state for the whole check: the changes, the configuration's commit and the checked tree all describe it.
  const state = ws.repo.gitDir ? await readGitState(ws.repo) : undefined;
  // The plan (the committed configuration) first: when project commands are wanted, the snapshot they are keyed by
  // is read while the task's changes are worked out (both read the same git state, each its own files).
  const plan = mode.patterns || mode.kinds.length > 0 ? await loadCheckPlan(ws, state?.fingerprint.head_oid) : null;
  const wanted = plan ? commandsFor(plan, mode.kinds, args.mode) : [];
  const snapshotRead = plan && wanted.length > 0 ? createSnapshot(ws, { paths: ["."], gitState: state, signal: args.signal }) : null;
  snapshotRead?.catch(() => undefined); // awaited below; a failure of the scope's work first must not leave it unhandled
  let pairs: ChangePair[] = [];
  let scanned: ScannedFile[] = [];
  let scope: CheckResult["scope"] = { files: [], from: "none" };
  if (needsScope && given !== null) {
    scope = { files: [...given], from: "files" };
    scanned = wholeFiles(ws, given);
  } else if (needsScope && task) {
    // a snapshot of the whole tree being made anyway holds every file the changes compare
    const live = snapshotRead?.then((snap) => sideEntries(ws.snapshots.load(snap.snapshot_id).entries, [ROOT]));
    pairs = (await taskState(ws, task, { state, signal: args.signal, live })).changes;
    scanned = await scannedFiles(ws, pairs);
    scope = { files: pairs.map((p) => p.change.path), from: "task" };
  }
  const findings: Finding[] = [];
  if (mode.parse) findings.push(...parseFindings(scanned));
  if (mode.patterns) findings.push(...runPatterns(scanned, plan?.patterns ?? [], promotedPatterns(ws)));

  let impact: Impact | null = null;
  let cycles: Cycle[] | null = null;
  let docs: StaleDoc[] | null = null;
  if (mode.impact || mode.circular) {
    const graph = await buildImportGraph(ws, pairs.filter((p) => p.change.status === "deleted").map((p) => p.change.path));
    const changed = scope.files;
    if (mode.impact) impact = impactOf(graph, changed);
    if (mode.circular) {
      const before = new Map<string, Map<string, boolean>>();
      for (const p of pairs) {
        if (!p.from) before.set(p.change.path, new Map());
        else before.set(p.change.path, edgesOf(graph.context, p.change.path, new TextDecoder().decode(await ws.blobs.read(p.from.blob))));
      }
      cycles = cyclesThrough(graph, changed, before);
      for (const c of cycles) {
        findings.push({
          path: c.path[0] as string,
          line: 0,
          rule: "import_cycle",
          severity: c.preexisting ? "warning" : "error",
          message: `import cycle ${[...c.path, c.path[0]].join(" > ")}${c.preexisting ? " (it existed before the task)" : ""}`,
        });
      }
    }
  }
  if (mode.docs) {
    const livePaths = (await readLiveTree(ws, [ROOT])).entries.map((e) => e.path);
    const docPairs: ChangePair[] = scope.from === "files" ? scope.files.map((path) => ({ change: { path, status: "modified" }, from: null, to: null })) : pairs;
    docs = await staleDocs(ws, docPairs, livePaths);
    for (const d of docs) findings.push({ path: d.doc, line: d.line, rule: "stale_doc", severity: "warning", message: `mentions ${d.mentions} (changed: ${d.changed}) but was not updated` });
  }

  let commands: CommandResult[] = [];
  let tree: string | null = null;
  const missingKinds = mode.kinds.filter((k) => !wanted.some((c) => c.kind === k) && !(args.mode === "build" && k === "build" && wanted.length > 0));
  if (plan && snapshotRead) {
    const snap = await snapshotRead;
    tree = shortSnapshotId(ws, snap.snapshot_id);
    commands = await runChecks(ws, wanted, { tree: snap.snapshot_id, fingerprint: snap.fingerprint, pathDirs: plan.pathDirs, signal: args.signal, onProgress: args.onProgress });
  }
  findings.sort((a, b) => compareUtf8(a.path, b.path) || a.line - b.line);
  const errors = findings.filter((f) => f.severity === "error").length + commands.reduce((s, c) => s + c.errors, 0);
  const warnings = findings.filter((f) => f.severity === "warning").length + commands.reduce((s, c) => s + c.warnings, 0);
  const ran = commands.length > 0 || needsScope;
  const subsystem = (kinds: CheckKind[]): Outcome => {
    const of = commands.filter((c) => kinds.includes(c.kind));
    return of.length === 0 ? "skipped" : of.every((c) => c.passed) ? "pass" : "fail";
  };
  const result: CheckResult = {
    mode: args.mode,
    task,
    scope,
    findings,
    commands,
    plan,
    missingKinds: args.mode === "build" && wanted.length > 0 ? [] : missingKinds,
    impact,
    cycles,
    docs,
    tree,
    errors,
    warnings,
    status: errors > 0 ? "fail" : ran ? "pass" : "skipped",
    subsystems: { ts: subsystem(["typecheck", "build"]), lint: subsystem(["lint"]), tests: subsystem(["test"]) },
  };
  if (task && task.state === "active") await recordLastCheck(ws, task.id, result);
  return result;
}

/** The plan's commands of these kinds; mode build falls back to the typecheck when the project has no build command. */
function commandsFor(plan: CheckPlan, kinds: CheckKind[], mode: CheckMode) {
  const chosen = plan.commands.filter((c) => kinds.includes(c.kind));
  if (mode === "build" && chosen.length === 0) return plan.commands.filter((c) => c.kind === "typecheck");
  return chosen;
}

/** Files named explicitly: scanned whole (every line counts as the task's). Symlinks and binary files are skipped. */
function wholeFiles(ws: Workspace, files: readonly string[]): ScannedFile[] {
  const out: ScannedFile[] = [];
  for (const path of files) {
    const abs = join(ws.repo.root, path);
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(abs);
    } catch {
      throw taskError("NOT_FOUND", "NOT_FOUND", `files: ${path} does not exist in the work tree`, { path });
    }
    if (!st.isFile() || st.size > 2 * 1024 * 1024) continue;
    const bytes = readFileSync(abs);
    if (isBinary(bytes)) continue;
    const text = bytes.toString("utf8");
    const added = new Set<number>();
    const lines = text.split("\n").length;
    for (let l = 1; l <= lines; l++) added.add(l);
    out.push({ path, text, added });
  }
  return out;
}

async function recordLastCheck(ws: Workspace, id: string, r: CheckResult): Promise<void> {
  const last = taskFor(ws, id).last_check;
  // The same result as the one recorded (a check answered from the cache, usually) is not written again.
  if (last && last.mode === r.mode && last.status === r.status && last.errors === r.errors && last.warnings === r.warnings) return;
  await withAreaLock(ws, "tasks", async () => {
    const t = taskFor(ws, id);
    if (t.state !== "active") return;
    writeTask(ws, { ...t, last_check: { mode: r.mode, status: r.status, errors: r.errors, warnings: r.warnings, at: new Date().toISOString() } });
  });
}
