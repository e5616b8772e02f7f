/**
 * Golden text answers: what a model reads from each tool (content[0].text),
 * for every answer shape (success, empty, cut with a cursor, rejects,
 * errors). Each answer is produced by the tool itself (arguments parsed as
 * the server parses them, the op run on a real repository) and rendered by
 * the tool's own renderer; only what is random by design (lease and
 * conversation ids, creation times) is fixed before rendering.
 * UPDATE_GOLDEN=1 rewrites the files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { asWorksnapError } from "../../../src/core/errors";
import { type ToolContext, parseArgs } from "../../../src/mcp/define-tool";
import { renderError } from "../../../src/mcp/render/error";
import { McpSession } from "../../../src/mcp/session";
import { TOOLS } from "../../../src/mcp/tool-list";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { expectGolden } from "../../helpers/golden";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

const LEASE = `lease_${"0123456789abcdef".repeat(2)}`;
const CONV = "conv_1700000000000_0123456789ab";

/** Edit ids (random UUIDs) in the order they are first seen, as fixed ids. */
const editIds = new Map<string, string>();
const editId = (id: string) => {
  if (!editIds.has(id)) editIds.set(id, `${String(editIds.size + 1).padStart(8, "0")}-0000-4000-8000-000000000000`);
  return editIds.get(id) as string;
};

/** Ids that are random by design, fixed so the text can be pinned; everything else is the tool's answer as it is. */
function stable(out: Record<string, unknown>): Record<string, unknown> {
  const s = JSON.parse(JSON.stringify(out, (k, v) => (k === "edit_id" ? editId(v) : k === "mcp_conversation_id" && typeof v === "string" ? CONV : v)));
  if (Array.isArray(s.already_undone)) s.already_undone = s.already_undone.map(editId);
  if (typeof s.lease_id === "string") s.lease_id = LEASE;
  if (typeof s.note === "string") s.note = s.note.replace(/conv_\d+_[0-9a-f]+/g, CONV);
  if (typeof s.created_at === "string") s.created_at = "2026-01-01T00:00:00.000Z";
  return s;
}

let repo: TmpRepo;
let ws: Workspace;
/** One MCP session for the file, as one connection would be: the history tools see the conversations it started. */
const session = new McpSession();
let snapshot: string;

async function run(tool: string, raw: Record<string, unknown>, own = session): Promise<{ answer: Record<string, unknown>; out: Record<string, unknown>; text: string }> {
  const def = TOOLS.find((t) => t.name === tool)!;
  const args = parseArgs(def, raw);
  const ctx: ToolContext = { ws, session: own, signal: new AbortController().signal, progress: () => undefined };
  const answer = (await def.run(args, ctx)) as Record<string, unknown>;
  const out = stable(answer);
  return { answer, out, text: def.text!(out, args) };
}

async function failure(tool: string, raw: Record<string, unknown>): Promise<string> {
  const def = TOOLS.find((t) => t.name === tool)!;
  const ctx: ToolContext = { ws, session, signal: new AbortController().signal, progress: () => undefined };
  try {
    await def.run(parseArgs(def, raw), ctx);
  } catch (err) {
    const e = asWorksnapError(err);
    const details = { ...e.details };
    if (typeof details.lease_id === "string") details.lease_id = LEASE;
    return renderError({ code: e.code, message: e.message.replace(/lease_[0-9a-f]+/g, LEASE), details });
  }
  throw new Error(`${tool} succeeded`);
}

const golden = (name: string, text: string) => expectGolden(`render/${name}.txt`, `${text}\n`);

