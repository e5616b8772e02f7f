import { describe, expect, test } from "bun:test";
import { endTask } from "../../../src/ops/task/end";
import { learn, reportViolation } from "../../../src/ops/task/learn";
import { loadLearnings, loadViolations } from "../../../src/ops/task/memory-store";
import { assessRisk } from "../../../src/ops/task/risk";
import { startTask } from "../../../src/ops/task/start";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";
import { wireCodeOf } from "./helpers";

describe("learnings and violations", () => {
  test("violations count per type across restarts: 3 promotes, 5 marks for automation (spec thresholds)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.ts", "a\n");
    repo.commit();
    const seen: [number, string, string][] = [];
    for (let i = 1; i <= 6; i++) {
      using ws = wsOf(repo); // a fresh workspace each time, as after a restart
      const type = i % 2 === 0 ? "Silent-Catch" : "silent catch";
      const r = await reportViolation(ws, { type, description: `swallowed #${i}`, file: "a.ts", prevention: i === 6 ? "log it" : undefined });
      seen.push([r.record.count, r.promote, r.auto]);
    }
    expect(seen).toEqual([
      [1, "NO", "NO"],
      [2, "NO", "NO"],
      [3, "PROMOTED", "NO"],
      [4, "PATTERN", "NO"],
      [5, "PATTERN", "YES"],
      [6, "PATTERN", "YES"],
    ]);
    using ws = wsOf(repo);
    const stored = loadViolations(ws).silent_catch!;
    expect(stored).toMatchObject({ count: 6, files: ["a.ts"], prevention: "log it" });
    expect(stored.promoted_at).toBe(stored.occurrences[2]!.at);
    expect(stored.automation_at).toBe(stored.occurrences[4]!.at);
    expect(await wireCodeOf(reportViolation(ws, { type: "x", description: "d", file: "../etc/passwd" }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(reportViolation(ws, { type: "x", description: "d", taskId: "task_9" }))).toBe("NO_TASK");
    expect(await wireCodeOf(reportViolation(ws, { type: "no|pipes", description: "d" }))).toBe("VALIDATION_FAILED");
    expect(await wireCodeOf(reportViolation(ws, { type: "x", description: "   " }))).toBe("VALIDATION_FAILED");
    expect(Object.keys(loadViolations(ws))).toEqual(["silent_catch"]);
  });

  test("task starts show the learnings and patterns that match their words or files; a team's committed learnings count too", async () => {
    await using repo = await tmpRepo();
    repo.write("src/billing/invoice.ts", "export {};\n");
    repo.write(".worksnap/learnings.jsonl", `${JSON.stringify({ type: "workflow", trigger: "invoice rounding", action: "round per line, not per total" })}\n`);
    repo.commit();
    // An uncommitted edit to the team file is not read.
    repo.write(".worksnap/learnings.jsonl", `${JSON.stringify({ type: "workflow", trigger: "invoice hack", action: "agent-written" })}\n`);
    using ws = wsOf(repo);
    const t1 = (await startTask(ws, { task: "first pass", files: ["src/billing/invoice.ts"] })).task;
    const l = await learn(ws, { trigger: "currency conversion", action: "use integer cents", type: "pitfall" });
    expect(l.learning).toMatchObject({ task_id: t1.id, files: ["src/billing/invoice.ts"], source: "learn" });
    await endTask(ws, { taskId: t1.id });
    // No active task now: this one is tied to no file, and shares no word with the next task.
    await learn(ws, { trigger: "docker build cache", action: "copy lockfile first", type: "efficiency" });
    for (let i = 0; i < 3; i++) await reportViolation(ws, { type: "float_money", description: "used floats for money", file: "src/billing/invoice.ts", prevention: "integer cents" });
    const r = await startTask(ws, { task: "fix invoice totals", keywords: ["currency"] });
    const labels = r.learn.map((m) => (m.kind === "learning" ? `${m.learning.source}:${m.learning.trigger}` : `pattern:${m.pattern.type}`));
    expect(labels.sort()).toEqual(["learn:currency conversion", "pattern:float_money", "team:invoice rounding"]);
    expect(loadLearnings(ws).map((x) => x.trigger)).toEqual(["currency conversion", "docker build cache"]);
    expect(await wireCodeOf(learn(ws, { trigger: "", action: "a", type: "pattern" }))).toBe("VALIDATION_FAILED");
  });
});

describe("risk rules", () => {
  test("areas, file counts and dirty files add up to L, M or H", () => {
    expect(assessRisk({ title: "fix auth bug", keywords: ["jwt"], files: ["auth.ts"], dirty: 2 })).toMatchObject({ level: "M", score: 3 });
    expect(assessRisk({ title: "rename a helper", keywords: [], files: ["src/util.ts"], dirty: 0 })).toMatchObject({ level: "L", score: 0 });
    const h = assessRisk({ title: "bump deps", keywords: [], files: ["package-lock.json", ".github/workflows/ci.yml", "src/paymentService.ts"], dirty: 12 });
    expect(h.reasons.map((r) => `${r.rule}+${r.points}`)).toEqual(["payment+2", "lockfiles+2", "ci+2", "dirty+2"]);
    expect(h.level).toBe("H");
    expect(assessRisk({ title: "tidy", keywords: [], files: Array.from({ length: 15 }, (_, i) => `src/m${i}.ts`), dirty: 0 })).toMatchObject({ level: "M", score: 2 });
    expect(assessRisk({ title: "add db migration", keywords: [], files: [], dirty: 0 }).reasons[0]).toMatchObject({ rule: "migrations", because: '"migration"' });
    // Words are whole words: "author" is not auth, "tokenizer" is not a token.
    expect(assessRisk({ title: "author list", keywords: [], files: ["src/tokenizer.ts"], dirty: 0 }).level).toBe("L");
  });
});
