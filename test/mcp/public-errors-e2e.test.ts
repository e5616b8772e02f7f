/**
 * No machine internals reach a client: every error answer of the compiled
 * server, provoked as many ways as we can (missing files, bad arguments,
 * locks and state broken on disk, a corrupt git index, unreadable files,
 * symlinks out of the root, hostile JSON-RPC), carries repo-relative paths,
 * no absolute path of this machine and no stack trace. The server's log on
 * stderr may carry them (that is where an operator looks).
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { rawServer, type RawServer } from "../helpers/raw-mcp";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

/** What no answer may contain: the root, the temp and home directories, a stack frame. */
function leaks(text: string, root: string): string[] {
  const found: string[] = [];
  if (text.includes(root)) found.push("the root's absolute path");
  // the system's temp directory as an absolute path (".mcp/tmp/" inside the repository is fine)
  if (new RegExp(`(?<![\\w.-])(${escape(tmpdir())}|/tmp)/`).test(text)) found.push("a temp directory");
  if (text.includes(`${homedir()}/`)) found.push("the home directory");
  if (/\bat [^\n]*\([^)\n]*:\d+(:\d+)?\)/.test(text) || /\n\s+at \S+:\d+:\d+/.test(text)) found.push("a stack frame");
  if (/"stack"\s*:/.test(text)) found.push("a stack property");
  return found;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function call(s: RawServer, name: string, args: Record<string, unknown>): Promise<any> {
  return s.request("tools/call", { name, arguments: args });
}

/** An error answer of either kind: an isError tool result's error, or a JSON-RPC error. */
function errorOf(answer: any): { code: string | number; message: string } {
  if (answer.error) return { code: answer.error.code, message: answer.error.message };
  expect(answer.result?.isError).toBe(true);
  return answer.result.structuredContent.error;
}

