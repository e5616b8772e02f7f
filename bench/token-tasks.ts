/**
 * The scripted agent tasks of bench/tokens.ts, each written twice: for
 * worksnap and for the reference server (@modelcontextprotocol/server-filesystem),
 * each as economically as that server allows. A script plays the model: it
 * reads what an answer says (through its structured form, to stay short) and
 * writes the next call. Every task checks that it reached its goal, so a
 * script that stops working fails the benchmark instead of getting cheaper.
 *
 * Where the reference server cannot do a step (it has no content search, no
 * line ranges, no diff), its script does what an agent would do instead, and
 * it is given every benefit of the doubt: it is told which file holds a
 * symbol (no search at all), and it reads only as far as it must (`head`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Answer {
  text: string;
  structured: any;
  isError: boolean;
}

/** A server as a script sees it: every call's arguments and answer text are counted by the caller. */
export interface Agent {
  call(name: string, args: Record<string, unknown>): Promise<Answer>;
}

/** The checkout a task works in, for what happens outside the agent (another process editing a file) and checks. */
export interface TaskEnv {
  root: string;
  /** Whether worksnap's snapshot_list takes a glob (it finds files by name with it). */
  listGlob: boolean;
  read(path: string): string;
  write(path: string, content: string): void;
}

export interface Task {
  name: string;
  /** "search/read/edit": target 0.2x; "bookkeeping": 0.8x. */
  kind: "search/read/edit" | "bookkeeping";
  /** Done before the agent starts (the same for both servers). */
  setup?: (env: TaskEnv) => void;
  worksnap: (agent: Agent, env: TaskEnv) => Promise<void>;
  reference: (agent: Agent, env: TaskEnv) => Promise<void>;
  /** Throws unless the task's goal was reached (run after each server's script). */
  check?: (env: TaskEnv) => void;
}

export function taskEnv(root: string, listGlob = false): TaskEnv {
  return {
    root,
    listGlob,
    read: (p) => readFileSync(join(root, p), "utf8"),
    write: (p, c) => writeFileSync(join(root, p), c),
  };
}

function must(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`task script failed: ${what}`);
}

async function ok(agent: Agent, name: string, args: Record<string, unknown>): Promise<Answer> {
  const a = await agent.call(name, args);
  must(!a.isError, `${name} answered an error: ${a.text.slice(0, 300)}`);
  return a;
}

/** A one-line patch, no context: the line number and text come from a search answer. */
function linePatch(path: string, line: number, oldText: string, newText: string): string {
  return `--- a/${path}\n+++ b/${path}\n@@ -${line} +${line} @@\n-${oldText}\n+${newText}\n`;
}

/** The line of `text` holding `needle`, 1-based, and that line. */
function findLine(text: string, needle: string): { line: number; text: string } {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => l.includes(needle));
  must(i >= 0, `${needle} not found`);
  return { line: i + 1, text: lines[i] as string };
}

const SYMBOL = { path: "src/ops/write/write-path.ts", pattern: "function applyChangesLocked\\(" };
const EDIT = { path: "src/ops/history/fs-history-store.ts", needle: "PACK_MIN_OBJECTS = ", from: "= 16;", to: "= 32;" };
const STALE = { path: "src/repo/tree-scan.ts", needle: "MAX_LISTINGS = ", theirs: "= 6;", ours: "= 8;" };
const CHANGED = [
  { path: "src/mcp/result.ts", needle: "MAX_RESPONSE_BYTES = 90_000", to: "MAX_RESPONSE_BYTES = 80_000" },
  { path: "src/ops/snapshot/list.ts", needle: "LIST_BYTE_BUDGET = 60_000", to: "LIST_BYTE_BUDGET = 50_000" },
  { path: "src/repo/tar.ts", needle: "USTAR_NAME_MAX = 100", to: "USTAR_NAME_MAX = 99" },
];
const RANGE = { path: "docs/decisions.md", start: 300, end: 340 };
const EXPLORE = "src/ops";
const TWO_DIRS = [".", "src/mcp"];
const FIND_GLOB = "**/*.test.ts";

