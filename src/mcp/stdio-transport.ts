import type { Readable, Writable } from "node:stream";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { tooLarge } from "../core/errors";
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
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error);

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
    // A chunk may be a view into a larger pooled buffer that is reused: keep a copy.
    this.chunks.push(Buffer.from(part));
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
    const bytes = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    let line = bytes.toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    this.onmessage?.(message);
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
    const response: JSONRPCMessage =
      method === "tools/call"
        ? ({ jsonrpc: "2.0", id, result: errorResult(error, this.textMode) } as JSONRPCMessage)
        : ({ jsonrpc: "2.0", id, error: { code: -32600, message: error.message, data: error.details } } as JSONRPCMessage);
    void this.send(response);
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStreamError);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.chunks = [];
    this.oversized = null;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once("drain", resolve);
    });
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
