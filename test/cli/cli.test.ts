import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, cli } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";
import type { RepoPath } from "../../src/core/repo-path";
import { closeWorkspace, openWorkspace } from "../../src/ops/workspace";
import { applyChanges } from "../../src/ops/write/write-path";
import pkg from "../../package.json" with { type: "json" };

describe("worksnap CLI", () => {
  test("--version, --help, and exit code 2 for usage errors", () => {
    expect(cli(["--version"]).stdout).toMatch(new RegExp(`^worksnap ${pkg.version.replaceAll(".", "\\.")}\ncommit: .+\ntarget: .+\nnative: (on|off) \\(.+\\)\nstate format: \\d+\n$`));
    expect(cli(["--help"]).stdout).toContain("worksnap snapshot");
    expect(cli(["snapshot", "--help"]).stdout).toContain("create [PATH...]");
    expect(cli(["serve", "--help"]).stdout).toContain("--root");
    expect(cli(["snapshot", "create", "--help"]).code).toBe(0);
    const bad = cli(["snapshot", "create", "--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--bogus");
    expect(cli(["nonsense"]).code).toBe(2);
    expect(cli([]).code).toBe(2);
  });

  test("snapshot create prints the id; --json prints the tool's object; user errors exit 1", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    const plain = cli(["snapshot", "create", "--root", repo.root]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    expect(plain.stderr).toBe("");
    const json = cli(["snapshot", "create", "--root", repo.root, "--json"]).json();
    expect(json.snapshot_id).toBe(plain.stdout.trim());
    expect(json.cache_hint).toBe("immutable");
    const inCwd = cli(["snapshot", "create", "a.txt"], { cwd: repo.root });
    expect(inCwd.code).toBe(0);
    expect(inCwd.stdout).toBe(plain.stdout); // same files, same git state: same id
    const missing = cli(["snapshot", "create", "--root", repo.root, "missing.txt"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("missing.txt");
    const missingJson = cli(["snapshot", "create", "--root", repo.root, "missing.txt", "--json"]);
    expect(missingJson.json().error.code).toBe("NOT_FOUND");
    expect(cli(["snapshot", "info", "--root", repo.root, plain.stdout.trim().slice(0, 16)]).stdout).toContain("files       1");
    expect(cli(["snapshot", "log", "--root", repo.root]).stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(cli(["snapshot", "file", "--root", repo.root, "a.txt", "--snapshot", plain.stdout.trim()]).stdout).toBe("a\n");
    expect(cli(["snapshot", "list", "--root", repo.root]).stdout).toContain("a.txt");
    expect(cli(["snapshot", "create", "--root", "/nonexistent/dir"]).code).toBe(1);
  });

  test("the binary runs with no node_modules beside it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-standalone-"));
    try {
      const bin = join(dir, "worksnap");
      copyFileSync(BINARY, bin);
      Bun.spawnSync(["chmod", "+x", bin]);
      await using repo = await tmpRepo();
      repo.write("x.txt", "x");
      const r = Bun.spawnSync([bin, "snapshot", "create", "--root", repo.root], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
      expect(r.exitCode).toBe(0);
      expect(r.stdout.toString()).toMatch(/^sha256:/);
      const v = Bun.spawnSync([bin, "--version"], { cwd: dir });
      expect(v.stdout.toString()).toContain("worksnap");
      // the native module travels inside the executable
      if (process.env.WORKSNAP_BUILD_NATIVE !== "0" && process.env.WORKSNAP_NATIVE !== "0") expect(v.stdout.toString()).toMatch(/native: on \(sha256/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("invoked as mcpdiff it runs the history commands", () => {
    using mcpdiff = asMcpdiff();
    const r = mcpdiff.run(["--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toContain("reject");
  });
});

/** A copy of the binary named mcpdiff, in a directory of its own, removed on dispose. */
function asMcpdiff(): { run(args: string[]): { exitCode: number; stdout: Buffer } } & Disposable {
  const dir = mkdtempSync(join(tmpdir(), "ws-mcpdiff-"));
  const link = join(dir, "mcpdiff");
  copyFileSync(BINARY, link);
  Bun.spawnSync(["chmod", "+x", link]);
  return {
    run: (args) => {
      const r = Bun.spawnSync([link, ...args], { cwd: dir, stdout: "pipe" });
      return { exitCode: r.exitCode, stdout: r.stdout };
    },
    [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe("--help and --version on every subcommand", () => {
  const VERSION = new RegExp(`^worksnap ${pkg.version.replaceAll(".", "\\.")}\n`);
  const SUBCOMMANDS = [
    ["serve"],
    ["gc"],
    ...["create", "info", "log", "list", "file", "grep", "changes", "diff", "export", "import"].map((s) => ["snapshot", s]),
    ...["review", "status", "show", "accept", "reject", "recover", "cleanup"].map((s) => ["history", s]),
  ];

  test("every command and subcommand answers --version and --help (exit 0, nothing on stderr)", async () => {
    for (const cmd of [["snapshot"], ["history"], ...SUBCOMMANDS]) {
      const v = cli([...cmd, "--version"]);
      expect([cmd.join(" "), v.code, v.stderr]).toEqual([cmd.join(" "), 0, ""]);
      expect(v.stdout).toMatch(VERSION);
      for (const flag of ["--help", "-h"]) {
        const h = cli([...cmd, flag]);
        expect([cmd.join(" "), flag, h.code, h.stderr]).toEqual([cmd.join(" "), flag, 0, ""]);
        expect(h.stdout).toContain(`worksnap ${cmd[0]}`);
      }
    }
    // after --, --help is an argument like any other: grep searches for it (in a repository of its own: a grep
    // leaves worksnap's state beside what it searched)
    await using repo = await tmpRepo();
    repo.write("usage.txt", "run it with --help\nor without\n");
    repo.commit();
    const r = cli(["snapshot", "grep", "--json", "--root", repo.root, "--", "--help"]);
    expect(r.code).toBe(0);
    expect(r.json().matches.map((m: { path: string; line: number }) => [m.path, m.line])).toEqual([["usage.txt", 1]]);
  });

  test("under the mcpdiff name too", () => {
    using mcpdiff = asMcpdiff();
    for (const args of [["--version"], ["-V"], ["status", "--version"], ["reject", "--version"]]) {
      const r = mcpdiff.run(args);
      expect([args.join(" "), r.exitCode]).toEqual([args.join(" "), 0]);
      expect(r.stdout.toString()).toMatch(VERSION);
    }
    for (const args of [["--help"], ["status", "--help"], ["show", "-h"], ["help"]]) {
      const r = mcpdiff.run(args);
      expect([args.join(" "), r.exitCode]).toEqual([args.join(" "), 0]);
      expect(r.stdout.toString()).toContain("mcpdiff <command>");
    }
  });
});

describe("regressions", () => {
  test("regression (output cut at 64 KiB): a --json answer larger than a pipe holds arrives whole, even to a reader that starts late", async () => {
    await using repo = await tmpRepo();
    // 400 recorded edits: `history status --json` answers about 180 KB.
    const ws = openWorkspace(repo.root);
    try {
      const changes = Array.from({ length: 400 }, (_, i) => ({ kind: "write" as const, path: `f${i}.txt` as RepoPath, bytes: new TextEncoder().encode(`${i}\n`) }));
      await applyChanges(ws, changes, { recorder: ws.recorder, conversationId: "conv_1_big", toolName: "write_file" });
    } finally {
      closeWorkspace(ws);
    }
    // Through a shell pipe (64 KiB) whose reader starts half a second late, as `worksnap ... | slow-consumer` would.
    const q = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
    const proc = Bun.spawn(["sh", "-c", `${q(BINARY)} history status --json --root ${q(repo.root)} | (sleep 0.5; cat)`], { stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(out.length).toBeGreaterThan(150_000);
    expect(JSON.parse(out).entries).toHaveLength(400);
  });

  test("hash workers resolve inside the compiled binary (large captures, any cwd)", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 2600; i++) repo.write(`d${i % 7}/f${i}.txt`, `${i}\n`);
    repo.commit();
    for (let i = 0; i < 2100; i++) repo.write(`u/f${i}.txt`, `u${i}\n`);
    const r = cli(["snapshot", "create", "--root", repo.root, "--json"], { cwd: "/" });
    expect(r.stderr).toBe("");
    expect(r.json().manifest_stats.files).toBe(4700);
    const again = cli(["snapshot", "create", "--root", repo.root, "--json"], { cwd: "/" }).json();
    expect(again.snapshot_id).toBe(r.json().snapshot_id);
  });
});

describe("what a capture leaves out", () => {
  test("regression (skipped silently): names that are not UTF-8 are named on stderr as skipped; --json counts them", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    writeFileSync(Buffer.concat([Buffer.from(`${repo.root}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from(".txt")]), "x\n");
    const r = cli(["snapshot", "create", "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    expect(r.stderr).toBe("worksnap: skipped 1 path whose name is not UTF-8 (snapshots hold UTF-8 names only)\n");
    const json = cli(["snapshot", "create", "--root", repo.root, "--json"]);
    expect(json.json().skipped.non_utf8).toBe(1);
    expect(json.stderr).toBe("");
    await using clean = await tmpRepo({ git: false });
    clean.write("a.txt", "a\n");
    expect(cli(["snapshot", "create", "--root", clean.root]).stderr).toBe(""); // a capture that meets none says nothing
  });
});

describe("progress on a terminal", () => {
  test("a long capture draws a progress bar on stderr when stderr is a TTY; a quick one draws none", async () => {
    await using big = await tmpRepo();
    for (let i = 0; i < 2_000; i++) big.write(`d${i % 50}/f${i}.txt`, `${"x".repeat(i % 400)}\n`);
    await using small = await tmpRepo();
    small.write("a.txt", "a");
    // the delay is taken away for the long capture: how long the files take to hash depends on the machine
    // (regression: on a fast run the hashing ended inside the default 300 ms and no bar was drawn)
    const viaTty = (root: string, after?: string) =>
      Bun.spawnSync(["script", "-qec", `${BINARY} snapshot create --root '${root}'`, "/dev/null"], {
        env: { ...process.env, NO_COLOR: "1", ...(after === undefined ? {} : { WORKSNAP_PROGRESS_AFTER_MS: after }) },
      }).stdout.toString();
    expect(viaTty(big.root, "0")).toMatch(/hashing \[[#.]+\] \d+\/2000/);
    expect(viaTty(small.root, "0")).not.toContain("hashing"); // under 500 files: never
    expect(viaTty(small.root)).not.toContain("hashing");
    expect(cli(["snapshot", "create", "--root", big.root]).stderr).toBe("");
  });
});
