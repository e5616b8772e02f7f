import { concat } from "../../core/bytes";
import type { CheckCommand } from "./check-detect";

/**
 * Runs one check command: the work tree as its directory, in a process group
 * of its own (a new session, so the command and everything it starts share
 * one group id), stdin closed or fed the given text, stdout and stderr read
 * together into a capped buffer. On timeout or cancellation the whole group
 * gets SIGTERM, then SIGKILL after KILL_GRACE_MS; after a normal exit the
 * group is killed too, so nothing a check left running (a watcher, a server
 * a test forgot) outlives it or holds its pipes open.
 */
export interface RunOutcome {
  /** null when the process was killed by a signal or never started. */
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Why the command could not be started (no such executable, ...). */
  spawnError?: string;
  /** The output, the middle left out when it was over the cap. */
  output: string;
  /** Bytes of output the command wrote in all. */
  outputBytes: number;
  durationMs: number;
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  /** Called about every TICK_MS while the command runs, with the time it has run. */
  onTick?: (elapsedMs: number) => void;
}

export const KILL_GRACE_MS = 2_000;
const TICK_MS = 2_000;
/** Output kept: the first and the last this many bytes. */
export const OUTPUT_HEAD_BYTES = 128 * 1024;
export const OUTPUT_TAIL_BYTES = 128 * 1024;

class CappedOutput {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  total = 0;

  add(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.headBytes < OUTPUT_HEAD_BYTES) {
      const take = Math.min(chunk.length, OUTPUT_HEAD_BYTES - this.headBytes);
      this.head.push(chunk.slice(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk.slice());
    this.tailBytes += chunk.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= OUTPUT_TAIL_BYTES) this.tailBytes -= (this.tail.shift() as Uint8Array).length;
    const over = this.tailBytes - OUTPUT_TAIL_BYTES;
    if (over > 0) {
      this.tail[0] = (this.tail[0] as Uint8Array).subarray(over);
      this.tailBytes -= over;
    }
  }

  text(): string {
    const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
    const kept = this.headBytes + this.tailBytes;
    if (kept >= this.total) return dec([...this.head, ...this.tail]);
    return `${dec(this.head)}\n[... ${this.total - kept} bytes of output left out ...]\n${dec(this.tail)}`;
  }
}

export async function runCommand(cmd: CheckCommand, opts: RunOptions): Promise<RunOutcome> {
  const started = Date.now();
  const out = new CappedOutput();
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(cmd.argv, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdin: cmd.stdin === undefined ? "ignore" : new Blob([cmd.stdin]),
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (err) {
    return { exitCode: null, timedOut: false, cancelled: false, spawnError: (err as Error).message, output: "", outputBytes: 0, durationMs: Date.now() - started };
  }
  const group = proc.pid;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      // the group is gone already
    }
  };
  let timedOut = false;
  let cancelled = false;
  let hardKill: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    killGroup("SIGTERM");
    hardKill ??= setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, cmd.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const ticker = opts.onTick ? setInterval(() => opts.onTick?.(Date.now() - started), TICK_MS) : undefined;
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) out.add(chunk);
  };
  const reading = Promise.all([drain(proc.stdout as ReadableStream<Uint8Array>), drain(proc.stderr as ReadableStream<Uint8Array>)]);
  try {
    const exitCode = await proc.exited;
    killGroup("SIGKILL"); // whatever the command left behind
    await reading.catch(() => undefined);
    const killed = proc.signalCode !== null && proc.signalCode !== undefined;
    return {
      exitCode: killed ? null : exitCode,
      timedOut,
      cancelled,
      output: out.text(),
      outputBytes: out.total,
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
    if (hardKill) clearTimeout(hardKill);
    if (ticker) clearInterval(ticker);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
