// A compiled worksnap server driven through the MCP SDK's client over stdio, as the benchmarks time it.

import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** A tool's answer as the client gets it. */
export interface ToolAnswer {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: any;
}

export interface BenchServer {
  client: Client;
  pid: number;
  /**
   * One tool call, timed from the request to its answer (whatever the answer: errors are the caller's to judge);
   * `sendMs`: of that, the client's own work in its transport's send, before the request could reach the server
   * (the SDK's JSON.stringify of the message and the write of its first bytes: the host's cost, any server's).
   */
  call(name: string, args: Record<string, unknown>): Promise<{ ms: number; sendMs: number; answer: ToolAnswer }>;
  close(): Promise<void>;
}

/** Starts `command args` (for example `dist/worksnap serve --root DIR`) and connects to it; `env` is added to the SDK's default environment. */
export async function startServer(command: string, args: string[], opts: { stderr?: "pipe" | "ignore"; env?: Record<string, string> } = {}): Promise<BenchServer> {
  const env = opts.env ? { ...getDefaultEnvironment(), ...opts.env } : undefined;
  const transport = new StdioClientTransport({ command, args, stderr: opts.stderr ?? "pipe", ...(env ? { env } : {}) });
  const client = new Client({ name: "worksnap-bench", version: "0" });
  await client.connect(transport);
  const pid = (transport as unknown as { _process: { pid: number } })._process.pid;
  // the synchronous part of each send: serialising the message and handing its first bytes to the pipe
  let sendMs = 0;
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    const t0 = performance.now();
    try {
      return send(message);
    } finally {
      sendMs += performance.now() - t0;
    }
  };
  return {
    client,
    pid,
    async call(name, args) {
      sendMs = 0;
      const t0 = performance.now();
      const answer = (await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as ToolAnswer;
      return { ms: performance.now() - t0, sendMs, answer };
    },
    close: () => client.close(),
  };
}

/** The answer's structuredContent; a tool error throws, naming the tool. */
export function resultOf(name: string, answer: ToolAnswer): any {
  if (answer.isError) throw new Error(`${name} failed: ${JSON.stringify(answer).slice(0, 500)}`);
  return answer.structuredContent;
}

/**
 * Starts a new high-water mark: Linux's clear_refs "5" sets a process's VmHWM to its current RSS, so the next
 * `processMemory(pid).hwm` is the peak since this call. False where it cannot (no /proc, not permitted).
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** A process's resident set and its high-water mark, in MB (/proc/PID/status; 0 where it does not tell). */
export function processMemory(pid: number): { rss: number; hwm: number; file: number } {
  let text = "";
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    // gone, or no /proc
  }
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0);
  // file: pages of mapped files (the executable itself, mapped index segments), part of rss
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024, file: kb("RssFile") / 1024 };
}
