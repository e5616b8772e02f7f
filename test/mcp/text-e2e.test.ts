/**
 * The text contract through the compiled binary and the MCP SDK's own Client
 * (which validates every structuredContent against the tool's output schema):
 * by default content[0].text is each tool's compact rendering of the
 * structured answer (the session helper checks every call against the
 * renderer); `serve --text json` gives back the canonical JSON of
 * structuredContent. Ids in the text are prefixes the tools take back.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli, expectedText, mcpSession, type McpSession } from "../helpers/binary";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write("src/app.ts", "export function main() {\n  return 1;\n}\n");
  repo.write("src/util.ts", "export const util = 2;\n");
  repo.write("README.md", "# demo\n");
  repo.commit();
}

/** Every tool once, through `call` (which holds each text to its contract); returns the texts by tool. */
async function everyTool(s: McpSession, json: boolean): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const call = async (name: string, args: Record<string, unknown>) => {
    const r: any = await s.raw(name, args);
    if (r.isError) throw new Error(`${name} failed: ${r.content[0].text}`);
    expect(r.content[0].text).toBe(expectedText(name, r.structuredContent, args, json));
    texts.set(name, r.content[0].text);
    return r.structuredContent;
  };
  const snap = await call("snapshot_create", { paths: ["."] });
  await call("snapshot_info", { snapshot_id: snap.snapshot_id.slice(7, 19) });
  const list = await call("snapshot_list", { path: "src" });
  const grep = await call("snapshot_grep", { pattern: "return", context_lines: 1, lease_id: list.lease_id.slice(0, 18) });
  await call("snapshot_file", { path: "src/app.ts", start_line: 1, end_line: 2, lease_id: grep.lease_id.slice(0, 18) });
  const patch = await call("workspace_apply_patch", { patch: "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -2 +2 @@\n-  return 1;\n+  return 10;\n" });
  const conv = patch.mcp_conversation_id;
  const w = await call("workspace_write_file", { path: "notes.md", content: "one\n", mcp_conversation_id: conv });
  await call("workspace_write_file", { path: "notes.md", content: "one\ntwo\n", expected_blob: w.blob.slice(7, 19), mcp_conversation_id: conv });
  await call("workspace_move", { from: "notes.md", to: "docs/notes.md", mcp_conversation_id: conv });
  await call("snapshot_changes", { from: "HEAD", to: "worktree" });
  await call("snapshot_diff", { from: snap.snapshot_id.slice(7, 19), to: "worktree", paths: ["src"] });
  await call("workspace_delete", { path: "docs/notes.md", mcp_conversation_id: conv });
  await call("snapshot_export", { snapshot_id: snap.snapshot_id, paths: ["src"] });
  await call("history_list", { include_diff: true, limit: 3 });
  await call("history_undo", { last: 1 });
  return texts;
}

describe("the text a model reads", () => {
  test("every tool answers with its compact rendering; ids are 12-hex prefixes the tools took back; no JSON, no full hashes", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using s = await mcpSession(repo.root);
    const texts = await everyTool(s, false);
    // Every tool with a structured answer (the text-only task tools are held to their wire format in task-e2e).
    expect([...texts.keys()].sort()).toEqual((await s.client.listTools()).tools.filter((t) => t.outputSchema).map((t) => t.name).sort());
    for (const [tool, text] of texts) {
      expect({ tool, json: text.trimStart().startsWith("{") }).toEqual({ tool, json: false });
      const withoutPaths = text.replace(/\.mcp\/exports\/[0-9a-f]{64}\.tar/g, "");
      expect({ tool, fullIds: /[0-9a-f]{32}/.test(withoutPaths) }).toEqual({ tool, fullIds: false });
    }
    expect(texts.get("snapshot_diff")).toContain("+  return 10;");
    expect(texts.get("workspace_apply_patch")).toContain("-  return 1;\n+  return 10;");
    expect(readFileSync(join(repo.root, "src/app.ts"), "utf8")).toContain("return 10;");
  });

  test("--text json: content[0].text is the canonical JSON of structuredContent, for answers and errors", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using s = await mcpSession(repo.root, ["--text", "json"]);
    const texts = await everyTool(s, true);
    for (const [, text] of texts) expect(text.startsWith("{")).toBe(true);
    const r: any = await s.raw("snapshot_file", { path: "missing.ts" });
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    expect(r.structuredContent.error.code).toBe("NOT_FOUND");
  });

  test("errors carry everything in their text: code, message, the changed file and fingerprint of STALE_LEASE", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.write("src/util.ts", "export const util = 3;\n");
    await using s = await mcpSession(repo.root);
    const read = await s.call("snapshot_file", { path: "src/util.ts" });
    repo.write("src/util.ts", "export const util = 4;\n");
    const r: any = await s.raw("workspace_write_file", { path: "src/util.ts", content: "x\n", lease_id: read.lease_id.slice(0, 18) });
    expect(r.isError).toBe(true);
    const text: string = r.content[0].text;
    expect(text).toStartWith("error STALE_LEASE: ");
    expect(text).toContain("\nchanged: src/util.ts (read ");
    expect(text).toMatch(/\nfingerprint: head [0-9a-f]{12} · index [0-9a-f]{12} · status [0-9a-f]{12}/);
    const e = await s.callError("snapshot_list", { path: "nope" });
    expect(e.code).toBe("NOT_FOUND");
  });

  test("a name holding a line break of any kind (U+2028, NEL, a C1 control) is shown on one line, as a JSON string that parses back to it", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using s = await mcpSession(repo.root);
    const names = ["docs/line\nbreak.md", "docs/sep\u2028arator.md", "docs/next\u0085line.md", "docs/csi\u009b2J.md", '"quoted".md', "docs/tab\there.md"];
    for (const name of names) await s.call("workspace_write_file", { path: name, content: "x\n" });
    const text = async (tool: string, args: Record<string, unknown>) => ((await s.raw(tool, args)) as any).content[0].text as string;
    const quotedIn = (t: string): string[] => (t.match(/"(?:[^"\\]|\\.)*"/g) ?? []).map((q) => JSON.parse(q));
    const whole = { changes: await text("snapshot_changes", { from: "HEAD", to: "worktree" }), history: await text("history_list", { limit: 10 }), grep: await text("snapshot_grep", { pattern: "^x$" }) };
    const listed = await text("snapshot_list", { path: "docs" });
    for (const [what, t] of [...Object.entries(whole), ["list", listed]]) expect({ what, raw: /[\r\t\x7f-\x9f\u2028\u2029]/.test(t!) }).toEqual({ what, raw: false });
    for (const [what, t] of Object.entries(whole)) expect({ what, names: quotedIn(t).filter((q) => names.includes(q)).sort() }).toEqual({ what, names: [...names].sort() });
    expect(quotedIn(listed).sort()).toEqual(names.filter((n) => n.startsWith("docs/")).map((n) => n.slice(5)).sort());
    for (const name of quotedIn(whole.changes).filter((q) => names.includes(q))) expect((await s.call("snapshot_file", { path: name })).content).toBe("x\n");
  });

  test("serve refuses an unknown --text value", () => {
    const r = cli(["serve", "--text", "yaml"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--text must be compact or json");
  });
});