describe("no internals in answers", () => {
  test("every provoked error answer is free of absolute paths and stack traces; the server log may have them", async () => {
    await using repo = await tmpRepo();
    await using outside = tmpDir("ws-outside-");
    writeFileSync(join(outside.path, "secret.txt"), "outside\n");
    repo.write("a.txt", "a\n");
    repo.write("dir/b.txt", "b\n");
    repo.write("big.txt", "x".repeat(300 * 1024));
    repo.commit();
    symlinkSync(join(outside.path, "secret.txt"), join(repo.root, "escape.txt"));
    symlinkSync(join(outside.path, "missing"), join(repo.root, "dangling.txt"));
    symlinkSync(outside.path, join(repo.root, "outdir"));

    await using s = await rawServer(repo.root);
    const answers: { what: string; answer: any }[] = [];
    const expectError = async (what: string, name: string, args: Record<string, unknown>) => {
      const answer = await call(s, name, args);
      errorOf(answer);
      answers.push({ what, answer });
    };
    /** A refusal that is an answer, not an error (a patch's rejects) */
    const expectAnswer = async (what: string, name: string, args: Record<string, unknown>) => {
      answers.push({ what, answer: await call(s, name, args) });
    };
    const raw = async (what: string, line: string, id: string | number | null) => {
      const before = s.lines.length;
      s.write(line);
      await s.until((lines) => lines.length > before && (id === null || s.answersTo(id).length > 0), what);
      answers.push({ what, answer: s.lines.slice(before) });
    };

    // bad arguments and missing things
    await expectError("missing file", "snapshot_file", { mode: "worktree", path: "nope.txt" });
    await expectError("directory as a file", "snapshot_file", { mode: "worktree", path: "dir" });
    await expectError("missing directory", "snapshot_list", { mode: "worktree", path: "nowhere" });
    await expectError("the root's own absolute path as a path", "snapshot_file", { mode: "worktree", path: join(repo.root, "a.txt") });
    await expectError("an outside absolute path", "snapshot_file", { mode: "worktree", path: join(outside.path, "secret.txt") });
    await expectError("dot-dot", "snapshot_file", { mode: "worktree", path: "../secret.txt" });
    await expectError("a symlink out of the root", "snapshot_file", { mode: "worktree", path: "escape.txt" });
    await expectError("a dangling symlink", "workspace_write_file", { mode: "worktree", path: "dangling.txt", content: "x" });
    await expectError("a directory symlink out of the root", "workspace_write_file", { mode: "worktree", path: "outdir/new.txt", content: "x" });
    await expectError("too large", "snapshot_file", { mode: "worktree", path: "big.txt" });
    await expectError("unknown snapshot", "snapshot_info", { snapshot_id: `sha256:${"0".repeat(64)}` });
    await expectError("bad snapshot id", "snapshot_info", { snapshot_id: "zz" });
    await expectError("bad lease", "snapshot_list", { mode: "worktree", lease_id: "lease_1" });
    await expectError("wrong argument types", "snapshot_grep", { mode: "worktree", pattern: 5 });
    await expectError("a bad regex", "snapshot_grep", { mode: "worktree", pattern: "(" });
    await expectError("an unknown tool", "snapshot_nothing", {});
    await expectAnswer("a malformed patch", "workspace_apply_patch", { mode: "worktree", patch: "not a patch" });
    await expectAnswer("a patch of a missing file", "workspace_apply_patch", { mode: "worktree", patch: "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n" });
    await expectError("a move onto an existing file", "workspace_move", { mode: "worktree", from: "a.txt", to: "dir/b.txt" });
    await expectError("deleting what is not there", "workspace_delete", { mode: "worktree", path: "ghost.txt" });
    const lease = (await call(s, "snapshot_file", { mode: "worktree", path: "a.txt" })).result.structuredContent.lease_id;
    repo.write("a.txt", "changed\n");
    await expectError("a stale lease", "workspace_write_file", { mode: "worktree", path: "a.txt", content: "y", lease_id: lease });

    // state broken on disk: internal failures
    rmSync(join(repo.root, ".mcp", "exports"), { recursive: true, force: true });
    writeFileSync(join(repo.root, ".mcp", "exports"), "a file where the exports directory belongs");
    await expectError("no exports directory", "snapshot_export", { mode: "worktree" });
    rmSync(join(repo.root, ".mcp", "exports"));
    const snap = (await call(s, "snapshot_create", { paths: ["."] })).result.structuredContent.snapshot_id as string;
    const hex = snap.slice("sha256:".length);
    writeFileSync(join(repo.root, ".mcp", "snapshots", `${hex}.json`), "{ not json");
    await expectError("corrupt snapshot metadata", "snapshot_info", { snapshot_id: snap });
    writeFileSync(join(repo.root, ".mcp", "snapshots", `${hex}.manifest`), "garbage\n");
    await expectError("corrupt manifest", "snapshot_list", { mode: "snapshot", snapshot_id: snap });
    rmSync(join(repo.root, ".mcp", "tmp"), { recursive: true, force: true });
    writeFileSync(join(repo.root, ".mcp", "tmp"), "a file where a directory belongs");
    await expectError("no temp directory for a write", "workspace_write_file", { mode: "worktree", path: "w.txt", content: "w\n" });
    rmSync(join(repo.root, ".mcp", "tmp"));
    mkdirSync(join(repo.root, ".mcp", "tmp"));
    rmSync(join(repo.root, ".mcp", "locks"), { recursive: true, force: true });
    writeFileSync(join(repo.root, ".mcp", "locks"), "a file where the lock directory belongs");
    await expectError("the work-tree lock cannot be taken", "workspace_write_file", { mode: "worktree", path: "w.txt", content: "w\n" });
    rmSync(join(repo.root, ".mcp", "locks"));
    writeFileSync(join(repo.root, ".git", "index"), "DIRC garbage");
    await expectError("a corrupt git index", "snapshot_list", { mode: "worktree" });
    await expectError("a corrupt git index, grep", "snapshot_grep", { mode: "worktree", pattern: "a" });

    // resources: a snapshot whose metadata is broken, an address that is not ours
    for (const [what, uri] of [
      ["a resource in a broken snapshot", `worksnap://snapshot/${hex}/a.txt`],
      ["a resource outside the scheme", `file://${repo.root}/a.txt`],
    ]) {
      answers.push({ what: what!, answer: await s.request("resources/read", { uri }) });
    }

    // hostile JSON-RPC
    await raw("not JSON", "{oops\n", null);
    await raw("params of the wrong type", `{"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":7}}\n`, "p1");
    await raw("an invalid request", `{"jsonrpc":"1.0","id":"p2","method":"tools/list"}\n`, "p2");

    if (process.env.SHOW_ANSWERS) for (const { what, answer } of answers) console.log(what, JSON.stringify(answer).slice(0, 700));
    for (const { what, answer } of answers) expect({ what, leaks: leaks(JSON.stringify(answer), repo.root) }).toEqual({ what, leaks: [] });
    // the operator's log kept the full story of the internal failures
    await s.end();
    expect(s.stderr()).toContain(repo.root);
    expect(s.stderr()).toMatch(/\n\s+at /);
  });

  test("a file the server may not read: PERMISSION_DENIED with the repo-relative path, not the absolute one", async () => {
    await using repo = await tmpRepo();
    repo.write("open.txt", "o\n");
    repo.write("locked/secret.txt", "s\n");
    repo.commit();
    Bun.spawnSync(["chmod", "-R", "a+rwX", repo.root]);
    Bun.spawnSync(["chmod", "a+rx", join(repo.root, "..")]);
    chmodSync(join(repo.root, "locked", "secret.txt"), 0);
    const asRoot = process.getuid?.() === 0;
    // the server's user owns the repository (git refuses another user's), and still may not read a mode 000 file
    if (asRoot) Bun.spawnSync(["chown", "-R", "65534:65534", repo.root]);
    const asNobody = asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    await using s = await rawServer(repo.root, { wrap: asNobody, env: { HOME: "/nonexistent" } });
    const answer = await call(s, "snapshot_file", { mode: "worktree", path: "locked/secret.txt" });
    const error = errorOf(answer) as any;
    expect(error.code).toBe("PERMISSION_DENIED");
    expect(JSON.stringify(error)).toContain("locked/secret.txt");
    expect(leaks(JSON.stringify(answer), repo.root)).toEqual([]);
    expect(readdirSync(join(repo.root, "locked"))).toEqual(["secret.txt"]);
  });
});
