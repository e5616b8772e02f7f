/**
 * Who may talk to the review page, asked over raw HTTP to the compiled
 * binary's server (so Host and Origin can be anything an attacker's page or a
 * rebound DNS name would send): without the token, from another origin or
 * site, or under another host name, nothing is answered and nothing changes.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession, requireBinary } from "../helpers/binary";
import { startReviewPage } from "../helpers/review-page";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 request written by hand, headers exactly as given. */
function raw(port: number, lines: string[], body = ""): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let data = "";
    sock.on("data", (d) => (data += d.toString("latin1")));
    sock.on("error", reject);
    sock.on("end", () => {
      const [head, ...rest] = data.split("\r\n\r\n");
      const [statusLine, ...hs] = head!.split("\r\n");
      const headers: Record<string, string> = {};
      for (const h of hs) {
        const i = h.indexOf(":");
        headers[h.slice(0, i).toLowerCase()] = h.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
    const extra = body ? [`Content-Length: ${Buffer.byteLength(body)}`] : [];
    sock.write(`${[...lines, ...extra, "Connection: close", "", ""].join("\r\n")}${body}`);
  });
}

describe("review page guard (token, Host, Origin)", () => {
  test("every request needs the token; the URL's token becomes an HttpOnly SameSite=Strict cookie and leaves the address bar", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    await agent.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "agent\n" });
    const editId = cli(["history", "status", "--json", "--root", repo.root]).json().entries[0].edit_id as string;
    await using page = await startReviewPage(repo.root);
    const host = `Host: 127.0.0.1:${page.port}`;

    for (const path of ["/", "/app.js", "/app.css", "/api/state", "/api/events", `/api/edits/${editId}`]) {
      const r = await raw(page.port, [`GET ${path} HTTP/1.1`, host]);
      expect({ path, status: r.status }).toEqual({ path, status: 403 });
      expect(r.body).not.toContain("a.txt");
    }
    const wrong = "0".repeat(32);
    expect((await raw(page.port, [`GET /?token=${wrong} HTTP/1.1`, host])).status).toBe(403);
    expect((await raw(page.port, ["GET /api/state HTTP/1.1", host, `Cookie: worksnap_review_${page.port}=${wrong}`])).status).toBe(403);
    expect((await raw(page.port, ["GET /api/state HTTP/1.1", host, `X-Worksnap-Token: ${wrong}`])).status).toBe(403);
    // The token in a query is taken only to open the page, never for the API.
    expect((await raw(page.port, [`GET /api/state?token=${page.token} HTTP/1.1`, host])).status).toBe(403);

    const open = await raw(page.port, [`GET /?token=${page.token} HTTP/1.1`, host]);
    expect(open.status).toBe(303);
    expect(open.headers.location).toBe("/");
    expect(open.headers["set-cookie"]).toBe(`worksnap_review_${page.port}=${page.token}; Path=/; HttpOnly; SameSite=Strict`);
    expect(open.headers["referrer-policy"]).toBe("no-referrer");
    expect(open.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(open.headers["access-control-allow-origin"]).toBeUndefined();

    const cookie = `Cookie: worksnap_review_${page.port}=${page.token}`;
    const html = await raw(page.port, ["GET / HTTP/1.1", host, cookie]);
    expect(html.status).toBe(200);
    expect(html.body).toContain('<script type="module" src="/app.js">');
    // Everything the page needs is embedded: no other host is named in the page, its script or its style.
    for (const path of ["/", "/app.js", "/app.css"]) {
      const r = await raw(page.port, [`GET ${path} HTTP/1.1`, host, cookie]);
      expect(r.status).toBe(200);
      expect({ path, urls: r.body.match(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//gi) ?? [] }).toEqual({ path, urls: [] });
    }
    const state = await raw(page.port, ["GET /api/state HTTP/1.1", host, `X-Worksnap-Token: ${page.token}`]);
    expect(state.status).toBe(200);
    expect(JSON.parse(state.body).conversations[0].edits[0].edit_id).toBe(editId);
  }, 60_000);

  test("another Host (DNS rebinding), another Origin or site, and form posts are refused, and nothing is written", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    await agent.call("workspace_write_file", { mode: "worktree", path: "a.txt", content: "agent\n" });
    const editId = cli(["history", "status", "--json", "--root", repo.root]).json().entries[0].edit_id as string;
    await using page = await startReviewPage(repo.root);
    const token = `X-Worksnap-Token: ${page.token}`;
    const cookie = `Cookie: worksnap_review_${page.port}=${page.token}`;
    const body = JSON.stringify({ action: "reject", edit_ids: [editId] });
    const post = (headers: string[]) => raw(page.port, ["POST /api/review HTTP/1.1", ...headers], body);

    expect((await raw(page.port, ["GET /api/state HTTP/1.1", `Host: evil.example:${page.port}`, token])).status).toBe(421);
    expect((await raw(page.port, ["GET /api/state HTTP/1.1", "Host: 127.0.0.1:1", token])).status).toBe(421);
    expect((await raw(page.port, ["GET /api/state HTTP/1.1", `Host: localhost:${page.port}`, token])).status).toBe(200);
    const host = `Host: 127.0.0.1:${page.port}`;
    expect((await post([host, cookie, "Content-Type: application/json", "Origin: http://evil.example"])).status).toBe(403);
    expect((await post([host, cookie, "Content-Type: application/json", `Origin: http://127.0.0.1:${page.port + 1}`])).status).toBe(403);
    expect((await post([host, cookie, "Content-Type: application/json", "Sec-Fetch-Site: cross-site"])).status).toBe(403);
    expect((await post([host, cookie, "Content-Type: application/x-www-form-urlencoded"])).status).toBe(415);
    expect((await post([host, cookie, "Content-Type: text/plain"])).status).toBe(415);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("agent\n");
    expect(cli(["history", "status", "--json", "--root", repo.root]).json().entries[0].status).toBe("pending");

    // The same request from the page's own origin goes through the review, as `worksnap history reject` would.
    const ok = await post([host, cookie, "Content-Type: application/json", `Origin: http://127.0.0.1:${page.port}`, "Sec-Fetch-Site: same-origin"]);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).changed[0]).toMatchObject({ edit_id: editId, from: "pending", to: "rejected" });
    expect(cli(["history", "status", "--json", "--root", repo.root]).json().entries[0].status).toBe("rejected");
  }, 60_000);

  test("regression: a malformed address is a typed error with the page's headers, never the runtime's error page", async () => {
    await using repo = await tmpRepo({ git: false });
    await using page = await startReviewPage(repo.root);
    const host = `Host: 127.0.0.1:${page.port}`;
    const token = `X-Worksnap-Token: ${page.token}`;
    const paths = ["/api/edits/%E0%A4%A", "/api/edits/%", "/api/edits/%00", "/api/edits/..%2F..%2F.git%2Fconfig", `/api/edits/${"a".repeat(6000)}`, "/%ZZ", "/api/%E0"];
    for (const path of paths) {
      const r = await raw(page.port, [`GET ${path} HTTP/1.1`, host, token]);
      expect({ path, status: r.status }).toMatchObject({ path, status: expect.any(Number) });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(r.body).not.toContain("<!doctype");
      expect(r.body).not.toContain(repo.root);
      expect(r.body).not.toContain("$bunfs");
    }
    const bad = await raw(page.port, ["GET /api/edits/%E0%A4%A HTTP/1.1", host, token]);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatchObject({ code: "INVALID_ARGUMENT" });
    // the server still answers afterwards
    expect((await raw(page.port, ["GET /api/state HTTP/1.1", host, token])).status).toBe(200);
  }, 60_000);

  test("errors are the review's typed errors; `mcpdiff review` is the same page; a taken --port is a clear refusal", async () => {
    await using repo = await tmpRepo({ git: false });
    await using bin = tmpDir("ws-mcpdiff-");
    symlinkSync(requireBinary(), join(bin.path, "mcpdiff"));
    await using page = await startReviewPage(repo.root, [join(bin.path, "mcpdiff"), "review"]);
    const host = `Host: 127.0.0.1:${page.port}`;
    const token = `X-Worksnap-Token: ${page.token}`;
    const r = await raw(page.port, ["POST /api/review HTTP/1.1", host, token, "Content-Type: application/json"], JSON.stringify({ action: "reject", edit_ids: ["nope1234"] }));
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error).toMatchObject({ code: "NOT_FOUND" });
    const bad = await raw(page.port, ["POST /api/review HTTP/1.1", host, token, "Content-Type: application/json"], JSON.stringify({ action: "delete" }));
    expect(bad.status).toBe(400);

    const taken = cli(["history", "review", "--port", String(page.port), "--root", repo.root]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`port ${page.port} on 127.0.0.1 is in use`);
    const usage = cli(["history", "review", "--port", "x", "--root", repo.root]);
    expect(usage.code).toBe(2);
  }, 60_000);
});
