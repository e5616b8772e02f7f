import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { BINARY, cli, requireBinary } from "../helpers/binary";
import { runGit, tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "ci-snapshot.sh");
const ACTION = join(import.meta.dir, "..", "..", "action.yml");

/** A GitHub-like job: RUNNER_TEMP, and the files GITHUB_OUTPUT and GITHUB_STEP_SUMMARY name. */
function job(dir: string) {
  const runnerTemp = join(dir, "runner-temp");
  mkdirSync(runnerTemp, { recursive: true });
  const env = { RUNNER_TEMP: runnerTemp, GITHUB_OUTPUT: join(dir, "output"), GITHUB_STEP_SUMMARY: join(dir, "summary.md") };
  const outputs = () => {
    const o: Record<string, string> = {};
    if (!existsSync(env.GITHUB_OUTPUT)) return o;
    for (const line of readFileSync(env.GITHUB_OUTPUT, "utf8").split("\n").filter(Boolean)) o[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    return o;
  };
  const reset = () => {
    rmSync(env.GITHUB_OUTPUT, { force: true });
    rmSync(env.GITHUB_STEP_SUMMARY, { force: true });
  };
  return { env, outputs, reset, summary: () => readFileSync(env.GITHUB_STEP_SUMMARY, "utf8") };
}

/** Runs the script as a job step would (async: a test may serve downloads from this process). */
async function step(mode: string, env: Record<string, string>, cwd?: string) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("WORKSNAP_") && !k.startsWith("GITHUB_"))) as Record<string, string>;
  const p = Bun.spawn(["bash", SCRIPT, mode], { cwd, env: { ...clean, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

async function repoWithFiles(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  repo.write("src/app.ts", "export const app = 1;\n");
  repo.write("README.md", "# app\n");
  repo.write("old.txt", "to be deleted\n");
  repo.write("run.sh", "#!/bin/sh\n");
  repo.commit();
  return repo;
}

describe("scripts/ci-snapshot.sh (the GitHub Action's step)", () => {
  test("pre snapshots the tree and exports its bundle; post reports every change in the job summary and outputs", async () => {
    await using repo = await repoWithFiles();
    await using dir = tmpDir("ws-ci-");
    const j = job(dir.path);
    const pre = await step("pre", { ...j.env, WORKSNAP_BINARY: requireBinary(), WORKSNAP_ROOT: repo.root, WORKSNAP_EXPORT: "true" });
    expect(pre.code).toBe(0);
    const o = j.outputs();
    expect(o.snapshot_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    // the same tree in the same git state: the id a person gets from the CLI
    expect(o.snapshot_id).toBe(cli(["snapshot", "create", "--root", repo.root]).stdout.trim());
    expect(o.binary).toBe(BINARY);
    const exported = cli(["snapshot", "export", o.snapshot_id!, "--json", "-o", join(dir.path, "again.tar"), "--root", repo.root]).json();
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(o.bundle!)).digest("hex")).toBe(exported.sha256);

    // the job's main step
    repo.write("src/app.ts", "export const app = 2;\n");
    rmSync(join(repo.root, "old.txt"));
    repo.write("generated/out.md", "```\nnew `file`\n");
    chmodSync(join(repo.root, "run.sh"), 0o755);

    j.reset();
    const post = await step("post", { ...j.env, WORKSNAP_BINARY: requireBinary(), WORKSNAP_ROOT: repo.root });
    expect(post.code).toBe(0);
    expect(j.outputs()).toMatchObject({ snapshot_id: o.snapshot_id, changed: "4" });
    const summary = j.summary();
    expect(summary).toContain(`Snapshot \`${o.snapshot_id}\``);
    expect(summary).toContain("| 1 | 1 | 1 | 1 | 4 |");
    expect(summary).toContain("- added `generated/out.md`");
    expect(summary).toContain("- deleted `old.txt`");
    expect(summary).toContain("- modified `src/app.ts`");
    expect(summary).toContain("- mode_changed `run.sh` (100644 -> 100755)");
    expect(summary).toContain("-export const app = 1;\n+export const app = 2;\n");
    // the diff saved in `diff` is the whole diff, which git applies to the snapshot's tree to give the work tree
    const diff = readFileSync(j.outputs().diff!, "utf8");
    expect(diff).toBe(cli(["snapshot", "diff", o.snapshot_id!, "--root", repo.root]).stdout);
    runGit(repo.root, ["stash", "-u", "-q"]);
    runGit(repo.root, ["apply", j.outputs().diff!]);
    expect(readFileSync(join(repo.root, "generated/out.md"), "utf8")).toBe("```\nnew `file`\n");
  });

  test("post with no change says so; fail-on-changes fails the step only when something changed", async () => {
    await using repo = await repoWithFiles();
    await using dir = tmpDir("ws-ci-");
    const j = job(dir.path);
    const env = { ...j.env, WORKSNAP_BINARY: requireBinary(), WORKSNAP_ROOT: repo.root, WORKSNAP_FAIL_ON_CHANGES: "true" };
    expect((await step("pre", env)).code).toBe(0);
    j.reset();
    const quiet = await step("post", env);
    expect(quiet.code).toBe(0);
    expect(j.summary()).toContain("No file changed.");
    expect(j.outputs().changed).toBe("0");
    repo.write("README.md", "# changed by the tests\n");
    j.reset();
    const loud = await step("post", env);
    expect(loud.code).toBe(1);
    expect(loud.stderr).toContain("1 files changed since the snapshot, and fail-on-changes is set");
    expect(j.summary()).toContain("- modified `README.md`");
  });

  test("a large diff is cut in the summary at a line boundary and says where the rest is", async () => {
    await using repo = await repoWithFiles();
    await using dir = tmpDir("ws-ci-");
    const j = job(dir.path);
    const env = { ...j.env, WORKSNAP_BINARY: requireBinary(), WORKSNAP_ROOT: repo.root, WORKSNAP_DIFF_LIMIT: "300" };
    expect((await step("pre", env)).code).toBe(0);
    repo.write("big.txt", Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n") + "\n");
    j.reset();
    expect((await step("post", env)).code).toBe(0);
    const summary = j.summary();
    const fenced = summary.slice(summary.indexOf("```diff\n") + 8, summary.lastIndexOf("```"));
    expect(fenced.length).toBeLessThanOrEqual(300);
    expect(fenced.endsWith("\n")).toBe(true);
    expect(fenced.split("\n").filter(Boolean).every((l) => /^(diff|new|---|\+\+\+|@@|\+)/.test(l))).toBe(true);
    expect(summary).toContain("The diff is cut at 300 of");
  });

  test("outside GitHub it prints outputs and the summary on stdout; post without a snapshot is refused", async () => {
    await using repo = await repoWithFiles();
    await using dir = tmpDir("ws-ci-");
    const env = { TMPDIR: dir.path, WORKSNAP_BINARY: requireBinary() };
    const pre = await step("pre", env, repo.root);
    expect(pre.code).toBe(0);
    expect(pre.stdout).toMatch(/^snapshot_id=sha256:[0-9a-f]{64}\nbundle=\nbinary=/);
    repo.write("README.md", "# changed\n");
    const post = await step("post", env, repo.root);
    expect(post.stdout).toContain("### worksnap: changes since the pre-step snapshot");
    expect(post.stdout).toContain("changed=1\n");
    await using other = await repoWithFiles();
    const orphan = await step("post", env, other.root);
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toContain("no snapshot to compare with: run the pre step first");
    expect((await step("sideways", env)).code).toBe(1);
  });

  test("without a binary it downloads the release executable and runs it only when SHA256SUMS matches", async () => {
    await using repo = await repoWithFiles();
    await using dir = tmpDir("ws-ci-");
    const asset = `worksnap-${process.platform}-${process.arch === "x64" ? "x64" : "arm64"}`;
    const bytes = readFileSync(requireBinary());
    const good = `${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}  ${asset}\n`;
    let sums = `${"0".repeat(64)}  worksnap-other\n${good}`;
    const served: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        served.push(path);
        if (path === "/v9.9.9/SHA256SUMS") return new Response(sums);
        if (path === `/v9.9.9/${asset}`) return new Response(bytes);
        return new Response("not found", { status: 404 });
      },
    });
    try {
      const j = job(dir.path);
      const env = { ...j.env, WORKSNAP_ROOT: repo.root, WORKSNAP_RELEASE_URL: `${server.url.origin}/v9.9.9` };
      const pre = await step("pre", env);
      expect(pre.code).toBe(0);
      expect(served).toEqual(["/v9.9.9/SHA256SUMS", `/v9.9.9/${asset}`]);
      const downloaded = j.outputs().binary!;
      expect(downloaded).toEndWith(`/bin/${asset}`);
      expect(j.outputs().snapshot_id).toBe(cli(["snapshot", "create", "--root", repo.root]).stdout.trim());
      // post reuses the executable pre downloaded
      j.reset();
      expect((await step("post", env)).code).toBe(0);
      expect(served).toHaveLength(2);

      sums = `${"1".repeat(64)}  ${asset}\n`;
      await using fresh = await repoWithFiles();
      const bad = await step("pre", { ...job(join(dir.path, "second")).env, WORKSNAP_ROOT: fresh.root, WORKSNAP_RELEASE_URL: `${server.url.origin}/v9.9.9` });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(`${asset} does not match its checksum in SHA256SUMS; it was not run`);
      expect(existsSync(join(fresh.root, ".mcp"))).toBe(false);
    } finally {
      server.stop(true);
    }
  });

  test("action.yml passes every input to the script, which reads each one", () => {
    const action = Bun.YAML.parse(readFileSync(ACTION, "utf8")) as any;
    const script = readFileSync(SCRIPT, "utf8");
    expect(action.runs.using).toBe("composite");
    const env = action.runs.steps[0].env as Record<string, string>;
    expect(action.runs.steps[1].with.name).toBe("${{ inputs.artifact-name }}");
    for (const input of Object.keys(action.inputs).filter((i) => i !== "artifact-name")) {
      const name = `WORKSNAP_${input.toUpperCase().replace(/-/g, "_")}`;
      expect({ input, env: env[name] }).toEqual({ input, env: `\${{ inputs.${input} }}` });
      if (input !== "mode") expect({ input, read: script.includes(`\${${name}`) }).toEqual({ input, read: true });
    }
    for (const out of Object.keys(action.outputs)) expect(script).toContain(`output ${out} `);
  });
});
