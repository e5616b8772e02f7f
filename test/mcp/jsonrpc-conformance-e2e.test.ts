/**
 * JSON-RPC 2.0 as MCP speaks it, checked byte by byte against the compiled
 * server: whatever a client writes, a request with an id gets exactly one
 * answer with that id (or id null when the id is unreadable), a notification
 * never gets one, and the connection keeps working. Before, every malformed
 * message was dropped in silence and its sender waited forever.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { mcpSession } from "../helpers/binary";
import { rawServer, type RawServer } from "../helpers/raw-mcp";
import { tmpRepo } from "../helpers/tmp-repo";

/** Writes `line`, then a ping: everything answered before the ping's answer is the answer to `line`. */
async function answersTo(s: RawServer, line: string | Uint8Array): Promise<any[]> {
  const before = s.lines.length;
  const marker = `marker-${before}-${Math.random()}`;
  s.write(line);
  s.write(`{"jsonrpc":"2.0","id":"${marker}","method":"ping"}\n`);
  await s.until(() => s.answersTo(marker).length > 0, `the ping after ${String(line).slice(0, 80)}`);
  const got = s.lines.slice(before);
  expect(got.at(-1)).toEqual({ jsonrpc: "2.0", id: marker, result: {} });
  return got.slice(0, -1);
}

