import type { Subprocess } from "bun";
import { requireBinary } from "./binary";

/**
 * `dist/worksnap serve` spoken to byte by byte: what a hostile or broken
 * client writes (malformed JSON, batches, floods without waiting) goes to its
 * stdin as is, and every line it answers is kept. The SDK's client cannot
 * send any of this, so these tests talk raw JSON-RPC.
 */
export interface RawServer extends AsyncDisposable {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  /** Every line the server wrote to stdout, parsed (a line that is not JSON is kept as {unparsed: line}). */
  lines: any[];
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** Writes bytes (a string is written as is; an object as one JSON line). */
  write(data: string | Uint8Array | object): void;
  /** Sends a request and waits for the line that answers its id. */
  request(method: string, params?: unknown, id?: string | number): Promise<any>;
  /** Waits until `cond` holds over the lines received (fails after a generous deadline). */
  until(cond: (lines: any[]) => boolean, what?: string): Promise<void>;
  /** Answers with this id (a batch answer counts once per member). */
  answersTo(id: unknown): any[];
  /** Closes stdin and waits for the exit code. */
  end(): Promise<number>;
}

export interface RawServerOptions {
  /** Runs the server under `ulimit -n` of this many descriptors. */
  maxFiles?: number;
  args?: string[];
  /** A command the server runs under (e.g. setpriv to drop privileges). */
  wrap?: string[];
  env?: Record<string, string>;
  /** Skips initialize / notifications/initialized. */
  raw?: boolean;
  deadlineMs?: number;
}

export async function rawServer(root: string, opts: RawServerOptions = {}): Promise<RawServer> {
  const bin = requireBinary();
  const argv = [...(opts.wrap ?? []), bin, "serve", "--root", root, ...(opts.args ?? [])];
  const cmd = opts.maxFiles === undefined ? argv : ["bash", "-c", `ulimit -n ${opts.maxFiles} && exec "$@"`, "bash", ...argv];
  const proc = Bun.spawn(cmd, { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, ...opts.env } });
  const lines: any[] = [];
  let err = "";
  let nextId = 1_000_000;
  const pump = async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.length === 0) continue;
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push({ unparsed: line });
        }
      }
    }
  };
  const pumpErr = async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  };
  const pumping = Promise.all([pump(), pumpErr()]);
  const deadlineMs = opts.deadlineMs ?? 60_000;

  const flat = () => lines.flatMap((l) => (Array.isArray(l) ? l : [l]));
  const server: RawServer = {
    proc,
    lines,
    stderr: () => err,
    write(data) {
      const bytes = typeof data === "string" || data instanceof Uint8Array ? data : `${JSON.stringify(data)}\n`;
      proc.stdin.write(bytes);
      void proc.stdin.flush();
    },
    async request(method, params, id) {
      const rid = id ?? nextId++;
      server.write({ jsonrpc: "2.0", id: rid, method, ...(params === undefined ? {} : { params }) });
      await server.until(() => server.answersTo(rid).length > 0, `an answer to ${method} #${String(rid)}`);
      return server.answersTo(rid)[0];
    },
    async until(cond, what = "the expected answers") {
      const deadline = Date.now() + deadlineMs;
      while (!cond(lines)) {
        if (proc.exitCode !== null && !cond(lines)) {
          await pumping;
          if (cond(lines)) return;
          throw new Error(`the server exited (${proc.exitCode}) before ${what}; stderr:\n${err.slice(-2000)}`);
        }
        if (Date.now() > deadline) throw new Error(`no ${what} within ${deadlineMs} ms (${lines.length} lines); stderr:\n${err.slice(-2000)}`);
        await Bun.sleep(5);
      }
    },
    answersTo: (id) => flat().filter((l) => l && typeof l === "object" && "id" in l && Object.is(l.id, id) && ("result" in l || "error" in l)),
    async end() {
      try {
        proc.stdin.end();
      } catch {
        // already closed
      }
      const code = await proc.exited;
      await pumping;
      return code;
    },
    [Symbol.asyncDispose]: async () => {
      if (proc.exitCode === null) {
        try {
          proc.stdin.end();
        } catch {
          // already closed
        }
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await proc.exited;
        clearTimeout(timer);
      }
    },
  };
  if (!opts.raw) {
    const init = await server.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }, "init");
    if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
    server.write({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  return server;
}
