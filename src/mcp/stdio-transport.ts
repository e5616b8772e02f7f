import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { tooLarge } from "../core/errors";
import { type JoinedMessage, joinMessage, parseWithLongStrings } from "../repo/json-long-strings";
import { JSONRPC, type WireMessage, errorReply, parseErrorReply, screenMessage } from "./jsonrpc-screen";
import { type TextMode, errorResult } from "./result";

/**
 * MCP over stdio for messages of any size. The SDK's StdioServerTransport
 * re-concatenates its whole buffer on every chunk (quadratic: a 100 MB patch
 * never arrives) and drops the connection when a message passes 10 MB. Here
 * chunks are kept in a list and joined once per message, so a message costs
 * time linear in its size; up to MAX_MESSAGE_BYTES it is delivered whole.
 *
 * A larger message is not buffered: its first and last bytes are kept, the
 * rest is dropped as it streams in, and once it ends its request id is read
 * from those ends. A tools/call gets an isError result with TOO_LARGE (the
 * model learns what to change); another request a JSON-RPC error. The
 * connection stays up either way.
 *
 * Every line gets what JSON-RPC says it should (jsonrpc-screen.ts): not JSON
 * is -32700 with id null, an invalid request -32600 or -32602 with its id, a
 * malformed notification nothing. Answers are written in order and each
 * `send` resolves once its bytes are written, so `drained()` tells a server
 * that is shutting down when everything it answered has left.
 */
export const MAX_MESSAGE_BYTES = 512 * 1024 * 1024;
const EDGE_BYTES = 64 * 1024;

interface Oversized {
  head: Buffer;
  tail: Buffer;
  bytes: number;
}

