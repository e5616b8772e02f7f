import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { renderError } from "../../src/mcp/render/error";
import { LargeMessageStdioTransport } from "../../src/mcp/stdio-transport";

function harness(limit?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const t = new LargeMessageStdioTransport(stdin, stdout, limit);
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  t.onmessage = (m) => received.push(m);
  t.onerror = (e) => errors.push(e);
  let out = "";
  stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  return { stdin, t, received, errors, sent: () => out.split("\n").filter(Boolean).map((l) => JSON.parse(l)) };
}

/** Polls until cond holds (streams deliver on later ticks); fails after a generous deadline. */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await Bun.sleep(2);
  }
}

const call = (id: number, args: Record<string, unknown>) => JSON.stringify({ method: "tools/call", params: { name: "x", arguments: args }, jsonrpc: "2.0", id });

describe("LargeMessageStdioTransport", () => {
  test("messages split across chunks, several per chunk, and CRLF line ends arrive whole and in order", async () => {
    const h = harness();
    await h.t.start();
    const a = call(1, { s: "é".repeat(10) });
    const b = call(2, {});
    const bytes = Buffer.from(`${a}\n${b}\r\n${call(3, {})}\n`, "utf8");
    for (let i = 0; i < bytes.length; i += 7) h.stdin.write(bytes.subarray(i, i + 7));
    await until(() => h.received.length === 3);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect((h.received[0] as any).params.arguments.s).toBe("é".repeat(10));
    expect(h.errors).toEqual([]);
  });

  test("a 100 MB message is delivered whole (the SDK transport drops anything over 10 MB)", async () => {
    const h = harness();
    await h.t.start();
    const big = "x".repeat(100 * 1024 * 1024);
    const bytes = Buffer.from(`${call(7, { patch: big })}\n`, "utf8");
    for (let i = 0; i < bytes.length; i += 65536) h.stdin.write(bytes.subarray(i, i + 65536));
    await until(() => h.received.length === 1);
    expect((h.received[0] as any).params.arguments.patch.length).toBe(big.length);
  });

  test("a long message is delivered as JSON.parse reads it, CRLF and all; a long one that is not JSON gets -32700 with the parser's own message", async () => {
    const h = harness();
    await h.t.start();
    const patch = Array.from({ length: 20_000 }, (_, i) => `+\t"${i}" é 😀\r`).join("\n");
    const text = call(5, { patch, again: patch });
    h.stdin.write(`${text}\r\n`);
    const broken = `${call(6, { patch }).slice(0, -1)}\n`; // the closing brace missing
    h.stdin.write(broken);
    await until(() => h.received.length === 1 && h.sent().length === 1);
    expect(h.received[0]).toEqual(JSON.parse(text));
    const sent = h.sent()[0];
    expect(sent.error.code).toBe(-32700);
    expect(sent.id).toBeNull();
    let plain = "";
    try {
      JSON.parse(broken.slice(0, -1));
    } catch (err) {
      plain = (err as Error).message;
    }
    expect(sent.error.data.reason).toBe(plain);
  });

  test("an oversized tools/call gets a TOO_LARGE tool error with its id, and the connection keeps working", async () => {
    const h = harness(1024 * 1024);
    await h.t.start();
    const bytes = Buffer.from(`${call(42, { content: "A".repeat(5 * 1024 * 1024) })}\n${call(43, {})}\n`, "utf8");
    for (let i = 0; i < bytes.length; i += 100_000) h.stdin.write(bytes.subarray(i, i + 100_000));
    await until(() => h.received.length === 1 && h.sent().length === 1);
    const sent = h.sent();
    expect(sent[0].id).toBe(42);
    expect(sent[0].result.isError).toBe(true);
    expect(sent[0].result.structuredContent.error.code).toBe("TOO_LARGE");
    expect(sent[0].result.content[0].text).toBe(renderError(sent[0].result.structuredContent.error));
    expect(sent[0].result.content[0].text).toStartWith("error TOO_LARGE: the request is ");
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([43]);
  });

  test("an oversized request of another method gets a JSON-RPC error; id first or last are both found", async () => {
    const h = harness(1024);
    await h.t.start();
    h.stdin.write(`{"jsonrpc":"2.0","id":"abc","method":"resources/read","params":{"x":"${"y".repeat(5000)}"}}\n`);
    await until(() => h.sent().length === 1);
    const sent = h.sent();
    expect(sent[0].id).toBe("abc");
    expect(sent[0].error.code).toBe(-32600);
    expect(sent[0].error.data.limit).toBe(1024);
  });

  test("an unparsable line is reported as an error and later messages still arrive", async () => {
    const h = harness();
    await h.t.start();
    h.stdin.write(`not json\n${call(5, {})}\n`);
    await until(() => h.received.length === 1);
    expect(h.errors.length).toBe(1);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([5]);
  });

  test("a line that is not JSON is answered -32700 with id null; an invalid request -32600 with its id; neither reaches the server", async () => {
    const h = harness();
    await h.t.start();
    h.stdin.write(`{oops\n{"jsonrpc":"2.0","id":9,"method":5}\n{"jsonrpc":"2.0","method":"notifications/x","params":1}\n${call(10, {})}\n`);
    await until(() => h.received.length === 1 && h.sent().length === 2);
    expect(h.sent().map((m: any) => [m.id, m.error.code])).toEqual([
      [null, -32700],
      [9, -32600],
    ]);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([10]);
    expect(h.errors.length).toBe(3); // each one is logged, the notification included
  });

  test("stdin's end is announced after its last line, even one without a newline; drained() waits for every answer written", async () => {
    const h = harness();
    await h.t.start();
    let ended = false;
    void h.t.inputEnded.then(() => (ended = true));
    h.stdin.end(call(11, {}));
    await h.t.inputEnded;
    expect(ended).toBe(true);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([11]);
    const sends = [1, 2, 3].map((id) => h.t.send({ jsonrpc: "2.0", id, result: { big: "x".repeat(1024 * 1024) } }));
    await h.t.drained();
    await Promise.all(sends);
    await until(() => h.sent().length === 3);
    expect(h.sent().map((m: any) => m.id)).toEqual([1, 2, 3]);
  });
});
