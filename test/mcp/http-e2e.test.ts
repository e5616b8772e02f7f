/**
 * `worksnap serve --http` through the compiled binary: who may talk to it
 * (token, Origin, Host), what a session is (its own leases, conversations and
 * pins; ended by DELETE or by idling), and that what arrives is screened as
 * on stdio.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { httpServe, requireBinary } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } };
const ACCEPT = "application/json, text/event-stream";

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** The JSON-RPC messages of a response: a JSON body, or the data lines of an SSE stream. */
async function messages(r: Response): Promise<any[]> {
  const text = await r.text();
  if ((r.headers.get("content-type") ?? "").startsWith("application/json")) return [JSON.parse(text)].flat();
  return text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)));
}

/** A raw session: initialize, then notifications/initialized; returns the headers later requests need. */
async function rawSession(url: string, token: string): Promise<Record<string, string>> {
  const auth = { authorization: `Bearer ${token}` };
  const r = await post(url, INIT, auth);
  expect(r.status).toBe(200);
  await messages(r);
  const headers = { ...auth, "mcp-session-id": r.headers.get("mcp-session-id") as string, "mcp-protocol-version": "2025-06-18" };
  expect((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status).toBe(202);
  return headers;
}

/** One HTTP/1.1 request written by hand, for headers fetch will not let a caller set (Host). */
function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let out = "";
    sock.on("data", (d) => (out += d.toString()));
    sock.on("end", () => resolve(out));
    sock.on("error", reject);
    sock.write(`${lines.join("\r\n")}\r\n\r\n`);
  });
}

