import { concat } from "../../core/bytes";
import type { CheckCommand } from "./check-detect";

/**
 * Runs one check command: the work tree as its directory, in a process group
 * of its own (a new session, so the command and everything it starts share
 * one group id), stdin closed or fed the given text, stdout and stderr read
 * together into a capped buffer. On timeout or cancellation the whole group
 * gets SIGTERM, then SIGKILL after KILL_GRACE_MS; after a normal exit the
 * group is killed too, so nothing a check left running (a watcher, a server
 * a test forgot) outlives it or holds its pipes open. A process that left the
 * group (a daemon started with setsid) is out of reach: once the command has
 * exited, its output is read for PIPE_GRACE_MS more and then closed, so such a
 * process can neither hold the check open nor make it look timed out.
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
  /** The output was still held open PIPE_GRACE_MS after the command exited, and was closed unread. */
  outputHeld: boolean;
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
/** How long output is still read once the command's process has exited and its group was killed. */
export const PIPE_GRACE_MS = 1_000;
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
  private trailer = "";

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

  /** A line of worksnap's own after the output (not counted as the command's). */
  note(line: string): void {
    this.trailer = `${line}\n`;
  }

  text(): string {
    const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
    const kept = this.headBytes + this.tailBytes;
    const ending = (text: string) => (this.trailer && text && !text.endsWith("\n") ? `${text}\n${this.trailer}` : text + this.trailer);
    if (kept >= this.total) return ending(dec([...this.head, ...this.tail]));
    return ending(`${dec(this.head)}\n[... ${this.total - kept} bytes of output left out ...]\n${dec(this.tail)}`);
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
    return { exitCode: null, timedOut: false, cancelled: false, spawnError: (err as Error).message, output: "", outputBytes: 0, outputHeld: false, durationMs: Date.now() - started };
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
  const readers = [proc.stdout, proc.stderr].map((stream) => (stream as ReadableStream<Uint8Array>).getReader());
  type Reader = (typeof readers)[number];
  const drain = async (reader: Reader) => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      out.add(value);
    }
  };
  const reading = Promise.all(readers.map(drain)).then(() => true);
  try {
    const exitCode = await proc.exited;
    const exitedAt = Date.now();
    clearTimeout(timer); // a command that exited in time did not time out, whatever still holds its output
    killGroup("SIGKILL"); // whatever the command left behind
    let grace: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([reading.catch(() => true), new Promise<false>((done) => (grace = setTimeout(() => done(false), PIPE_GRACE_MS)))]);
    clearTimeout(grace);
    if (!closed) {
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
      out.note(`[output closed ${PIPE_GRACE_MS} ms after the command ended: a process it started outside its process group (setsid, a daemon) still held it]`);
    }
    const killed = proc.signalCode !== null && proc.signalCode !== undefined;
    return {
      exitCode: killed ? null : exitCode,
      timedOut,
      cancelled,
      output: out.text(),
      outputBytes: out.total,
      outputHeld: !closed,
      durationMs: (closed ? Date.now() : exitedAt) - started,
    };
  } finally {
    clearTimeout(timer);
    if (hardKill) clearTimeout(hardKill);
    if (ticker) clearInterval(ticker);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
