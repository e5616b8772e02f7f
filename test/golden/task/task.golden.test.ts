import { describe, test } from "bun:test";
import { WorksnapError } from "../../../src/core/errors";
import type { CheckResult } from "../../../src/ops/task/check";
import type { CommandResult } from "../../../src/ops/task/check-cache";
import type { ContextResult } from "../../../src/ops/task/context";
import { detectorFor } from "../../../src/ops/task/detectors";
import type { EndResult } from "../../../src/ops/task/end";
import { HELP_TOPICS, helpText } from "../../../src/ops/task/help-text";
import type { Learning } from "../../../src/ops/task/memory-store";
import {
  renderCheck, renderContext, renderDiff, renderEnd, renderError, renderLearn, renderList, renderRestore, renderStart, renderViolation,
} from "../../../src/ops/task/render";
import { assessRisk } from "../../../src/ops/task/risk";
import type { StartResult } from "../../../src/ops/task/start";
import { noTask } from "../../../src/ops/task/task-errors";
import type { TaskRecord } from "../../../src/ops/task/task-store";
import { type WireResponse, parseWire, renderWire } from "../../../src/ops/task/wire";
import { expectGolden } from "../../helpers/golden";

// Every response shape of the task layer, labeled and compact, from fixed results (the renderer alone).
const NOW = Date.parse("2026-03-01T12:00:00Z");
const SNAP = "sha256:3f2a9c1b41aa00112233445566778899aabbccddeeff00112233445566778899" as const;

const task: TaskRecord = {
  id: "task_7",
  title: "fix auth bug in token refresh",
  files: ["src/auth.ts", "src/auth/new-guard.ts"],
  keywords: ["jwt"],
  created_at: "2026-03-01T11:40:00.000Z",
  state: "active",
  snapshot: { id: SNAP, status: "created", files: 3 },
  base: { git: true, head_oid: "a".repeat(40), absent: [] },
  named: { held: ["src/auth.ts"], missing: ["src/auth/new-guard.ts"] },
  dirty_at_start: 2,
  risk: assessRisk({ title: "fix auth bug in token refresh", keywords: ["jwt"], files: ["src/auth.ts", "src/auth/new-guard.ts"], dirty: 2 }),
  prot: 50,
};

const learning: Learning = {
  id: "learn_0a1b2c3d4e",
  type: "pitfall",
  trigger: "auto-snapshot cooldown logic",
  action: "set cooldown AFTER success, not before the try block",
  created_at: "2026-02-20T09:00:00.000Z",
  source: "learn",
};

const start: StartResult = {
  task,
  snap: "3f2a9c1b41aa",
  learn: [
    { kind: "learning", learning, score: 2, because: ["token"] },
    { kind: "pattern", score: 3, because: ["src/auth.ts"], pattern: { type: "silent_catch", count: 3, first_at: "", last_at: "", files: ["src/auth.ts"], occurrences: [], prevention: "log in catch blocks" } },
  ],
  dirty: { count: 2, paths: ["notes.txt", "src/auth.ts"], against: "git" },
};

const cmd = (c: Partial<CommandResult>): CommandResult => ({
  name: "typecheck", kind: "typecheck", display: "tsc --noEmit -p tsconfig.json", source: "tsconfig.json with node_modules/typescript",
  passed: true, exitCode: 0, errors: 0, warnings: 0, diagnostics: [], outputTail: "", durationMs: 2100, ranAt: "2026-03-01T11:58:00.000Z", tree: SNAP, ...c,
});

