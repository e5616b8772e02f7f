/**
 * A full disk is its own clear error. A repository on a small tmpfs (a few
 * MB, mounted for the test) is filled to within a few KB of the end, then
 * written to through the compiled server (whole files, multi-file patches)
 * and the CLI (a reject), at many fill levels, so the space runs out at every
 * step of a write in turn: staging, checkpoints, diffs, the write intent, the
 * log. Every call either succeeds whole or fails with TOO_LARGE and reason
 * disk_full (never INTERNAL); a failed call leaves every file as it was, no
 * temporary file behind (in `.mcp/tmp` or in the tree), and the history as it
 * was (no entry, no write intent, no interrupted review).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, mcpSession } from "../helpers/binary";
import { runGit } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";
import { treeText } from "../helpers/workspace";
import { attempts, budgetMs } from "./scale";

const disk = tmpfsForTests("6m", "ws-diskfull-");

const FILES = 24;

function makeRepo(): string {
  const root = join(disk.path, `repo-${Math.random().toString(36).slice(2, 8)}`);
  Bun.spawnSync(["mkdir", "-p", root]);
  runGit(root, ["init", "-q", "-b", "main"]);
  for (let i = 0; i < FILES; i++) writeFileSync(join(root, `f${i}.txt`), Array.from({ length: 400 }, (_, l) => `line ${l} of file ${i}\n`).join(""));
  runGit(root, ["add", "-A"]);
  runGit(root, ["commit", "-q", "-m", "base"]);
  return root;
}

/** What must not outlive a failed call: temp files (spares are empty files made ahead, not a call's), write intents, interrupted reviews. */
function leftovers(root: string): string[] {
  const out: string[] = [];
  const tmp = join(root, ".mcp", "tmp");
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name);
      const st = statSync(abs);
      if (st.isDirectory()) walk(abs, `${rel}${name}/`);
      // empty spares, a server's or a pool left for the next process, are not leftovers
      else if (!((rel.endsWith("-spares/") || rel.startsWith("carry-")) && st.size === 0)) out.push(`.mcp/tmp/${rel}${name} (${st.size} bytes)`);
    }
  };
  if (existsSync(tmp)) walk(tmp, "");
  for (const dir of ["pending_writes", "intents"]) {
    const abs = join(root, ".mcp", "edit_history", dir);
    if (existsSync(abs)) for (const name of readdirSync(abs)) out.push(`.mcp/edit_history/${dir}/${name}`);
  }
  for (const path of Object.keys(treeText(root))) if (path.includes(".worksnap-")) out.push(path);
  return out;
}

function historyCount(root: string): number {
  const r = cli(["history", "status", "--json", "--root", root]);
  expect(r.code, r.stderr).toBe(0);
  return r.json().total;
}

/** A patch that appends `lines` lines to each of the first `files` files. */
function growPatch(root: string, files: number, lines: number, tag: string): { patch: string; after: Record<string, string> } {
  const tree = treeText(root);
  const after = { ...tree };
  let patch = "";
  for (let i = 0; i < files; i++) {
    const path = `f${i}.txt`;
    const old = tree[path]!.split("\n").slice(0, -1);
    const added = Array.from({ length: lines }, (_, l) => `${tag} ${l} ${"x".repeat(60)}`);
    patch += `--- a/${path}\n+++ b/${path}\n@@ -${old.length - 2},3 +${old.length - 2},${3 + lines} @@\n${old.slice(-3).map((l) => ` ${l}\n`).join("")}${added.map((l) => `+${l}\n`).join("")}`;
    after[path] = `${tree[path]}${added.map((l) => `${l}\n`).join("")}`;
  }
  return { patch, after };
}