export const TASKS: Task[] = [
  {
    name: "find a definition and read around it",
    kind: "search/read/edit",
    worksnap: async (a) => {
      const g = await ok(a, "snapshot_grep", { pattern: SYMBOL.pattern });
      const m = g.structured.matches[0];
      must(m?.path === SYMBOL.path, "definition found");
      const f = await ok(a, "snapshot_file", { path: m.path, start_line: m.line, end_line: m.line + 40 });
      must(f.text.includes("applyChangesLocked"), "definition read");
    },
    reference: async (a) => {
      const f = await ok(a, "read_text_file", { path: SYMBOL.path });
      must(f.text.includes("function applyChangesLocked"), "definition read");
    },
  },
  {
    name: "a small edit, confirmed",
    kind: "search/read/edit",
    worksnap: async (a) => {
      const g = await ok(a, "snapshot_grep", { pattern: EDIT.needle, fixed_strings: true, paths: [EDIT.path] });
      const m = g.structured.matches[0];
      const p = await ok(a, "workspace_apply_patch", { patch: linePatch(EDIT.path, m.line, m.text, m.text.replace(EDIT.from, EDIT.to)), lease_id: short(g.structured.lease_id) });
      must(p.text.includes(`+${m.text.replace(EDIT.from, EDIT.to)}`), "the answer shows the applied change");
    },
    reference: async (a) => {
      const f = await ok(a, "read_text_file", { path: EDIT.path });
      const l = findLine(f.text, EDIT.needle);
      const e = await ok(a, "edit_file", { path: EDIT.path, edits: [{ oldText: l.text, newText: l.text.replace(EDIT.from, EDIT.to) }] });
      must(e.text.includes(`+${l.text.replace(EDIT.from, EDIT.to)}`), "the answer shows the applied change");
    },
    check: (env) => must(env.read(EDIT.path).includes(`${EDIT.needle}32;`), "the edit landed"),
  },
  {
    name: "recovery from a stale edit",
    kind: "search/read/edit",
    worksnap: async (a, env) => {
      const g = await ok(a, "snapshot_grep", { pattern: STALE.needle, fixed_strings: true, paths: [STALE.path] });
      const m = g.structured.matches[0];
      changeUnderneath(env);
      const stale = await a.call("workspace_apply_patch", { patch: linePatch(STALE.path, m.line, m.text, m.text.replace(/= \d+;/, STALE.ours)), lease_id: short(g.structured.lease_id) });
      must(stale.isError && stale.text.includes("STALE_LEASE"), "the stale lease is reported");
      const again = await ok(a, "snapshot_grep", { pattern: STALE.needle, fixed_strings: true, paths: [STALE.path] });
      const n = again.structured.matches[0];
      await ok(a, "workspace_apply_patch", { patch: linePatch(STALE.path, n.line, n.text, n.text.replace(/= \d+;/, STALE.ours)), lease_id: short(again.structured.lease_id) });
    },
    reference: async (a, env) => {
      const f = await ok(a, "read_text_file", { path: STALE.path });
      const l = findLine(f.text, STALE.needle);
      changeUnderneath(env);
      const stale = await a.call("edit_file", { path: STALE.path, edits: [{ oldText: l.text, newText: l.text.replace(/= \d+;/, STALE.ours) }] });
      must(stale.isError, "the failed edit is reported");
      const g = await ok(a, "read_text_file", { path: STALE.path });
      const n = findLine(g.text, STALE.needle);
      await ok(a, "edit_file", { path: STALE.path, edits: [{ oldText: n.text, newText: n.text.replace(/= \d+;/, STALE.ours) }] });
    },
    check: (env) => must(env.read(STALE.path).includes(`${STALE.needle}8;`) && env.read(STALE.path).includes("changed by someone else"), "the edit landed on the new text"),
  },
  {
    name: "a range of a long file",
    kind: "search/read/edit",
    worksnap: async (a) => {
      await ok(a, "snapshot_file", { path: RANGE.path, start_line: RANGE.start, end_line: RANGE.end });
    },
    reference: async (a) => {
      // No ranges: the cheapest is the file's first `end` lines.
      await ok(a, "read_text_file", { path: RANGE.path, head: RANGE.end });
    },
  },
  {
    name: "what changed since the start, with a diff",
    kind: "bookkeeping",
    setup: (env) => {
      for (const c of CHANGED) env.write(c.path, env.read(c.path).replace(c.needle, c.to));
    },
    worksnap: async (a) => {
      const d = await ok(a, "snapshot_diff", { from: "HEAD", to: "worktree" });
      must(CHANGED.every((c) => d.text.includes(`+${findLine(d.structured.diff, c.to).text.slice(1)}`)), "every change shown");
    },
    reference: async (a) => {
      // No diff and no record of the start: the agent reads back the files it changed.
      const r = await ok(a, "read_multiple_files", { paths: CHANGED.map((c) => c.path) });
      must(CHANGED.every((c) => r.text.includes(c.to)), "every change seen");
    },
  },
  {
    name: "exploring a directory tree",
    kind: "bookkeeping",
    worksnap: async (a) => {
      const l = await ok(a, "snapshot_list", { path: EXPLORE, recursive: true });
      must(!l.structured.truncated, "the whole tree listed");
    },
    reference: async (a) => {
      // One list_directory per directory: cheaper than directory_tree's JSON (bench/tokens.ts measures both).
      const queue = [EXPLORE];
      while (queue.length > 0) {
        const dir = queue.shift() as string;
        const l = await ok(a, "list_directory", { path: dir });
        for (const row of l.text.split("\n")) if (row.startsWith("[DIR] ")) queue.push(`${dir}/${row.slice(6)}`);
      }
    },
  },
  {
    name: "listing two directories",
    kind: "bookkeeping",
    worksnap: async (a) => {
      for (const path of TWO_DIRS) await ok(a, "snapshot_list", { path });
    },
    reference: async (a) => {
      for (const path of TWO_DIRS) await ok(a, "list_directory", { path });
    },
  },
  {
    name: "finding files by name",
    kind: "bookkeeping",
    worksnap: async (a, env) => {
      if (!env.listGlob) {
        // Without a glob the agent lists every file and picks the names itself.
        const all = await ok(a, "snapshot_list", { recursive: true, limit: 2000 });
        must(all.structured.entries.filter((e: { path: string }) => e.path.endsWith(".test.ts")).length > 10, "the files found");
        return;
      }
      const l = await ok(a, "snapshot_list", { glob: FIND_GLOB });
      must(l.structured.entries.length > 10 && !l.structured.truncated, "the files found");
    },
    reference: async (a) => {
      const l = await ok(a, "search_files", { path: ".", pattern: FIND_GLOB });
      must(l.text.split("\n").length > 10, "the files found");
    },
  },
];

/** The same task for the reference server as a directory_tree call, to show which reference script is cheaper. */
export async function exploreWithDirectoryTree(agent: Agent): Promise<void> {
  await ok(agent, "directory_tree", { path: EXPLORE });
}

/** Another process edits the line the agent is about to change. */
function changeUnderneath(env: TaskEnv): void {
  const text = env.read(STALE.path);
  const l = findLine(text, STALE.needle);
  const lines = text.split("\n");
  lines.splice(l.line - 1, 1, "// changed by someone else", l.text.replace(/= \d+;/, STALE.theirs));
  env.write(STALE.path, lines.join("\n"));
}

/** Ids as the model reads them in worksnap's text: a 12-hex prefix. */
function short(leaseId: string): string {
  return leaseId.slice(0, "lease_".length + 12);
}