const baseCheck: CheckResult = {
  mode: "full",
  task,
  scope: { files: ["src/auth.ts", "src/session.ts"], from: "task" },
  findings: [{ path: "src/session.ts", line: 14, rule: "debug_statement", severity: "warning", message: "left-over console logging or debugger statement" }],
  commands: [
    cmd({ passed: false, exitCode: 2, errors: 2, diagnostics: [
      { path: "src/auth.ts", line: 41, col: 7, severity: "error", message: "TS2322: Type 'number' is not assignable to type 'string'." },
      { path: "src/auth.ts", line: 57, col: 3, severity: "error", message: "TS2304: Cannot find name 'refreshToken'." },
    ] }),
    cmd({ name: "lint", kind: "lint", display: "eslint .", source: "package.json scripts.lint", cached: true, warnings: 1, diagnostics: [{ path: "src/session.ts", line: 9, col: 1, severity: "warning", message: "no-unused-vars: 'x' is assigned a value but never used" }] }),
    cmd({ name: "test", kind: "test", display: "bun test", source: "package.json scripts.test", passed: false, exitCode: 1, errors: 1, diagnostics: [{ path: "test/auth.test.ts", line: 12, col: 21, severity: "error", message: "test failed: refresh > rotates the token: expect(received).toBe(expected)" }] }),
  ],
  plan: { origin: { kind: "head", commit: "b".repeat(40) }, explicit: false, commands: [], patterns: [], drift: ["package.json"], notes: [], pathDirs: [] },
  missingKinds: ["build"],
  impact: null,
  cycles: null,
  docs: null,
  tree: "9e8d7c6b5a41",
  errors: 3,
  warnings: 2,
  status: "fail",
  subsystems: { ts: "fail", lint: "pass", tests: "fail" },
};

const quick: CheckResult = { ...baseCheck, mode: "quick", commands: [], plan: null, missingKinds: [], tree: null, errors: 0, warnings: 1, status: "pass", subsystems: { ts: "skipped", lint: "skipped", tests: "skipped" } };

const impact: CheckResult = {
  ...quick,
  mode: "impact",
  findings: [],
  warnings: 0,
  impact: { dependents: [{ path: "src/api/login.ts", depth: 1 }, { path: "src/server.ts", depth: 2 }, { path: "test/login.test.ts", depth: 2 }], total: 3, tests: ["test/login.test.ts"] },
};

const circular: CheckResult = {
  ...quick,
  mode: "circular",
  findings: [{ path: "src/auth.ts", line: 0, rule: "import_cycle", severity: "error", message: "import cycle src/auth.ts > src/session.ts > src/auth.ts" }],
  cycles: [{ path: ["src/auth.ts", "src/session.ts"], preexisting: false }],
  errors: 1,
  warnings: 0,
  status: "fail",
};

const context: ContextResult = {
  task: { ...task, last_check: { mode: "full", status: "fail", errors: 3, warnings: 2, at: "2026-03-01T11:58:00.000Z" } },
  snap: "3f2a9c1b41aa",
  risk: assessRisk({ title: task.title, keywords: ["jwt"], files: ["src/auth.ts", "src/session.ts"], dirty: 3 }),
  prot: 50,
  dirty: 3,
  learn: [],
  state: {
    changes: [
      { change: { path: "src/auth.ts", status: "modified" }, from: null, to: null },
      { change: { path: "src/session.ts", status: "modified" }, from: null, to: null },
    ],
    fingerprint: { head_oid: "", index_oid: "", status_hash: "" },
    dirtyNow: 3,
  },
  lines: { added: 45, removed: 12, binary: 0 },
};

const noTaskContext: ContextResult = { task: null, snap: null, risk: assessRisk({ title: "", keywords: [], files: [], dirty: 4 }), prot: 0, dirty: 4, learn: [], state: null, lines: null };

const end: EndResult = {
  task: { ...task, state: "ended" },
  outcome: "completed",
  files: 3,
  lines: { added: 45, removed: 12, binary: 0 },
  learnings: [{ ...learning, id: "learn_1", type: "discovery" }, { ...learning, id: "learn_2", type: "discovery" }],
  survey: { patterns_used: 2, pitfalls_avoided: 1, helpfulness: 5, unhelpful_count: 0 },
};

