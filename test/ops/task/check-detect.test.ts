import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../../src/core/errors";
import { loadCheckPlan } from "../../../src/ops/task/check-detect";
import { runCheck } from "../../../src/ops/task/check";
import { startTask } from "../../../src/ops/task/start";
import { tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

const ROOT = join(import.meta.dir, "..", "..", "..");
const summary = (plan: Awaited<ReturnType<typeof loadCheckPlan>>) => plan.commands.map((c) => [c.name, c.display, c.source]);

describe("check commands come from the committed configuration", () => {
  test("package.json scripts at HEAD are what runs; an uncommitted edit to them is reported and not used", async () => {
    await using repo = await tmpRepo();
    repo.write("package.json", JSON.stringify({ scripts: { test: "echo committed-test; exit 0", lint: "exit 0", typecheck: "exit 0", build: "exit 0" } }));
    repo.commit();
    repo.write("package.json", JSON.stringify({ scripts: { test: "echo agent-edit; exit 1" } }));
    using ws = wsOf(repo);
    const plan = await loadCheckPlan(ws);
    expect(plan.origin).toEqual({ kind: "head", commit: repo.git("rev-parse", "HEAD").trim() });
    expect(summary(plan)).toEqual([
      ["typecheck", "exit 0", "package.json scripts.typecheck"],
      ["lint", "exit 0", "package.json scripts.lint"],
      ["build", "exit 0", "package.json scripts.build"],
      ["test", "echo committed-test; exit 0", "package.json scripts.test"],
    ]);
    expect(plan.drift).toEqual(["package.json"]);
    await startTask(ws, { task: "t" });
    const r = await runCheck(ws, { mode: "test" });
    expect(r.status).toBe("pass");
    expect(r.commands[0]?.display).toBe("echo committed-test; exit 0");
  });

  test("worksnap.json checks replace detection; a Makefile recipe runs from its committed version", async () => {
    await using repo = await tmpRepo();
    repo.write("package.json", JSON.stringify({ scripts: { test: "exit 1" } }));
    repo.write("worksnap.json", JSON.stringify({ checks: { test: ["exit 0", { run: ["true"], timeout: 5 }], lint: { run: "make lint" } } }));
    repo.write("Makefile", "lint:\n\t@echo committed recipe\n");
    repo.commit();
    repo.write("Makefile", "lint:\n\t@exit 1\n");
    using ws = wsOf(repo);
    const plan = await loadCheckPlan(ws);
    expect(plan.explicit).toBe(true);
    // Cheap kinds run first, whatever the order in the file.
    expect(summary(plan)).toEqual([
      ["lint", "make lint", "worksnap.json"],
      ["test:exit", "exit 0", "worksnap.json"],
      ["test:true", "true", "worksnap.json"],
    ]);
    expect(plan.commands[2]?.timeoutMs).toBe(5000);
    // Without worksnap.json, the Makefile target is detected and run from HEAD through stdin.
    repo.git("rm", "-q", "worksnap.json", "package.json");
    repo.write("Makefile", "lint:\n\t@echo committed recipe\n");
    repo.commit("no config");
    repo.write("Makefile", "lint:\n\t@exit 1\n");
    const detected = await loadCheckPlan(ws);
    expect(summary(detected)).toEqual([["lint", "make lint", "Makefile target lint"]]);
    await startTask(ws, { task: "t" });
    const r = await runCheck(ws, { mode: "full" });
    expect(r.commands.map((c) => [c.name, c.passed, c.outputTail])).toEqual([["lint", true, "committed recipe\n"]]);
  });

  test("an invalid worksnap.json is CONFIG_INVALID, naming where", async () => {
    await using repo = await tmpRepo();
    repo.write("worksnap.json", JSON.stringify({ checks: { tests: "bun test" } }));
    repo.commit();
    using ws = wsOf(repo);
    let err: unknown;
    try {
      await loadCheckPlan(ws);
    } catch (e) {
      err = e;
    }
    expect((err as WorksnapError).details).toMatchObject({ wire_code: "CONFIG_INVALID", where: "checks.tests" });
  });

  test("detection: tsconfig with the project's own TypeScript, Cargo, Go, Python tools where configured", async () => {
    await using repo = await tmpRepo();
    repo.write("tsconfig.json", "{}");
    repo.write("Cargo.toml", '[package]\nname = "x"\nversion = "0.1.0"\n');
    repo.write("go.mod", "module example.com/m\n\ngo 1.21\n");
    repo.write("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n");
    repo.write(".gitignore", "node_modules\n");
    repo.commit();
    mkdirSync(join(repo.root, "node_modules"));
    symlinkSync(join(ROOT, "node_modules", "typescript"), join(repo.root, "node_modules", "typescript"));
    using ws = wsOf(repo);
    const plan = await loadCheckPlan(ws);
    const has = (tool: string) => Bun.which(tool) !== null;
    const expected: string[] = ["typecheck:tsc --noEmit -p tsconfig.json"];
    if (has("cargo")) expected.push("typecheck:cargo check");
    if (has("cargo") && has("cargo-clippy")) expected.push("lint:cargo clippy");
    if (has("go")) expected.push("lint:go vet ./...");
    if (has("cargo")) expected.push("build:cargo build");
    if (has("go")) expected.push("build:go build ./...");
    if (has("cargo")) expected.push("test:cargo test");
    if (has("go")) expected.push("test:go test ./...");
    if (has("pytest")) expected.push("test:pytest -q");
    expect(plan.commands.map((c) => `${c.kind}:${c.display}`)).toEqual(expected);
    if (!has("go")) expect(plan.notes).toContain("go.mod is committed but go is not on PATH");
  });

  test("outside git the work tree's configuration is used and said to be; before the first commit nothing is", async () => {
    await using plain = await tmpRepo({ git: false });
    plain.write("package.json", JSON.stringify({ scripts: { test: "exit 0" } }));
    using ws = wsOf(plain);
    const plan = await loadCheckPlan(ws);
    expect(plan.origin).toEqual({ kind: "worktree" });
    expect(summary(plan)).toEqual([["test", "exit 0", "package.json scripts.test"]]);

    await using fresh = await tmpRepo();
    writeFileSync(join(fresh.root, "package.json"), JSON.stringify({ scripts: { test: "exit 0" } }));
    using ws2 = wsOf(fresh);
    const none = await loadCheckPlan(ws2);
    expect(none.origin).toEqual({ kind: "no-commit" });
    expect(none.commands).toEqual([]);
    expect(none.drift).toEqual(["package.json"]);
  });
});
