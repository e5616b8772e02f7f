/**
 * Server writes and `worksnap history` reviews running at the same time, in
 * separate processes, on the same conversation's log: nothing is lost, nothing
 * is corrupted, and the history still agrees with the disk afterwards.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession, requireBinary } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

const numbered = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name} ${i + 1}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([requireBinary(), ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

test("parallel rejects (one process each) while the server keeps recording in the same conversation", async () => {
  await using repo = await tmpRepo({ git: false });
  const N = 8;
  for (let i = 0; i < N; i++) repo.write(`a${i}.txt`, text(numbered(`a${i}`, 20)));
  await using s = await mcpSession(repo.root);
  const first = await s.call("workspace_write_file", { mode: "worktree", path: "a0.txt", content: text(["edited", ...numbered("a0", 20).slice(1)]) });
  const conv = first.mcp_conversation_id as string;
  for (let i = 1; i < N; i++) {
    await s.call("workspace_write_file", { mode: "worktree", path: `a${i}.txt`, content: text(["edited", ...numbered(`a${i}`, 20).slice(1)]), mcp_conversation_id: conv });
  }
  const setup = cli(["history", "status", "--json", "--root", repo.root]).json().entries.map((e: { edit_id: string }) => e.edit_id) as string[];
  expect(setup).toHaveLength(N);

  const WRITES = 30;
  const serverWrites = (async () => {
    for (let k = 0; k < WRITES; k++) {
      await s.call("workspace_write_file", { mode: "worktree", path: `new/n${k}.txt`, content: `n${k}\n`, mcp_conversation_id: conv });
    }
  })();
  const rejects = Promise.all(setup.map((id) => run(["history", "reject", id, "--root", repo.root])));
  const readers = Promise.all(
    Array.from({ length: 6 }, async () => {
      const r = await run(["history", "status", "--json", "--root", repo.root]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout).entries.length as number;
    }),
  );
  const [, results, counts] = await Promise.all([serverWrites, rejects, readers]);
  for (const r of results) {
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  }
  for (const c of counts) expect(c).toBeGreaterThanOrEqual(N);

  const after = cli(["history", "status", "--json", "--root", repo.root]).json();
  expect(after.interrupted).toEqual([]);
  expect(after.entries).toHaveLength(N + WRITES);
  const byId = new Map(after.entries.map((e: { edit_id: string; status: string }) => [e.edit_id, e.status]));
  for (const id of setup) expect(byId.get(id)).toBe("rejected");
  expect(after.entries.filter((e: { status: string }) => e.status === "pending")).toHaveLength(WRITES);
  expect(new Set(after.entries.map((e: { tool_call_index: number }) => e.tool_call_index)).size).toBe(N + WRITES);
  const log = readFileSync(join(repo.root, ".mcp/edit_history/logs", `${conv}.log`), "utf8");
  expect(log.endsWith("\n")).toBe(true);
  expect(log.trimEnd().split("\n")).toHaveLength(N + WRITES);
  for (let i = 0; i < N; i++) expect(readFileSync(join(repo.root, `a${i}.txt`), "utf8")).toBe(text(numbered(`a${i}`, 20)));
  for (let k = 0; k < WRITES; k++) expect(readFileSync(join(repo.root, `new/n${k}.txt`), "utf8")).toBe(`n${k}\n`);

  // The history agrees with the disk: accepting the rejected edits (by id) finds no outside change and re-applies them.
  const accepted = cli(["history", "accept", ...setup, "--root", repo.root]);
  expect(accepted.stderr).toBe("");
  expect(accepted.code).toBe(0);
  expect(readFileSync(join(repo.root, "a3.txt"), "utf8")).toStartWith("edited\n");
}, 120_000);