const violation = (count: number) => ({
  record: { type: "silent_catch", count, first_at: "", last_at: "", files: ["src/auth.ts"], occurrences: [], prevention: "Always log in catch blocks" },
  promote: (count < 3 ? "NO" : count === 3 ? "PROMOTED" : "PATTERN") as "NO" | "PROMOTED" | "PATTERN",
  auto: (count >= 5 ? "YES" : "NO") as "NO" | "YES",
  detector: detectorFor("silent_catch"),
});

const entries = Array.from({ length: 12 }, (_, i) => ({
  snap: `${(i + 10).toString(16)}aa${i}bb`.padEnd(12, "0"),
  id: SNAP,
  created_at: new Date(NOW - (i * 7 + 1) * 60_000 * (i > 8 ? 100 : 1)).toISOString(),
  files: 3 + i,
  task: `task_${20 - i}`,
  title: `task number ${20 - i}`,
}));

const restoreFiles = Array.from({ length: 13 }, (_, i) => ({ path: i === 0 ? "src/new file|odd.ts" : `src/mod${i}.ts`, action: (i === 0 ? "delete" : "write") as "delete" | "write" }));

const SHAPES: Record<string, WireResponse> = {
  "S": renderStart(start),
  "S-failed": renderStart({ ...start, snap: null, learn: [], task: { ...task, prot: 0, snapshot: { id: null, status: "failed", files: 0, failure: "PERMISSION_DENIED: src/secret.pem is not readable" } } }),
  "C-full-failed": renderCheck(baseCheck, NOW),
  "C-quick": renderCheck(quick, NOW),
  "C-impact": renderCheck(impact, NOW),
  "C-circular": renderCheck(circular, NOW),
  "X": renderContext(context),
  "X-no-task": renderContext(noTaskContext),
  "E": renderEnd(end),
  "E-blocked-no-survey": renderEnd({ ...end, outcome: "blocked", learnings: [], survey: {} }),
  "L": renderLearn(learning),
  "V-1": renderViolation(violation(1)),
  "V-3": renderViolation(violation(3)),
  "V-5": renderViolation(violation(5)),
  "R-list": renderList({ count: 12, entries: entries.slice(0, 10) }, NOW),
  "R-list-empty": renderList({ count: 0, entries: [] }, NOW),
  "R-restore": renderRestore({ snap: "3f2a9c1b41aa", dryRun: false, files: restoreFiles, basis: "task", conversation: "conv_1772366400000_0a1b2c3d4e5f", minted: true, editIds: [] }),
  "R-restore-dry": renderRestore({ snap: "3f2a9c1b41aa", dryRun: true, files: restoreFiles.slice(0, 2), basis: "task", editIds: [] }),
  "D": renderDiff({ from: "3f2a9c1b41aa", to: "worktree", added: ["src/auth/new-guard.ts"], removed: [], changed: ["src/auth.ts", "src/session.ts"], basis: "task" }),
  "!-no-task": renderError(noTask("task task_9 does not exist in this repository; start one with snap mode \"start\"", { task_id: "task_9" })),
  "!-invalid-mode": renderError(new WorksnapError("INVALID_ARGUMENT", 'check: mode must be one of "quick", "full", not "fast"', { problems: ['mode must be one of "quick", "full", not "fast"'], arg: "mode", not_one_of: ["mode"] })),
};

describe("task wire responses (golden)", () => {
  for (const [name, res] of Object.entries(SHAPES)) {
    for (const compact of [false, true]) {
      test(`${name} ${compact ? "compact" : "labeled"}`, () => {
        const text = renderWire(res, compact);
        // Every golden also parses back under the grammar of its TYPE.
        parseWire(text);
        expectGolden(`task/${name}.${compact ? "compact" : "labeled"}.txt`, `${text}\n`);
      });
    }
  }
  for (const topic of HELP_TOPICS) {
    test(`snap_help ${topic} (plain text)`, () => expectGolden(`task/H-${topic}.txt`, helpText(topic)));
  }
});