describe("serve --http: who may talk to it", () => {
  test("no token, a wrong token: 401 with a Bearer challenge; the printed token: a session", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const none = await post(server.url, INIT);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await post(server.url, INIT, { authorization: "Bearer nottheone" })).status).toBe(401);
    expect((await post(server.url, INIT, { authorization: server.token })).status).toBe(401); // no scheme
    expect(server.token).toMatch(/^[0-9a-f]{32}$/);
    const ok = await post(server.url, INIT, { authorization: `Bearer ${server.token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("mcp-session-id")).toBeTruthy();
    expect((await messages(ok))[0].result.serverInfo.name).toBe("worksnap");
  });

  test("a foreign Origin is 403 even with the token; the loopback's own origin at the port is served", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const auth = { authorization: `Bearer ${server.token}` };
    for (const origin of ["http://evil.example", `http://127.0.0.1:${server.port + 1}`, "null", `https://localhost:${server.port}`]) {
      expect({ origin, status: (await post(server.url, INIT, { ...auth, origin })).status }).toEqual({ origin, status: 403 });
    }
    expect((await post(server.url, INIT, { ...auth, origin: `http://localhost:${server.port}` })).status).toBe(200);
  });

  test("a Host that is not the loopback at the port (DNS rebinding) is 403", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const body = JSON.stringify(INIT);
    const request = (host: string) =>
      rawRequest(server.port, [
        "POST /mcp HTTP/1.1",
        `Host: ${host}`,
        `Authorization: Bearer ${server.token}`,
        "Content-Type: application/json",
        `Accept: ${ACCEPT}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        "Connection: close",
        "",
        body,
      ]);
    expect(await request(`attacker.example:${server.port}`)).toStartWith("HTTP/1.1 403");
    expect(await request(`127.0.0.1:${server.port}`)).toStartWith("HTTP/1.1 200");
  });

  test("WORKSNAP_HTTP_TOKEN is the token, and is not printed", async () => {
    await using repo = await tmpRepo();
    const token = "a-token-of-my-own-0123456789";
    await using server = await httpServe(repo.root, [], { env: { WORKSNAP_HTTP_TOKEN: token } });
    expect(server.log()).not.toContain(token);
    await using s = await server.session();
    expect((await s.call("snapshot_list", { path: "." })).cache_hint).toBe("until_dirty");
  });

  test("only /mcp is served", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const r = await fetch(new URL("/", server.url), { headers: { authorization: `Bearer ${server.token}` } });
    expect(r.status).toBe(404);
  });
});

describe("serve --http: what arrives is screened as on stdio", () => {
  test("not JSON is -32700; an invalid request -32600 with its id; bad params of a method the server handles -32602", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const headers = await rawSession(server.url, server.token);
    const notJson = await post(server.url, "{oops", headers);
    expect(notJson.status).toBe(400);
    expect((await messages(notJson))[0].error.code).toBe(-32700);
    const invalid = await post(server.url, { jsonrpc: "1.0", id: "p2", method: "tools/list" }, headers);
    expect(invalid.status).toBe(400);
    expect((await messages(invalid))[0]).toMatchObject({ id: "p2", error: { code: -32600 } });
    const badParams = await post(server.url, { jsonrpc: "2.0", id: "p3", method: "tools/call", params: { name: 7 } }, headers);
    expect((await messages(badParams)).find((m) => m.id === "p3").error.code).toBe(-32602);
    // a tool error is a result, its text sanitised: no absolute path of the machine
    const call = await post(server.url, { jsonrpc: "2.0", id: "p4", method: "tools/call", params: { name: "snapshot_file", arguments: { path: "missing.txt" } } }, headers);
    const answer = (await messages(call)).find((m) => m.id === "p4");
    expect(answer.result.isError).toBe(true);
    expect(JSON.stringify(answer)).not.toContain(repo.root);
  });
});

describe("serve --http: sessions", () => {
  test("each session has its own conversations: history_list shows a session only its own edits", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    await using server = await httpServe(repo.root);
    await using s1 = await server.session();
    await using s2 = await server.session();
    const w1 = await s1.call("workspace_write_file", { path: "one.txt", content: "1\n" });
    // a long content (its string decoded natively) arrives byte for byte over HTTP too
    const long = Array.from({ length: 5000 }, (_, i) => `\t"${i}" é 😀 \u2028\r\n`).join("");
    await s2.call("workspace_write_file", { path: "two.txt", content: long });
    expect(readFileSync(join(repo.root, "two.txt")).equals(Buffer.from(long, "utf8"))).toBe(true);
    const listed = await s1.call("history_list", {});
    const convs = new Set(listed.edits.map((e: { mcp_conversation_id: string }) => e.mcp_conversation_id));
    expect([...convs]).toEqual([w1.mcp_conversation_id]);
  });

  test("DELETE ends a session: its id is 404 afterwards, and other sessions go on", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root);
    const headers = await rawSession(server.url, server.token);
    await using other = await server.session();
    const del = await fetch(server.url, { method: "DELETE", headers });
    expect(del.status).toBe(200);
    const after = await post(server.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, headers);
    expect(after.status).toBe(404);
    expect((await other.call("snapshot_list", { path: "." })).cache_hint).toBe("until_dirty");
  });

  test("a session idle past --idle-timeout is closed (404 afterwards); one that keeps calling stays", async () => {
    await using repo = await tmpRepo();
    await using server = await httpServe(repo.root, ["--idle-timeout", "1s"]);
    const idle = await rawSession(server.url, server.token);
    const busy = await rawSession(server.url, server.token);
    const list = (headers: Record<string, string>, id: number) => post(server.url, { jsonrpc: "2.0", id, method: "tools/list" }, headers);
    for (let i = 0; i < 8; i++) {
      await Bun.sleep(300);
      expect((await list(busy, 10 + i)).status).toBe(200);
    }
    expect((await list(idle, 2)).status).toBe(404);
    expect(server.log()).toContain("expired");
  });

  test("regression: a port in use or an address not of this machine is INVALID_ARGUMENT, never INTERNAL or a shared port", async () => {
    await using repo = await tmpRepo();
    const server = await httpServe(repo.root);
    const port = Number(new URL(server.url).port);
    const second = (listen: string) => {
      // a server that bound the port too would serve on: the timeout ends it, and the test fails on its exit code
      const r = Bun.spawnSync([requireBinary(), "serve", "--http", listen, "--root", repo.root], { stdout: "pipe", stderr: "pipe", timeout: 15_000 });
      return { code: r.exitCode, stderr: r.stderr.toString() };
    };
    const taken = second(`127.0.0.1:${port}`);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`INVALID_ARGUMENT: port ${port} on 127.0.0.1 is in use; pick another in --http`);
    const foreign = second("192.0.2.1:0"); // TEST-NET-1: an address no machine has
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain("INVALID_ARGUMENT: 192.0.2.1 is not an address of this machine");
    const unresolved = second("no-such-host.invalid:0");
    expect(unresolved.code).toBe(1);
    expect(unresolved.stderr).toContain("INVALID_ARGUMENT: cannot listen at no-such-host.invalid:0");
    for (const r of [taken, foreign, unresolved]) expect(r.stderr).not.toContain("INTERNAL");
    // the first server still answers, alone on its port
    await using s = await server.session();
    await s.call("snapshot_list", { path: "." });
    expect(await server.stop()).toBe(0);
  }, 60_000);

  test("SIGTERM closes every session and the server exits 0", async () => {
    await using repo = await tmpRepo();
    const server = await httpServe(repo.root);
    await using s = await server.session();
    await s.call("snapshot_list", { path: "." });
    expect(await server.stop()).toBe(0);
    expect(server.log()).toContain("the server stops");
  });
});

describe("serve --http: the MCP Inspector", () => {
  const inspector = join(import.meta.dir, "..", "..", "node_modules", ".bin", "mcp-inspector");
  const run = (args: string[]) => {
    const r = Bun.spawnSync([inspector, "--cli", ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, MCP_AUTO_OPEN_ENABLED: "false" } });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  test("its CLI lists the tools and calls one with the token; without it, it gets nowhere", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "hello\n");
    repo.commit();
    await using server = await httpServe(repo.root);
    const auth = ["--header", `Authorization: Bearer ${server.token}`];
    const listed = run([server.url, ...auth, "--method", "tools/list"]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).toContain("workspace_write_file");
    const called = run([server.url, ...auth, "--method", "tools/call", "--tool-name", "snapshot_file", "--tool-arg", "path=a.txt"]);
    expect(called.code).toBe(0);
    expect(JSON.parse(called.stdout).structuredContent.content).toBe("hello\n");
    const refused = run([server.url, "--header", "Authorization: Bearer wrong-token", "--method", "tools/list"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).not.toContain("workspace_write_file");
  });
});
