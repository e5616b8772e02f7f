/**
 * Child processes that run one grep call's regex, so a runaway regex can be
 * killed.
 *
 * Why processes and not Workers: JavaScriptCore cannot interrupt a regex
 * while its JIT code runs. `worker.terminate()` returns, but the thread keeps
 * burning a core until the match finishes, which for `.*.*=` on a 1 MB line
 * is never (measured with Bun 1.4: the thread stays runnable after
 * terminate). SIGKILL always works. A child is this same executable
 * (`BUN_BE_BUN=1` makes a compiled worksnap act as the bun it embeds)
 * evaluating regexScan's own source, so results are identical to the
 * in-process path.
 *
 * Small files that name their path are read by the children themselves, so
 * reading and matching run on every core and only files with matches come
 * back over the pipe. Other input is sent as byte regions.
 *
 * Protocol over stdin/stdout, little-endian u32 fields, one frame each:
 *   program  [len][1][JSON {source, flags, perLine, literals}]
 *   region   [len][2][id][maxRecords][bytes]
 *   file     [len][3][id][maxRecords][limit][UTF-8 path]
 *   reply    [len][id][status]...
 *     0 scanned [count][n][n starts][n ends][file bytes, for a file job with matches]
 *     1 binary, 2 larger than limit, 3 failed [code length][code][message]
 * A child works through its jobs in order with blocking reads, answering each
 * as soon as it is done (a job that never ends must not hold back the answers
 * before it); EOF on stdin ends it. Spawning costs ~20-40 ms, paid only by
 * calls whose regex is not provably cheap.
 */
import { availableParallelism } from "node:os";
import { concat } from "../../core/bytes";
import { internal, isDescriptorShortage } from "../../core/errors";
import type { RegexPlan } from "./regex-analysis";
import { CHILD_SOURCE } from "./regex-child";
import type { RegionScan } from "./regex-scan";

export type FileScanReply =
  | { kind: "binary" }
  | { kind: "large" }
  /** `bytes` (the whole file) only when there is a match; offsets are past a UTF-8 BOM */
  | { kind: "scanned"; scan: RegionScan; bytes: Uint8Array | null };

type Reply = { kind: "scanned"; scan: RegionScan; bytes: Uint8Array | null } | { kind: "binary" } | { kind: "large" };

interface Pending {
  id: number;
  resolve: (r: Reply) => void;
  reject: (err: unknown) => void;
}

type Proc = Bun.Subprocess<"pipe", "pipe", "pipe">;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** One child process and the jobs it owes answers to, in order. */
class Child {
  readonly pending: Pending[] = [];
  /** frames queued this turn of the event loop, written in one go */
  private out = new Uint8Array(64 * 1024);
  private outLen = 0;
  private flushQueued = false;

  constructor(
    readonly proc: Proc,
    private readonly fail: (reason: unknown) => void,
  ) {
    void this.readReplies();
  }

  /** Queues one frame: a type, u32 fields, then raw bytes or a UTF-8 string. */
  send(type: number, fields: number[], tail: Uint8Array | string, pending: Pending | null): void {
    const tailMax = typeof tail === "string" ? tail.length * 3 : tail.length;
    this.reserve(8 + 4 * fields.length + tailMax);
    const at = this.outLen;
    let pos = at + 8;
    for (const f of fields) pos = this.put(pos, f);
    if (typeof tail === "string") pos += encoder.encodeInto(tail, this.out.subarray(pos)).written;
    else {
      this.out.set(tail, pos);
      pos += tail.length;
    }
    this.put(at, pos - at - 4);
    this.put(at + 4, type);
    this.outLen = pos;
    if (pending) this.pending.push(pending);
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.flushQueued = false;
    if (this.outLen === 0) return;
    try {
      this.proc.stdin.write(this.out.subarray(0, this.outLen));
      this.outLen = 0;
      void Promise.resolve(this.proc.stdin.flush()).catch(() => {});
    } catch (err) {
      this.fail(err); // the child is gone
    }
  }

  rejectAll(reason: unknown): void {
    for (const job of this.pending.splice(0)) job.reject(reason);
  }

  private reserve(extra: number): void {
    if (this.outLen + extra <= this.out.length) return;
    const grown = new Uint8Array(Math.max(2 * this.out.length, this.outLen + extra));
    grown.set(this.out.subarray(0, this.outLen));
    this.out = grown;
  }

  private put(at: number, v: number): number {
    const o = this.out;
    o[at] = v & 0xff;
    o[at + 1] = (v >>> 8) & 0xff;
    o[at + 2] = (v >>> 16) & 0xff;
    o[at + 3] = (v >>> 24) & 0xff;
    return at + 4;
  }

