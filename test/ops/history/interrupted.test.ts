/**
 * Completing recorded writes a crashed process left (interrupted.ts): a
 * fixture process applies a patch with the history on and is killed at a
 * named step; the next process completes or drops the call when it takes the
 * work-tree lock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { completeInterruptedWritesNow } from "../../../src/ops/history/interrupted";
import { applyChanges } from "../../../src/ops/write/write-path";
import { nativeModule } from "../../../src/repo/native";
import { cli, mcpSession } from "../../helpers/binary";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { enc, rp, treeText, wsOf } from "../../helpers/workspace";

const WORKER = join(import.meta.dir, "..", "..", "fixtures", "write-crash-worker.ts");
const CONV = "conv_crash_0001";

/** Five files: two edits, a creation in a new directory, a deletion, a rename with an edit. */
async function scenario(repo: TmpRepo): Promise<{ patchFile: string; before: Record<string, string>; after: Record<string, string> }> {
  const lines = (tag: string) => Array.from({ length: 12 }, (_, i) => `${tag} line ${i}\n`).join("");
  repo.write("a.txt", lines("a"));
  repo.write("b.txt", lines("b"));
  repo.write("gone.txt", lines("gone"));
  repo.write("src/m.txt", lines("m"));
  repo.commit("base");
  const before = treeText(repo.root);
  repo.write("a.txt", lines("a").replace("a line 3", "A LINE 3"));
  repo.write("b.txt", lines("b").replace("b line 9", "B LINE 9"));
  repo.write("new/dir/c.txt", "created\n");
  repo.git("rm", "-q", "gone.txt");
  repo.git("mv", "src", "lib");
  repo.write("lib/m.txt", lines("m").replace("m line 0", "M LINE 0"));
  repo.git("add", "-A");
  const after = treeText(repo.root);
  const patchFile = repo.beside(".patch");
  writeFileSync(patchFile, repo.git("diff", "--cached", "-M", "HEAD"));
  repo.git("reset", "-q", "--hard", "HEAD");
  repo.git("clean", "-qfd");
  return { patchFile, before, after };
}

function crash(repo: TmpRepo, patchFile: string, step: string, n?: number): void {
  const r = Bun.spawnSync([process.execPath, WORKER, repo.root, patchFile, step, ...(n !== undefined ? [String(n)] : [])], { stdout: "pipe", stderr: "pipe" });
  expect(r.signalCode ?? `exit ${r.exitCode}: ${r.stderr.toString()}`).toBe("SIGKILL");
}

const pending = (root: string) => {
  const dir = join(root, ".mcp/edit_history/pending_writes");
  return existsSync(dir) ? readdirSync(dir) : [];
};

async function logOf(repo: TmpRepo): Promise<{ edit_id: string; file_path: string; operation: string }[]> {
  return new FsHistoryStore(join(repo.root, ".mcp")).readLog(CONV);
}