describe("disk full", () => {
  const levels = attempts(5, 30);
  for (const native of [true, false]) {
    test.skipIf(!disk.canMount)(
      `regression (disk full was INTERNAL): writes and patches through the server (${native ? "native" : "no native module"}) at ${levels} fill levels: whole success or TOO_LARGE disk_full, nothing half-written, nothing left behind`,
      async () => {
        expect(disk.mounted).toBe(true);
        const root = makeRepo();
        await using s = await mcpSession(root, [], { env: native ? {} : { WORKSNAP_NATIVE: "0" } });
        // One write with room to spare: the server's spares and the history's directories exist from here on.
        await s.call("workspace_write_file", { mode: "worktree", path: "seed.txt", content: "seed\n" });
        const outcomes = { ok: 0, full: 0 };
        for (let k = 0; k < levels; k++) {
          // From a few KB to about 1.2 MB free: the space runs out at a different step each time.
          const leave = Math.round(4 + (k / Math.max(1, levels - 1)) * 1200);
          for (const kind of ["write", "patch"] as const) {
            const before = treeText(root);
            const entries = historyCount(root);
            disk.leave(leave);
            let r: any;
            let after: Record<string, string>;
            if (kind === "write") {
              const content = `${"w".repeat(99)}\n`.repeat(3000 + k); // about 300 KB
              r = await s.raw("workspace_write_file", { mode: "worktree", path: `big${k}.txt`, content });
              after = { ...before, [`big${k}.txt`]: content };
            } else {
              const p = growPatch(root, FILES, 60 + k, `grow${k}`);
              r = await s.raw("workspace_apply_patch", { mode: "worktree", patch: p.patch });
              after = p.after;
            }
            disk.unfill();
            const out = r.structuredContent;
            if (r.isError) {
              expect({ level: leave, kind, code: out.error.code, reason: out.error.details.reason }).toEqual({ level: leave, kind, code: "TOO_LARGE", reason: "disk_full" });
              expect(out.error.message).toContain("the disk is full");
              expect(treeText(root)).toEqual(before);
              expect(leftovers(root)).toEqual([]);
              expect(historyCount(root)).toBe(entries);
              outcomes.full++;
            } else {
              expect(out.applied ?? true).toBe(true);
              expect(treeText(root)).toEqual(after);
              expect(historyCount(root)).toBeGreaterThan(entries);
              outcomes.ok++;
              // Back to the base files so the next level starts from the same tree, and the history does not fill the disk.
              runGit(root, ["checkout", "-q", "--", "."]);
              runGit(root, ["clean", "-qfd", "-e", ".mcp"]);
              rmSync(join(root, ".mcp", "edit_history"), { recursive: true, force: true });
            }
          }
        }
        process.stderr.write(`disk full (${native ? "native" : "ts"}): ${levels * 2} calls, ${outcomes.ok} succeeded, ${outcomes.full} refused as disk full\n`);
        expect(outcomes.full).toBeGreaterThan(0);
        // With room again, the server writes as before.
        const ok = await s.call("workspace_write_file", { mode: "worktree", path: "after.txt", content: "room again\n" });
        expect(ok.changed[0].path).toBe("after.txt");
        rmSync(root, { recursive: true, force: true });
      },
      budgetMs(120_000, 600_000),
    );
  }

  test.skipIf(!disk.canMount)(
    "regression (disk full was INTERNAL): a reject on a full disk is refused as disk full and changes nothing; with room it goes through",
    async () => {
      expect(disk.mounted).toBe(true);
      const root = makeRepo();
      let conv = "";
      {
        await using s = await mcpSession(root);
        const p = growPatch(root, FILES, 200, "agent");
        const r = await s.call("workspace_apply_patch", { mode: "worktree", patch: p.patch });
        conv = r.mcp_conversation_id;
      }
      const before = treeText(root);
      const statuses = () => cli(["history", "status", "--json", "--root", root]).json().entries.map((e: { status: string }) => e.status);
      disk.leave(4);
      const r = cli(["history", "reject", "--conv", conv, "--json", "--root", root]);
      disk.unfill();
      expect(r.code).toBe(1);
      expect(r.json().error).toMatchObject({ code: "TOO_LARGE", details: { reason: "disk_full" } });
      expect(treeText(root)).toEqual(before);
      expect(leftovers(root)).toEqual([]);
      expect(new Set(statuses())).toEqual(new Set(["pending"]));
      const again = cli(["history", "reject", "--conv", conv, "--json", "--root", root]);
      expect(again.code, again.stdout).toBe(0);
      expect(new Set(statuses())).toEqual(new Set(["rejected"]));
      expect(treeText(root)["f0.txt"]).toBe(Array.from({ length: 400 }, (_, l) => `line ${l} of file 0\n`).join(""));
      rmSync(root, { recursive: true, force: true });
    },
    budgetMs(60_000, 120_000),
  );
});