  private async readReplies(): Promise<void> {
    // chunks are joined only once a whole frame has arrived, so a large reply is copied once
    let parts: Uint8Array[] = [];
    let total = 0;
    try {
      for await (const chunk of this.proc.stdout) {
        parts.push(chunk);
        total += chunk.length;
        if (total < 4) continue;
        let buf = parts.length === 1 ? parts[0]! : concat(parts);
        if (total < 4 + u32(buf, 0)) {
          parts = [buf];
          continue;
        }
        let at = 0;
        while (buf.length - at >= 4) {
          const len = u32(buf, at);
          if (buf.length - at - 4 < len) break;
          this.reply(buf, at + 4, len);
          at += 4 + len;
        }
        buf = buf.subarray(at);
        parts = buf.length > 0 ? [buf] : [];
        total = buf.length;
      }
    } catch {
      // the stream fails when the child is killed; handled below
    }
    if (this.pending.length > 0) {
      const status = await this.proc.exited;
      const stderr = await new Response(this.proc.stderr).text().catch(() => "");
      this.fail(internal(`regex process exited unexpectedly (${status}): ${stderr.slice(0, 500)}`));
    }
  }

  private reply(buf: Uint8Array, at: number, len: number): void {
    const job = this.pending.shift();
    const id = u32(buf, at);
    if (!job || job.id !== id) return this.fail(internal(`regex process answered job ${id} out of order`));
    const status = u32(buf, at + 4);
    if (status === 1) return job.resolve({ kind: "binary" });
    if (status === 2) return job.resolve({ kind: "large" });
    if (status === 3) {
      const codeLen = u32(buf, at + 8);
      const code = decoder.decode(buf.subarray(at + 12, at + 12 + codeLen));
      const message = decoder.decode(buf.subarray(at + 12 + codeLen, at + len));
      if (code) return job.reject(Object.assign(new Error(message), { code }));
      return job.reject(internal(`regex search failed: ${message}`));
    }
    const count = u32(buf, at + 8);
    const n = u32(buf, at + 12);
    const starts: number[] = new Array(n);
    const ends: number[] = new Array(n);
    for (let k = 0; k < n; k++) {
      starts[k] = u32(buf, at + 16 + 4 * k);
      ends[k] = u32(buf, at + 16 + 4 * (n + k));
    }
    const bytesLen = u32(buf, at + 16 + 8 * n);
    const from = at + 20 + 8 * n;
    job.resolve({ kind: "scanned", scan: { starts, ends, count }, bytes: bytesLen > 0 ? buf.subarray(from, from + bytesLen) : null });
  }
}

export class RegexSandbox {
  private readonly children: Child[] = [];
  private readonly size: number;
  private nextId = 1;
  private failure: unknown = null;
  private readonly program: Uint8Array;

  constructor(plan: RegexPlan, size = Math.min(4, availableParallelism())) {
    this.size = Math.max(1, size);
    const { source, flags, perLine, literals, required, fold } = plan;
    const plain = (set: Uint8Array[]) => set.map((l) => [...l]);
    this.program = encoder.encode(JSON.stringify({ source, flags, perLine, literals: literals ? plain(literals) : null, required: required.map(plain), fold }));
  }

  /** Scans a region of whole lines (see regexScan). */
  async runRegion(region: Uint8Array, maxRecords: number): Promise<RegionScan> {
    const reply = await this.submit(2, [cap(maxRecords)], region);
    if (reply.kind !== "scanned") throw internal(`regex process answered a region job with ${reply.kind}`);
    return reply.scan;
  }

  /** Reads, sniffs and scans a whole file in the child; its bytes come back only if it matches. */
  runFile(absPath: string, maxRecords: number, limit: number): Promise<FileScanReply> {
    return this.submit(3, [cap(maxRecords), cap(limit)], absPath);
  }

  /** Kills the children now; whatever they were running is abandoned and rejects with `reason`. */
  kill(reason: unknown): void {
    this.failure ??= reason;
    for (const c of this.children) {
      c.proc.kill("SIGKILL");
      c.rejectAll(this.failure);
    }
  }

  /** Ends the children: gracefully when idle, by kill when work is still queued. */
  close(reason: unknown): void {
    if (this.children.some((c) => c.pending.length > 0)) return this.kill(reason);
    this.failure ??= reason;
    for (const c of this.children) void Promise.resolve(c.proc.stdin.end()).catch(() => {});
  }

  private submit(type: number, fields: number[], tail: Uint8Array | string): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const child = this.pick();
    const id = this.nextId++;
    return new Promise((resolve, reject) => child.send(type, [id, ...fields], tail, { id, resolve, reject }));
  }

  /** The least busy child, starting another while all have work and there is room. */
  private pick(): Child {
    let best: Child | undefined;
    for (const c of this.children) if (!best || c.pending.length < best.pending.length) best = c;
    if (best && (best.pending.length === 0 || this.children.length >= this.size)) return best;
    let proc: Proc;
    try {
      // As bun, the child would load bunfig.toml (its preload scripts) and .env from its working directory, which
      // is often the repository: it starts in / without .env files, so nothing of the repository runs in it.
      proc = Bun.spawn([process.execPath, "--no-env-file", "-e", CHILD_SOURCE], {
        cwd: "/",
        env: { ...process.env, BUN_BE_BUN: "1" },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
    } catch (err) {
      // out of file descriptors: the children there are take the work (none: the call fails BUSY and is retried)
      if (best && isDescriptorShortage(err)) return best;
      throw err;
    }
    const child = new Child(proc, (reason) => this.kill(reason));
    child.send(1, [], this.program, null);
    this.children.push(child);
    return child;
  }
}

function cap(n: number): number {
  return Math.min(n, 0xfffffffe);
}
