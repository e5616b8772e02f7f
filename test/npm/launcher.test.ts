import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeNpmPackages } from "../../scripts/release/npm-packages";
import { HOST_TARGET, isTarget } from "../../scripts/targets";
import { BINARY, cli, requireBinary } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";
import pkg from "../../package.json" with { type: "json" };

const platform = require("../../npm/worksnap/lib/platform.js") as {
  RELEASED: string[];
  platformPackage(platform: string, arch: string): { name?: string; target?: string; error?: string };
  resolveBinary(o?: { env?: Record<string, string>; platform?: string; arch?: string; resolve?: (id: string) => string; musl?: boolean }): { path?: string; error?: string };
};

/** An installed-looking project: node_modules/worksnap and node_modules/@worksnap/<host> from the generated packages. */
function project(dir: string, withPlatform = true): string {
  if (!isTarget(HOST_TARGET)) throw new Error(`this machine (${HOST_TARGET}) is not a released target`);
  const generated = join(dir, "generated");
  const dirs = writeNpmPackages(generated, pkg.version, { [HOST_TARGET]: requireBinary() });
  mkdirSync(join(dir, "node_modules", "@worksnap"), { recursive: true });
  renameSync(dirs.main, join(dir, "node_modules", "worksnap"));
  if (withPlatform) renameSync(dirs.platforms[HOST_TARGET]!, join(dir, "node_modules", "@worksnap", HOST_TARGET));
  rmSync(generated, { recursive: true, force: true });
  return join(dir, "node_modules", "worksnap", "bin", "worksnap.js");
}

function node(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = Bun.spawnSync(["node", ...args], { cwd: opts.cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, signal: r.signalCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** The children of a process (Linux /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
}

describe("npm launcher: platform resolution", () => {
  test("each released platform maps to its package; others get a reason", () => {
    expect(platform.RELEASED).toEqual(["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"]);
    for (const [os, arch] of [["linux", "x64"], ["linux", "arm64"], ["darwin", "x64"], ["darwin", "arm64"]]) {
      expect(platform.platformPackage(os!, arch!)).toEqual({ name: `@worksnap/${os}-${arch}`, target: `${os}-${arch}` });
    }
    expect(platform.platformPackage("win32", "x64").error).toContain("does not run on Windows");
    expect(platform.platformPackage("win32", "x64").error).toContain("WSL");
    expect(platform.platformPackage("freebsd", "x64").error).toBe("worksnap has no executable for freebsd-x64; it is released for linux-x64, linux-arm64, darwin-x64, darwin-arm64.");
    expect(platform.platformPackage("linux", "ia32").error).toContain("no executable for linux-ia32");
  });

  test("a platform package that is not installed is explained: omitted optional dependencies, or musl", () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module"), { code: "MODULE_NOT_FOUND" });
    };
    const glibc = platform.resolveBinary({ env: {}, platform: "linux", arch: "arm64", resolve: missing, musl: false });
    expect(glibc.error).toContain("@worksnap/linux-arm64");
    expect(glibc.error).toContain("--omit=optional");
    const musl = platform.resolveBinary({ env: {}, platform: "linux", arch: "x64", resolve: missing, musl: true });
    expect(musl.error).toContain("need glibc");
    const mac = platform.resolveBinary({ env: {}, platform: "darwin", arch: "arm64", resolve: missing, musl: true });
    expect(mac.error).toContain("the package @worksnap/darwin-arm64,"); // musl only matters on Linux
    expect(platform.resolveBinary({ env: { WORKSNAP_BINARY: "/nonexistent/worksnap" } }).error).toContain("does not exist");
    expect(platform.resolveBinary({ env: { WORKSNAP_BINARY: BINARY } }).path).toBe(BINARY);
  });
});

describe("npm launcher: runs the executable as if it were run directly", () => {
  test("output, exit codes and the mcpdiff name pass through", async () => {
    await using dir = tmpDir("ws-npm-");
    const launcher = project(dir.path);
    const v = node([launcher, "--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toBe(cli(["--version"]).stdout);
    const missing = node([launcher, "snapshot", "create", "--root", "/nonexistent/dir"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("/nonexistent/dir");
    expect(node([launcher, "snapshot", "create", "--bogus"]).code).toBe(2);
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    const created = node([launcher, "snapshot", "create", "--root", repo.root]);
    expect(created.stdout).toBe(cli(["snapshot", "create", "--root", repo.root]).stdout);
    const mcpdiff = node([join(dir.path, "node_modules", "worksnap", "bin", "mcpdiff.js"), "status", "--root", repo.root]);
    expect(mcpdiff.code).toBe(0);
    expect(mcpdiff.stdout).toBe(cli(["history", "status", "--root", repo.root]).stdout);
  });

  test("an MCP host that starts the launcher talks to the server through it", async () => {
    await using dir = tmpDir("ws-npm-");
    const launcher = project(dir.path);
    await using repo = await tmpRepo();
    repo.write("hello.txt", "hello\n");
    repo.commit();
    const client = new Client({ name: "worksnap-test", version: "0.0.0" });
    await client.connect(new StdioClientTransport({ command: "node", args: [launcher, "serve", "--root", repo.root], stderr: "pipe" }));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "worksnap", version: pkg.version });
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("snapshot_create");
      const r: any = await client.callTool({ name: "snapshot_file", arguments: { mode: "worktree", path: "hello.txt" } });
      expect(r.structuredContent.content).toBe("hello\n");
    } finally {
      await client.close();
    }
  });

  test("a signal to the launcher reaches the executable, and the launcher dies of it too", async () => {
    await using dir = tmpDir("ws-npm-");
    const launcher = project(dir.path);
    await using repo = await tmpRepo();
    const proc = Bun.spawn(["node", launcher, "serve", "--root", repo.root], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const reader = proc.stderr.getReader();
    let stderr = "";
    while (!stderr.includes("serving")) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += new TextDecoder().decode(value);
    }
    const [child] = childrenOf(proc.pid);
    expect(child).toBeGreaterThan(0);
    expect(readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0")[0]).toEndWith("/bin/worksnap");
    proc.kill("SIGTERM");
    await proc.exited;
    expect(proc.signalCode).toBe("SIGTERM");
    for (let i = 0; i < 100 && existsSync(`/proc/${child}`); i++) await Bun.sleep(20);
    expect(existsSync(`/proc/${child}`)).toBe(false);
  });

  test("without its platform package it says which package is missing and why", async () => {
    await using dir = tmpDir("ws-npm-");
    const launcher = project(dir.path, false);
    const r = node([launcher, "--version"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the package @worksnap/${HOST_TARGET}`);
    expect(r.stderr).toContain("is not installed");
  });
});
