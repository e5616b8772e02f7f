import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";
import { canonicalJson } from "../../src/core/canonical-json";
import { renderError } from "../../src/mcp/render/error";
import { TOOLS } from "../../src/mcp/tool-list";

export const BINARY = join(import.meta.dir, "..", "..", "dist", "worksnap");

export function requireBinary(): string {
  if (!existsSync(BINARY)) throw new Error("dist/worksnap is missing: run `npm run build` (npm test does it first)");
  return BINARY;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json<T = any>(): T;
}

/** Runs the compiled binary as a person or CI would. */
export function cli(args: string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string | Uint8Array } = {}): CliResult {
  const r = Bun.spawnSync([requireBinary(), ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = r.stdout.toString();
  return { code: r.exitCode ?? -1, stdout, stderr: r.stderr.toString(), json: () => JSON.parse(stdout) };
}

/** `worksnap history status --json`: every recorded entry, in timeline order. */
export function historyEntries(root: string): { edit_id: string; conversation_id: string; tool_call_index: number; file_path: string; status: string }[] {
  const r = cli(["history", "status", "--json", "--root", root]);
  if (r.code !== 0) throw new Error(`history status exited ${r.code}: ${r.stderr}`);
  return r.json().entries;
}

export interface McpSession extends AsyncDisposable {
  client: Client;
  /** Calls a tool and returns structuredContent (throws if the result is an error). */
  call<T = any>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Calls a tool expecting an error; returns the {code,message,details} object. */
  callError(name: string, args?: Record<string, unknown>): Promise<{ code: string; message: string; details: any }>;
  raw(name: string, args?: Record<string, unknown>): Promise<any>;
}

export interface SessionOptions {
  /** Run the server as an unprivileged user when the tests run as root (see unprivileged). */
  unprivileged?: boolean;
  env?: Record<string, string>;
  /** The client advertises the roots capability and answers roots/list with these directories. */
  roots?: string[];
  /** The server's working directory (stdio). */
  cwd?: string;
}

/**
 * What content[0].text must be for a structured answer: under `--text json`
 * its canonical JSON; otherwise the tool's own rendering of it (the SDK client
 * has already validated structuredContent against the tool's output schema).
 */
export function expectedText(tool: string, structured: any, args: Record<string, unknown>, json: boolean): string {
  if (json) return canonicalJson(structured);
  if (structured?.error && Object.keys(structured).length === 1) return renderError(structured.error);
  const def = TOOLS.find((t) => t.name === tool || t.name.replace("_", ".") === tool);
  if (!def) throw new Error(`no tool ${tool}`);
  return def.text ? def.text(structured, args) : canonicalJson(structured);
}

/**
 * Spawns `dist/worksnap serve --root ROOT` and connects the MCP SDK's own Client over stdio. Every call checks
 * the text contract: the text is exactly the rendering of structuredContent (or its JSON under `--text json`).
 */
export async function mcpSession(root: string, extraArgs: string[] = [], opts: SessionOptions = {}): Promise<McpSession> {
  const [command, ...prefix] = opts.unprivileged ? unprivileged([requireBinary()]) : [requireBinary()];
  const transport = new StdioClientTransport({
    command: command as string,
    args: [...prefix, "serve", ...(root === "" ? [] : ["--root", root]), ...extraArgs],
    cwd: opts.cwd,
    stderr: "pipe",
    env: { ...(process.env as Record<string, string>), ...(opts.unprivileged ? { HOME: "/tmp" } : {}), ...opts.env },
  });
  return connectSession(transport, extraArgs, opts);
}

export interface RootsSession extends McpSession {
  /** Changes the client's roots and sends notifications/roots/list_changed. */
  setRoots(dirs: string[]): Promise<void>;
}

async function connectSession(transport: Transport, extraArgs: string[], opts: SessionOptions): Promise<RootsSession> {
  const textIndex = extraArgs.indexOf("--text");
  const json = textIndex >= 0 && extraArgs[textIndex + 1] === "json";
  let roots = opts.roots ?? [];
  const client = new Client({ name: "worksnap-test", version: "0.0.0" }, opts.roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (opts.roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((d) => ({ uri: pathToFileURL(d).href, name: d })) }));
  await client.connect(transport);
  await client.listTools(); // the client caches output schemas and validates every result against them
  const raw = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
  return {
    client,
    raw,
    async call(name, args) {
      const r: any = await raw(name, args);
      if (r.isError) throw new Error(`${name} failed: ${r.content?.[0]?.text}`);
      if (r.content[0].text !== expectedText(name, r.structuredContent, args ?? {}, json)) {
        throw new Error(`content text is not the rendering of structuredContent:\n${r.content[0].text}`);
      }
      return r.structuredContent;
    },
    async callError(name, args) {
      const r: any = await raw(name, args);
      if (!r.isError) throw new Error(`${name} succeeded but an error was expected: ${r.content?.[0]?.text}`);
      if (r.content[0].text !== expectedText(name, r.structuredContent, args ?? {}, json)) {
        throw new Error(`error text is not the rendering of structuredContent:\n${r.content[0].text}`);
      }
      return r.structuredContent.error;
    },
    async setRoots(dirs) {
      roots = dirs;
      await client.sendRootsListChanged();
    },
    [Symbol.asyncDispose]: async () => {
      await client.close();
    },
  };
}

export interface HttpServe extends AsyncDisposable {
  url: string;
  token: string;
  port: number;
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything the server wrote on stderr so far. */
  log(): string;
  /** A client session over Streamable HTTP with the token (the SDK's own transport). */
  session(opts?: SessionOptions): Promise<RootsSession>;
  /** Stops the server (SIGTERM) and waits for it to exit; resolves to its exit code. */
  stop(): Promise<number>;
}

/**
 * Spawns `dist/worksnap serve --http 127.0.0.1:0 ...` and reads the endpoint and the token from its stderr.
 * `root` "" leaves --root out (the client's roots, else `cwd`).
 */
export async function httpServe(root: string, extraArgs: string[] = [], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<HttpServe> {
  const proc = Bun.spawn([requireBinary(), "serve", "--http", "127.0.0.1:0", ...(root === "" ? [] : ["--root", root]), ...extraArgs], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      err += decoder.decode(value);
    }
  })();
  const deadline = Date.now() + 20_000;
  while (!/token: \S+/.test(err) || !/serving MCP at \S+/.test(err)) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`serve --http did not start:\n${err}`);
    await Bun.sleep(10);
  }
  const url = (/serving MCP at (\S+)/.exec(err) as RegExpExecArray)[1] as string;
  const printed = (/token: (\S+)/.exec(err) as RegExpExecArray)[1] as string;
  const token = printed === "from" ? (opts.env?.WORKSNAP_HTTP_TOKEN as string) : printed;
  const stop = async () => {
    if (proc.exitCode === null) proc.kill("SIGTERM");
    const code = await proc.exited;
    await pump;
    return code;
  };
  return {
    url,
    token,
    port: Number(new URL(url).port),
    proc,
    log: () => err,
    session: (o = {}) =>
      connectSession(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), extraArgs, o),
    stop,
    [Symbol.asyncDispose]: async () => void (await stop()),
  };
}

