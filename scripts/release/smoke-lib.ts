// What the release smoke tests share (smoke.ts, npm-e2e.ts): running a target's executable here, a small
// repository, and an MCP handshake through the SDK's own client.
import { chmodSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { HOST_TARGET, type Target } from "../targets.ts";
import { ARM64_SYSROOT } from "./prereqs.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const TOOL_COUNT = readdirSync(join(ROOT, "schemas")).filter((f) => f.endsWith(".json")).length;

export type Check = (name: string, fn: () => void | Promise<void>) => Promise<void>;

/** How to run a Linux target's executable here: directly, or under qemu-user with the target's C library. */
export function runnerFor(target: Target): string[] {
  if (target === HOST_TARGET) return [];
  if (target === "linux-arm64") return ["qemu-aarch64-static", "-L", ARM64_SYSROOT];
  throw new Error(`${target} cannot run here`);
}

export function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync(cmd, { cwd: opts.cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** `run` without blocking the event loop: for commands that talk to a server in this process (registry.ts). */
export async function runAsync(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn(cmd, { cwd: opts.cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

export function expect(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

/** `--version` as fields: version, commit, target, native, state format. */
export function versionFields(stdout: string): Record<string, string> {
  const [first, ...rest] = stdout.trimEnd().split("\n");
  const fields: Record<string, string> = { version: (first ?? "").replace(/^worksnap /, "") };
  for (const line of rest) fields[line.slice(0, line.indexOf(": "))] = line.slice(line.indexOf(": ") + 2);
  return fields;
}

/** A small repository with what a snapshot must get right: CRLF, binary, executable, symlink, Unicode, untracked and ignored files. */
export function smallRepo(dir: string): string {
  const root = join(dir, "repo");
  const write = (p: string, data: string | Uint8Array, mode?: number) => {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), data);
    if (mode) chmodSync(join(root, p), mode);
  };
  mkdirSync(root, { recursive: true });
  const git = (...args: string[]) => {
    const r = run(["git", ...args], { cwd: root, env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "r", GIT_AUTHOR_EMAIL: "r@example.com", GIT_COMMITTER_NAME: "r", GIT_COMMITTER_EMAIL: "r@example.com", GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" } });
    if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  };
  git("init", "-q", "-b", "main");
  write("README.md", "# small\n\nA repository for the release smoke test.\n");
  write("src/main.ts", 'export const greeting = "hello";\n'.repeat(40));
  write("src/windows.txt", "one\r\ntwo\r\n");
  write("assets/blob.bin", new Uint8Array([0, 1, 2, 3, 255, 0, 10, 13]));
  write("bin/run.sh", "#!/bin/sh\necho run\n", 0o755);
  write("docs/naïve café.md", "Unicode path\n");
  write(".gitignore", "ignored/\n");
  symlinkSync("../README.md", join(root, "docs", "readme-link"));
  git("add", "-A");
  git("commit", "-q", "-m", "small");
  write("src/main.ts", 'export const greeting = "changed";\n');
  write("notes/untracked.txt", "not yet added\n");
  write("ignored/cache.txt", "ignored\n");
  return root;
}

/** initialize, tools/list and two tool calls through the SDK's own client; returns the snapshot id it made. */
export async function mcpHandshake(command: string[], root: string, version: string, opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  const transport = new StdioClientTransport({ command: command[0]!, args: [...command.slice(1), "serve", "--root", root], stderr: "pipe", cwd: opts.cwd, env: { ...(process.env as Record<string, string>), ...opts.env } });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d.toString()));
  const client = new Client({ name: "worksnap-release-smoke", version: "0.0.0" });
  try {
    await client.connect(transport);
    const server = client.getServerVersion();
    expect(server?.name === "worksnap" && server.version === version, `server said ${JSON.stringify(server)}`);
    const tools = await client.listTools();
    expect(tools.tools.length === TOOL_COUNT, `${tools.tools.length} tools listed, ${TOOL_COUNT} expected`);
    const created: any = await client.callTool({ name: "snapshot_create", arguments: { paths: ["."] } });
    expect(!created.isError, `snapshot_create failed: ${created.content?.[0]?.text}`);
    const id = created.structuredContent.snapshot_id as string;
    const file: any = await client.callTool({ name: "snapshot_file", arguments: { mode: "snapshot", snapshot_id: id, path: "src/windows.txt" } });
    expect(file.structuredContent?.content === "one\r\ntwo\r\n", `snapshot_file returned ${JSON.stringify(file.structuredContent)}`);
    return id;
  } catch (err) {
    throw new Error(`${(err as Error).message}${stderr ? `\n  server stderr: ${stderr.trim().split("\n").slice(-3).join("\n  ")}` : ""}`);
  } finally {
    await client.close();
  }
}