const ping = (id: unknown) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`;

describe("JSON-RPC conformance of dist/worksnap serve", () => {
  test("garbage gets -32700 with id null (it got no answer)", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    for (const garbage of ["{oops\n", "}{\n", '"unterminated\n', "{'single': 'quotes'}\n", "\x00\x01\x02\n", Buffer.from([0xff, 0xfe, 0x7b, 0x0a])]) {
      const got = await answersTo(s, garbage);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    }
  });

  test("JSON that is no message gets -32600 with id null", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    for (const v of ["42", '"ping"', "null", "true", "{}", '{"jsonrpc":"2.0"}']) {
      const got = await answersTo(s, `${v}\n`);
      expect({ v, got }).toMatchObject({ v, got: [{ jsonrpc: "2.0", id: null, error: { code: -32600 } }] });
    }
  });

  test("a request with an id but an invalid shape gets -32600 with its id (it got no answer)", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    const cases: [string, unknown][] = [
      ['{"jsonrpc":"1.0","id":1,"method":"ping"}', 1],
      ['{"id":2,"method":"ping"}', 2],
      ['{"jsonrpc":2.0,"id":3,"method":"ping"}', 3],
      ['{"jsonrpc":"2.0","id":4}', 4],
      ['{"jsonrpc":"2.0","id":"five","method":5}', "five"],
      ['{"jsonrpc":"2.0","id":6,"method":"ping","extra":true}', 6],
      ['{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}', 7],
    ];
    for (const [line, id] of cases) {
      const got = await answersTo(s, `${line}\n`);
      expect({ line, got }).toMatchObject({ line, got: [{ jsonrpc: "2.0", id, error: { code: -32600 } }] });
      expect(typeof got[0].error.message).toBe("string");
    }
  });

  test("params of the wrong type get -32602 with the id (they got -32603 carrying zod's JSON, or nothing)", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    const cases: [string, string][] = [
      ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"snapshot_list"}', "params"],
      ['{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2]}', "params"],
      ['{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":7}}', "params.name"],
      ['{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"snapshot_list","arguments":"mode=worktree"}}', "params.arguments"],
      ['{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{}}', "params.name"],
      ['{"jsonrpc":"2.0","id":15,"method":"initialize","params":{}}', "params.protocolVersion"],
      ['{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"cursor":5}}', "params.cursor"],
      ['{"jsonrpc":"2.0","id":17,"method":"ping","params":null}', "params"],
      ['{"jsonrpc":"2.0","id":18,"method":"resources/read","params":{"uri":42}}', "params.uri"],
    ];
    for (const [line, names] of cases) {
      const id = JSON.parse(line).id;
      const got = await answersTo(s, `${line}\n`);
      expect({ line, got }).toMatchObject({ line, got: [{ jsonrpc: "2.0", id, error: { code: -32602 } }] });
      expect(got[0].error.message).toContain(names);
      expect(got[0].error.message).not.toContain('"code":'); // not zod's JSON dump
    }
  });

  test("an unknown tool is a JSON-RPC error -32602 (MCP's rule; it was an isError result); an unknown method -32601", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    const tool = await s.request("tools/call", { name: "snapshot_nothing", arguments: {} }, "t1");
    expect(tool).toEqual({ jsonrpc: "2.0", id: "t1", error: { code: -32602, message: "Unknown tool: snapshot_nothing", data: { tool: "snapshot_nothing" } } });
    const method = await s.request("prompts/list", {}, "m1");
    expect(method).toMatchObject({ jsonrpc: "2.0", id: "m1", error: { code: -32601 } });
    // the served names decide: the spec's dotted name is unknown when underscores are served
    expect((await s.request("tools/call", { name: "snapshot.list", arguments: { mode: "worktree" } }, "t2")).error.code).toBe(-32602);

    // and the SDK's own client sees a protocol error, not a tool result
    await using c = await mcpSession(repo.root);
    const err = await c.raw("no_such_tool", {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });

  test("notifications with bad shapes get no answer, whatever is wrong with them", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    for (const line of [
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled"}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}',
      '{"jsonrpc":"1.0","method":"notifications/initialized"}',
      '{"method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","method":"no/such/notification","params":{"a":1}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized","extra":1}',
      '{"jsonrpc":"2.0","id":424242,"result":{}}', // a response to nothing we asked
      '{"jsonrpc":"2.0","id":424243,"error":{"code":1,"message":"x"}}',
      '[{"jsonrpc":"2.0","method":"notifications/initialized"}]', // a batch of notifications only
    ]) {
      expect({ line, got: await answersTo(s, `${line}\n`) }).toEqual({ line, got: [] });
    }
  });

  test("a batch gets one array: -32600 for each member that expects an answer, notifications left out", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: "b", method: "tools/list" },
      5,
    ];
    const got = await answersTo(s, `${JSON.stringify(batch)}\n`);
    expect(got).toHaveLength(1);
    expect(Array.isArray(got[0])).toBe(true);
    expect(got[0].map((r: any) => [r.id, r.error.code])).toEqual([
      [1, -32600],
      ["b", -32600],
      [null, -32600],
    ]);
    expect(got[0][0].error.message).toContain("batch");
    expect(await answersTo(s, "[]\n")).toMatchObject([{ id: null, error: { code: -32600 } }]);
  });

  test("an id of every JSON type: strings and integers are echoed, anything else answered with id null", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    for (const id of ["", "abc", "ü☃\u{1F600}", "1", 0, -1, Number.MAX_SAFE_INTEGER]) {
      expect(await answersTo(s, ping(id))).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
    }
    for (const line of [ping(1.5), ping(true), ping(null), ping({}), ping([1]), ping(1e300), '{"jsonrpc":"2.0","id":-0.5,"method":"ping"}\n']) {
      expect({ line, got: await answersTo(s, line) }).toMatchObject({ line, got: [{ jsonrpc: "2.0", id: null, error: { code: -32600 } }] });
    }
  });

  test("huge messages: a 20 MB call is answered, 40 MB of garbage gets -32700, a 20 MB request with bad params -32602 with its id", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    await using s = await rawServer(repo.root);
    const big = "x".repeat(20 * 1024 * 1024);
    const write = await s.request("tools/call", { name: "workspace_write_file", arguments: { mode: "worktree", path: "big.txt", content: big } }, "big");
    expect(write.result.isError).toBeUndefined();
    expect((await answersTo(s, `{${"z".repeat(40 * 1024 * 1024)}\n`)).map((r) => [r.id, r.error.code])).toEqual([[null, -32700]]);
    const invalid = await answersTo(s, `{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":"${"p".repeat(20 * 1024 * 1024)}"}\n`);
    expect(invalid.map((r) => [r.id, r.error.code])).toEqual([["huge", -32602]]);
  });

  test("long strings a parser could trip on: each line answered as JSON.parse reads it, with its id, and nothing written wrong", async () => {
    await using repo = await tmpRepo();
    await using s = await rawServer(repo.root);
    const long = "q".repeat(100_000);
    // not JSON, every way a long string can be broken: -32700 with id null
    for (const broken of [`"${long}\x01"`, `"${long}\\x"`, `"${long}\\u12g4"`, `"${long}`, `"${long}" "x"`, `'${long}'`]) {
      const line = `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"workspace_write_file","arguments":{"path":"b.txt","content":${broken}}}}\n`;
      expect((await answersTo(s, line)).map((r) => [r.id, r.error?.code])).toEqual([[null, -32700]]);
    }
    // JSON whose long strings the native decoder declines or must not take for markers: parsed as they are
    // a tool call is answered after the ping that follows it: wait for its own id
    const call = async (id: string, args: string) => {
      s.write(`{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"workspace_write_file","arguments":${args}}}\n`);
      await s.until(() => s.answersTo(id).length > 0, `the answer to ${id}`);
      await Bun.sleep(50); // a second answer to the same id would have come by now
      return s.answersTo(id);
    };
    const keyed = await call("key", `{"path":"k.txt","content":"k","${long}":1}`);
    expect(keyed.map((r) => [r.id, r.result.isError, r.result.structuredContent.error.code])).toEqual([["key", true, "INVALID_ARGUMENT"]]);
    const marker = "\\u0000worksnap-long-string-00000000000000000000000000000000-0";
    const guessed = await call("guess", `{"path":"g.txt","content":"${marker}","mode":"worktree"}`);
    expect(guessed.map((r) => [r.id, r.result.isError])).toEqual([["guess", undefined]]);
    expect(readFileSync(join(repo.root, "g.txt"), "utf8")).toBe("\u0000worksnap-long-string-00000000000000000000000000000000-0");
    const many = Array.from({ length: 65 }, (_, i) => `"${long}${i}"`).join(",");
    const manyStrings = await call("many", `{"path":"m.txt","content":"${long}é\\n","extra":[${many}]}`);
    expect(manyStrings.map((r) => [r.id, r.result.structuredContent.error.code])).toEqual([["many", "INVALID_ARGUMENT"]]);
    const surrogate = await call("lone", `{"path":"l.txt","content":"${long}\\ud800\\n","mode":"worktree"}`);
    expect(surrogate.map((r) => [r.id, r.result.isError])).toEqual([["lone", undefined]]);
    expect(readFileSync(join(repo.root, "l.txt")).equals(Buffer.from(`${long}\ud800\n`, "utf8"))).toBe(true);
    // a guess at the marker beside a long string in the same message (in _meta, which a tool never reads) stays itself
    s.write(`{"jsonrpc":"2.0","id":"both","method":"tools/call","params":{"_meta":{"note":"${long}\\t"},"name":"workspace_write_file","arguments":{"path":"p.txt","content":"${marker}","mode":"worktree"}}}\n`);
    await s.until(() => s.answersTo("both").length > 0, "the answer to both");
    expect(s.answersTo("both")[0].result.isError).toBeUndefined();
    expect(readFileSync(join(repo.root, "p.txt"), "utf8")).toBe("\u0000worksnap-long-string-00000000000000000000000000000000-0");
  });

  test("after all of it the server still serves, and a line without its final newline at EOF is still answered", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    await using s = await rawServer(repo.root);
    await answersTo(s, "{oops\n[]\n42\n");
    const list = await s.request("tools/call", { name: "snapshot_list", arguments: { mode: "worktree" } }, "ok");
    expect(list.result.structuredContent.entries.map((e: any) => e.path)).toEqual(["a.txt"]);
    s.write('{"jsonrpc":"2.0","id":"last","method":"tools/list"}');
    expect(await s.end()).toBe(0);
    expect(s.answersTo("last")).toHaveLength(1);
    expect(s.answersTo("last")[0].result.tools.length).toBeGreaterThan(5);
  });
});