/** The uid and gid unprivileged runs use when the tests run as root: nobody. */
export const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/**
 * `cmd` run as an unprivileged user when the tests run as root (root reads
 * anything, so a mode 000 file is only unreadable to someone else); as it is
 * otherwise. Pair it with handToUnprivileged.
 */
export function unprivileged(cmd: string[]): string[] {
  return asRoot ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...cmd] : cmd;
}

/**
 * Gives the tree at `root` to the unprivileged user (owner, so git accepts
 * the repository as theirs) with `unreadable` (repo-relative files or
 * directories) made mode 000.
 */
export function handToUnprivileged(root: string, unreadable: string[]): void {
  if (asRoot) Bun.spawnSync(["chown", "-R", `${NOBODY}:${NOBODY}`, root]);
  Bun.spawnSync(["chmod", "-R", "u+rwX", root]);
  Bun.spawnSync(["chmod", "a+rx", join(root, "..")]);
  for (const p of unreadable) Bun.spawnSync(["chmod", "000", join(root, p)]);
}

/**
 * Runs the binary on `root` with `unreadable` (a repo-relative file) made
 * unreadable: as an unprivileged user when the tests run as root (root reads
 * anything), with the tree handed to that user except for the file.
 */
export function cliWithUnreadable(root: string, unreadable: string | string[], args: string[], env: Record<string, string> = {}): CliResult {
  handToUnprivileged(root, typeof unreadable === "string" ? [unreadable] : unreadable);
  return cliUnprivileged(args, env);
}

/** Runs the binary as the unprivileged user (see unprivileged) on a tree handed to it. */
export function cliUnprivileged(args: string[], env: Record<string, string> = {}): CliResult {
  const r = Bun.spawnSync(unprivileged([requireBinary(), ...args]), { env: { ...process.env, HOME: "/tmp", NO_COLOR: "1", ...env }, stdout: "pipe", stderr: "pipe" });
  const stdout = r.stdout.toString();
  return { code: r.exitCode ?? -1, stdout, stderr: r.stderr.toString(), json: () => JSON.parse(stdout) };
}