describe("interrupted recorded writes", () => {
  test("killed after the seal, before any file: the call is dropped, with its history objects", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "sealed");
    expect(pending(repo.root)).toHaveLength(1);
    using ws = wsOf(repo);
    const done = await completeInterruptedWritesNow(ws, new FsHistoryStore(ws.repo.stateDir));
    expect(done.map((d) => [d.outcome, d.logged.length, d.written])).toEqual([["dropped", 0, []]]);
    expect(treeText(repo.root)).toEqual(s.before);
    expect(pending(repo.root)).toEqual([]);
    expect(await logOf(repo)).toEqual([]);
    for (const dir of ["diffs", "checkpoints", "packs"]) expect(existsSync(join(repo.root, ".mcp/edit_history", dir, CONV)) ? readdirSync(join(repo.root, ".mcp/edit_history", dir, CONV)) : []).toEqual([]);
  });

  test.skipIf(nativeModule() === null)("killed after the first file: the rest is written from the record (deletion, creation in a new directory, rename with edits) and every entry logged", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "renamed", 1);
    expect(treeText(repo.root)).not.toEqual(s.before);
    expect(treeText(repo.root)).not.toEqual(s.after);
    using ws = wsOf(repo);
    const done = await completeInterruptedWritesNow(ws, new FsHistoryStore(ws.repo.stateDir));
    expect(done).toHaveLength(1);
    expect(done[0]!.outcome).toBe("completed");
    expect(done[0]!.left).toEqual([]);
    expect(done[0]!.written.length).toBeGreaterThan(0);
    expect(treeText(repo.root)).toEqual(s.after);
    expect((await logOf(repo)).map((e) => [e.operation, e.file_path]).sort()).toEqual([
      ["delete", "gone.txt"],
      ["edit", "a.txt"],
      ["edit", "b.txt"],
      ["create", "new/dir/c.txt"],
      ["move", "lib/m.txt"],
    ].sort());
    expect(pending(repo.root)).toEqual([]);
  });

  test.skipIf(nativeModule() === null)("a file changed by hand after the crash is left as it is and its entry not logged; the other files are completed", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "renamed", 1);
    // Whichever of a.txt and b.txt was not published yet gets a hand edit (the one published keeps the patch's bytes).
    const tree = treeText(repo.root);
    const untouched = ["a.txt", "b.txt"].find((p) => tree[p] === s.before[p])!;
    expect(untouched).toBeDefined();
    writeFileSync(join(repo.root, untouched), "edited by hand\n");
    using ws = wsOf(repo);
    const [done] = await completeInterruptedWritesNow(ws, new FsHistoryStore(ws.repo.stateDir));
    expect(done!.outcome).toBe("completed");
    expect(done!.left).toEqual([untouched]);
    expect(treeText(repo.root)).toEqual({ ...s.after, [untouched]: "edited by hand\n" });
    const logged = (await logOf(repo)).map((e) => e.file_path);
    expect(logged).not.toContain(untouched);
    expect(logged).toHaveLength(4);
  });

  test("killed after the log, before the intent was removed: the intent goes, nothing is logged twice", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "logged");
    expect(pending(repo.root)).toHaveLength(1);
    using ws = wsOf(repo);
    // Any write takes the lock, which completes first.
    await applyChanges(ws, [{ kind: "write", path: rp("other.txt"), bytes: enc("o\n") }], { recorder: ws.recorder, conversationId: "conv_other_1", toolName: "write_file" });
    expect(pending(repo.root)).toEqual([]);
    expect(await logOf(repo)).toHaveLength(5);
    expect(treeText(repo.root)).toEqual({ ...s.after, "other.txt": "o\n" });
  });

  test("killed half way through the log's append: readers stop at the last whole line; completing cuts the torn line and logs each entry once", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "logged");
    // the append's last line as a crash during its write leaves it: cut in the middle, no newline
    const log = join(repo.root, ".mcp/edit_history/logs", `${CONV}.log`);
    const text = readFileSync(log, "utf8");
    const lastLine = text.lastIndexOf("\n", text.length - 2) + 1;
    writeFileSync(log, text.slice(0, lastLine + 40));
    expect(await logOf(repo)).toHaveLength(4);
    // the CLI's history command completes the call first (the compiled binary's own append), then lists it whole
    const listed = cli(["history", "status", "--json", "--root", repo.root]);
    expect(listed.code).toBe(0);
    expect(listed.json().entries.filter((e: { conversation_id: string }) => e.conversation_id === CONV)).toHaveLength(5);
    expect(pending(repo.root)).toEqual([]);
    const after = readFileSync(log, "utf8");
    expect(after.endsWith("\n")).toBe(true);
    const ids = (await logOf(repo)).map((e) => e.edit_id);
    expect([ids.length, new Set(ids).size]).toEqual([5, 5]);
    expect(after.split("\n").filter((l) => l !== "").every((l) => JSON.parse(l).conversation_id === CONV)).toBe(true);
    expect(treeText(repo.root)).toEqual(s.after);
  });

  test("a server starting completes a call a crash left, before its first write", async () => {
    await using repo = await tmpRepo();
    const s = await scenario(repo);
    crash(repo, s.patchFile, "published");
    await using server = await mcpSession(repo.root);
    for (let i = 0; i < 200 && pending(repo.root).length > 0; i++) await Bun.sleep(50);
    expect(pending(repo.root)).toEqual([]);
    expect(await logOf(repo)).toHaveLength(5);
    const r = await server.call("workspace_write_file", { mode: "worktree", path: "after.txt", content: "x\n" });
    expect(r.changed[0].path).toBe("after.txt");
    expect(treeText(repo.root)).toEqual({ ...s.after, "after.txt": "x\n" });
  });
});