const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}\n`).join("");

beforeAll(async () => {
  repo = await tmpRepo();
  repo.write("README.md", "# Demo\n\nA small repository.\n");
  repo.write("src/app.ts", "import { helper } from './util';\n\nexport function main() {\n  return helper(1) + helper(2);\n}\n");
  repo.write("src/util.ts", "export function helper(n: number) {\n  return n * 2;\n}\n");
  repo.write("src/deep/nested/leaf.ts", "export const leaf = true;\n");
  repo.write("src/deep/other.ts", "export const other = 'helper';\n");
  repo.write("docs/long.txt", numbered(300));
  repo.write("docs/with space.md", "spaces\n");
  repo.write("docs/no-newline.txt", "first\nlast");
  repo.write("bin/run", "#!/bin/sh\necho run\n", 0o755);
  repo.write("img.bin", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  repo.write("empty.txt", "");
  repo.write(".gitignore", "build/\n");
  repo.write("build/out.js", "ignored\n");
  repo.symlink("link", "src/util.ts");
  repo.commit("first");
  ws = openWorkspace(repo.root);
  snapshot = ((await run("snapshot_create", { paths: ["."] })).out.snapshot_id as string).slice(7, 19);
});

afterAll(async () => {
  closeWorkspace(ws);
  await repo[Symbol.asyncDispose]();
});

describe("text answers, pinned", () => {
  test("snapshot_list: a directory, a subdirectory, recursive, cut by limit, a file, an uncaptured path", async () => {
    golden("list-root", (await run("snapshot_list", {})).text);
    golden("list-subdirectory", (await run("snapshot_list", { path: "docs" })).text);
    golden("list-recursive", (await run("snapshot_list", { path: "src", recursive: true })).text);
    golden("list-truncated", (await run("snapshot_list", { recursive: true, limit: 4 })).text);
    golden("list-file", (await run("snapshot_list", { path: "bin/run" })).text);
    golden("list-snapshot-empty", (await run("snapshot_list", { snapshot_id: snapshot, path: "nowhere" })).text);
  });

  test("snapshot_file: a range, a whole file, no final newline, empty, binary, a symlink in a snapshot, cut at the size limit", async () => {
    golden("file-range", (await run("snapshot_file", { path: "docs/long.txt", start_line: 10, end_line: 14 })).text);
    golden("file-whole", (await run("snapshot_file", { path: "src/util.ts" })).text);
    golden("file-no-final-newline", (await run("snapshot_file", { path: "docs/no-newline.txt" })).text);
    golden("file-empty", (await run("snapshot_file", { path: "empty.txt" })).text);
    golden("file-binary", (await run("snapshot_file", { path: "img.bin" })).text);
    golden("file-snapshot-symlink", (await run("snapshot_file", { snapshot_id: snapshot, path: "link" })).text);
    golden("file-worktree-through-symlink", (await run("snapshot_file", { path: "link" })).text);
    repo.write("docs/huge.txt", `${"x".repeat(1000)}\n`.repeat(300));
    const cut = await run("snapshot_file", { path: "docs/huge.txt", start_line: 1, end_line: 300 });
    expect(cut.out.truncated).toBe(true);
    golden("file-cut", cut.text.split("\n").filter((l) => !l.startsWith("xxx")).join("\n"));
    rmSync(join(repo.root, "docs/huge.txt"));
  });

  test("snapshot_grep: files with matches, context, several matches on a line, no match, cut with a cursor", async () => {
    golden("grep-matches", (await run("snapshot_grep", { pattern: "helper" })).text);
    golden("grep-context", (await run("snapshot_grep", { pattern: "return", context_lines: 1 })).text);
    golden("grep-none", (await run("snapshot_grep", { pattern: "nothing-like-this", fixed_strings: true })).text);
    golden("grep-cursor", (await run("snapshot_grep", { pattern: "line 1\\d", paths: ["docs"], max_matches: 3 })).text);
  });

  test("snapshot_create, snapshot_info, snapshot_export", async () => {
    golden("create", (await run("snapshot_create", { paths: ["src"] })).text);
    golden("info", (await run("snapshot_info", { snapshot_id: snapshot })).text);
    golden("export-narrowed", (await run("snapshot_export", { snapshot_id: snapshot, paths: ["src"] })).text);
  });

  test("snapshot_changes and snapshot_diff: snapshot and revision sides, no change, cut with a cursor, omitted files", async () => {
    repo.write("src/util.ts", "export function helper(n: number) {\n  return n * 3;\n}\n");
    repo.write("src/added.ts", "export const added = 1;\n");
    rmSync(join(repo.root, "README.md"));
    chmodSync(join(repo.root, "bin/run"), 0o644);
    golden("changes", (await run("snapshot_changes", { from: snapshot, to: "worktree" })).text);
    golden("changes-head", (await run("snapshot_changes", { from: "HEAD", to: "worktree", paths: ["src"] })).text);
    golden("changes-cursor", (await run("snapshot_changes", { from: "HEAD", to: "worktree", limit: 2 })).text);
    golden("changes-none", (await run("snapshot_changes", { from: snapshot, to: snapshot })).text);
    golden("diff", (await run("snapshot_diff", { from: "HEAD", to: "worktree" })).text);
    golden("diff-none", (await run("snapshot_diff", { from: "HEAD", to: "HEAD" })).text);
    repo.git("checkout", "--", ".");
    rmSync(join(repo.root, "src/added.ts"));
    // One hunk too large for any answer (omitted), and a file whose hunks fill more than a page (cut inside it).
    const wide = (i: number, tag: string) => `${String(i).padStart(5, "0")} ${tag.repeat(40)}\n`;
    repo.write("data/block.txt", Array.from({ length: 3000 }, (_, i) => wide(i, "a")).join(""));
    repo.write("data/spread.txt", Array.from({ length: 4000 }, (_, i) => wide(i, "b")).join(""));
    repo.commit("data");
    repo.write("data/block.txt", Array.from({ length: 3000 }, (_, i) => wide(i, "A")).join(""));
    repo.write("data/spread.txt", Array.from({ length: 4000 }, (_, i) => wide(i, i % 10 === 0 ? "B" : "b")).join(""));
    const paged = await run("snapshot_diff", { from: "HEAD", to: "worktree", paths: ["data"] });
    expect(paged.out.truncated).toBe(true);
    golden("diff-omitted-and-cut", paged.text.split("\n").filter((l) => !/^[-+ @]/.test(l) || l.startsWith("--- ") || l.startsWith("+++ ")).join("\n"));
    repo.git("reset", "-q", "--hard", "HEAD~1");
  });

  test("workspace_apply_patch: applied (moved hunk, warning, new conversation), rejected with the current text, in a snapshot", async () => {
    const applied = await run("workspace_apply_patch", {
      patch: "--- a/docs/long.txt\n+++ b/docs/long.txt\n@@ -5,3 +5,3 @@\n line 7\n-line 8\n+line eight\n line 9\n",
    });
    golden("patch-applied", applied.text);
    const rejected = await run("workspace_apply_patch", {
      patch: "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -3,3 +3,3 @@\n export function main() {\n-  return helper(1) + helper(3);\n+  return 0;\n }\n",
      mcp_conversation_id: CONV,
    });
    golden("patch-rejected", rejected.text);
    golden(
      "patch-snapshot",
      (await run("workspace_apply_patch", { snapshot_id: snapshot, patch: "--- /dev/null\n+++ b/NEW.md\n@@ -0,0 +1 @@\n+new\n" })).text,
    );
    repo.git("checkout", "--", ".");
  });

  test("workspace_write_file: created, modified with its diff, unchanged, through a symlink", async () => {
    golden("write-created", (await run("workspace_write_file", { path: "notes/todo.md", content: "- one\n" })).text);
    golden("write-modified", (await run("workspace_write_file", { path: "notes/todo.md", content: "- one\n- two\n", mcp_conversation_id: CONV })).text);
    golden("write-unchanged", (await run("workspace_write_file", { path: "notes/todo.md", content: "- one\n- two\n", mcp_conversation_id: CONV })).text);
    golden("write-through-symlink", (await run("workspace_write_file", { path: "link", content: "export const helper = 0;\n", mcp_conversation_id: CONV })).text);
    repo.git("checkout", "--", ".");
  });

  test("workspace_move and workspace_delete: a file, a directory with an ignored file kept", async () => {
    golden("move-file", (await run("workspace_move", { from: "notes/todo.md", to: "notes/done.md", mcp_conversation_id: CONV })).text);
    repo.write("src/deep/build/cache.js", "ignored\n");
    repo.write(".gitignore", "build/\n");
    golden("move-directory", (await run("workspace_move", { from: "src/deep", to: "lib/deep", mcp_conversation_id: CONV })).text);
    golden("delete-file", (await run("workspace_delete", { path: "notes/done.md", mcp_conversation_id: CONV })).text);
    golden("delete-directory", (await run("workspace_delete", { path: "lib", recursive: true, mcp_conversation_id: CONV })).text);
  });

  test("errors: STALE_LEASE (the tree moved, or a file read under the lease changed), NOT_FOUND, INVALID_ARGUMENT, REPO_CHANGED, an ambiguous side", async () => {
    const read = await run("snapshot_file", { path: "src/app.ts" });
    repo.write("src/app.ts", "changed\n");
    golden("error-stale-lease", await failure("workspace_write_file", { path: "src/app.ts", content: "x\n", lease_id: read.answer.lease_id as string }));
    repo.git("checkout", "--", ".");
    repo.write("src/util.ts", "dirty once\n");
    const dirty = await run("snapshot_file", { path: "src/util.ts" });
    repo.write("src/util.ts", "dirty twice\n");
    golden("error-stale-file", await failure("workspace_write_file", { path: "src/util.ts", content: "x\n", lease_id: dirty.answer.lease_id as string }));
    golden("error-not-found", await failure("snapshot_file", { path: "missing.ts" }));
    golden("error-invalid-argument", await failure("snapshot_grep", { pattern: "(a+)+$" }));
    golden("error-repo-changed", await failure("workspace_write_file", { path: "src/app.ts", content: "y\n", expected_blob: "0123456789ab" }));
    golden("error-unknown-side", await failure("snapshot_diff", { from: "no-such-branch", to: "worktree" }));
    repo.git("checkout", "--", ".");
  });

  test("the session auto-lease: a write over a file changed since it was read is refused with the diff; a patch whose context matches warns", async () => {
    await run("snapshot_file", { path: "src/app.ts" });
    const original = readFileSync(join(repo.root, "src/app.ts"), "utf8");
    repo.write("src/app.ts", original.replace("helper(2)", "helper(4)"));
    golden("error-stale-read", await failure("workspace_write_file", { path: "src/app.ts", content: "x\n" }));
    repo.git("checkout", "--", ".");
    await run("snapshot_file", { path: "src/app.ts" });
    repo.write("src/app.ts", `// edited elsewhere\n${original}`);
    const patch = "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -3,3 +3,3 @@\n export function main() {\n-  return helper(1) + helper(2);\n+  return helper(2);\n }\n";
    golden("patch-over-stale-read", (await run("workspace_apply_patch", { patch, mcp_conversation_id: CONV })).text);
    repo.git("checkout", "--", ".");
  });

  test("history_list and history_undo: a session's own edits, newest first, then the last one undone", async () => {
    repo.write("hist.txt", "one\n");
    repo.commit("hist");
    const own = new McpSession();
    const first = await run("workspace_apply_patch", { patch: "--- a/hist.txt\n+++ b/hist.txt\n@@ -1 +1,2 @@\n one\n+two\n" }, own);
    await run("workspace_write_file", { path: "hist-new.txt", content: "new\n", mcp_conversation_id: first.answer.mcp_conversation_id as string }, own);
    const listed = await run("history_list", { include_diff: true, limit: 5 }, own);
    golden("history-list", listed.text);
    golden("history-undo", (await run("history_undo", { last: 1 }, own)).text);
    repo.git("reset", "-q", "--hard", "HEAD~1");
  });
});