export class LargeMessageStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private buffered = 0;
  private oversized: Oversized | null = null;
  private started = false;
  private closed = false;
  /** answers written but not yet taken by stdout */
  private writing = 0;
  private drainWaiters: (() => void)[] = [];
  private inputEnd!: () => void;
  /** Resolves when stdin ends (the client closed it, or it failed): no more requests will come. */
  readonly inputEnded = new Promise<void>((resolve) => {
    this.inputEnd = resolve;
  });

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly maxMessageBytes = MAX_MESSAGE_BYTES,
    /** How the TOO_LARGE answer to an oversized call is written (the server's --text). */
    private readonly textMode: TextMode = "compact",
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error("LargeMessageStdioTransport already started");
    this.started = true;
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStreamError);
    this.stdin.on("end", this.onInputEnd);
    this.stdin.on("close", this.onInputEnd);
    this.stdout.on("error", this.onOutputError);
  }

  private readonly onStreamError = (error: Error) => {
    this.onerror?.(error);
    this.inputEnd();
  };

  private readonly onInputEnd = () => {
    // a last message without its newline is still a message
    if (this.buffered > 0 || this.oversized) this.endMessage();
    this.inputEnd();
  };

  /** The client stopped reading (EPIPE) or stdout failed: nobody can get an answer any more. */
  private readonly onOutputError = (error: Error) => {
    this.onerror?.(new Error(`stdout failed: ${error.message}`));
    this.inputEnd();
    void this.close();
  };

  private readonly onData = (data: Buffer | string) => {
    let chunk = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    try {
      for (;;) {
        const nl = chunk.indexOf(10);
        if (nl < 0) {
          this.take(chunk);
          return;
        }
        this.take(chunk.subarray(0, nl));
        this.endMessage();
        chunk = chunk.subarray(nl + 1);
      }
    } catch (err) {
      this.onerror?.(err as Error);
    }
  };

  /** Adds bytes of the current message, switching to head+tail once it is too large. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.oversized) {
      this.oversized.bytes += part.length;
      this.oversized.tail = lastBytes(Buffer.concat([this.oversized.tail, part.subarray(Math.max(0, part.length - EDGE_BYTES))]), EDGE_BYTES);
      return;
    }
    if (this.buffered + part.length > this.maxMessageBytes) {
      const all = Buffer.concat([...this.chunks, part]);
      this.oversized = { head: Buffer.from(all.subarray(0, EDGE_BYTES)), tail: Buffer.from(lastBytes(all, EDGE_BYTES)), bytes: all.length };
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    // Kept as it is, not copied: Bun hands each chunk read from stdin in memory of its own that nothing reuses
    // (30 MB piped in: 611 chunks, 611 distinct buffers, every byte as sent), and a copy of a 1.4 MB request cost
    // its own pages (about 9 ms of a server's first write, in a profile).
    this.chunks.push(part);
    this.buffered += part.length;
  }

  private endMessage(): void {
    if (this.oversized) {
      const o = this.oversized;
      this.oversized = null;
      this.rejectOversized(o);
      return;
    }
    if (this.buffered === 0 && this.chunks.length === 0) return;
    const joined = joinMessage(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    const value = parseLine(joined);
    if (value === BLANK) return;
    if (value instanceof NotJson) {
      this.onerror?.(new Error(`answered a line that is not JSON with -32700 (${value.message})`));
      void this.send(parseErrorReply(value.message));
      return;
    }
    const screened = screenMessage(value);
    if (screened.kind === "deliver") this.onmessage?.(screened.message);
    else {
      this.onerror?.(new Error(`${screened.kind === "reply" ? "answered" : "ignored"} ${screened.why}`));
      if (screened.kind === "reply") void this.send(screened.reply);
    }
  }

  private rejectOversized(o: Oversized): void {
    const head = o.head.toString("utf8");
    const tail = o.tail.toString("utf8");
    const id = requestId(head, tail);
    const method = /"method"\s*:\s*"([^"\\]{1,100})"/.exec(head)?.[1] ?? /"method"\s*:\s*"([^"\\]{1,100})"/.exec(tail)?.[1];
    const error = tooLarge(`the request is ${o.bytes} bytes; this server accepts at most ${this.maxMessageBytes} bytes per message`, {
      bytes: o.bytes,
      limit: this.maxMessageBytes,
    });
    this.onerror?.(new Error(`dropped a ${o.bytes}-byte message (limit ${this.maxMessageBytes})`));
    if (id === undefined) return; // a notification, or an id we cannot find: nothing to answer
    const response: WireMessage =
      method === "tools/call"
        ? ({ jsonrpc: "2.0", id, result: errorResult(error, null, this.textMode) } as JSONRPCMessage)
        : errorReply(id, JSONRPC.invalidRequest, error.message, error.details);
    void this.send(response);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStreamError);
    this.stdin.off("end", this.onInputEnd);
    this.stdin.off("close", this.onInputEnd);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.chunks = [];
    this.oversized = null;
    this.inputEnd();
    this.onclose?.();
  }

  /** Writes one message as a line; resolves once stdout has taken its bytes (rejects if it cannot). */
  send(message: WireMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.writing++;
    return new Promise<void>((resolve, reject) => {
      this.stdout.write(`${JSON.stringify(message)}\n`, (err) => {
        this.writing--;
        if (this.writing === 0) for (const w of this.drainWaiters.splice(0)) w();
        if (err) reject(err);
        else resolve();
      });
    });
  }

  /** Resolves once every answer sent so far has been written. */
  drained(): Promise<void> {
    if (this.writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}

const BLANK = Symbol("blank line");

class NotJson {
  constructor(readonly message: string) {}
}

/**
 * A line's JSON value, BLANK, or why it is not JSON. A long patch's or file's string is decoded natively
 * (json-long-strings.ts: decoded in place, so the bytes are spent once this returns).
 */
function parseLine({ bytes, block }: JoinedMessage): unknown {
  const quick = parseWithLongStrings(bytes, block);
  if (quick) return quick.value;
  let line = bytes.toString("utf8");
  if (line.endsWith("\r")) line = line.slice(0, -1);
  if (line.trim() === "") return BLANK;
  try {
    return JSON.parse(line);
  } catch (err) {
    return new NotJson((err as Error).message);
  }
}

function lastBytes(b: Buffer, n: number): Buffer {
  return b.length <= n ? b : b.subarray(b.length - n);
}

/** The JSON-RPC id of a message known only by its ends: `"id":` first (after jsonrpc) or last. */
function requestId(head: string, tail: string): string | number | undefined {
  const value = (raw: string) => (raw.startsWith('"') ? (JSON.parse(raw) as string) : Number(raw));
  const last = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail);
  if (last) return value(last[1] as string);
  const first = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(head);
  if (first) return value(first[1] as string);
  return undefined;
}
