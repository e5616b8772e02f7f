// Benchmark: reviewing an edit history.
//
//   node_modules/.bin/bun bench/history.ts [--runs N] [--edits N] [--lines N] [--entries N] [--dir DIR]
//                                          [--only reject|status|log] [--write]
//
// 1. Reject the first of 1,000 edits to one 5,000-line file (target: under 1 s). The history is recorded by the
//    real write path and recorder (one conversation, realistic TypeScript text from gen-repo.ts, edits that replace,
//    insert and delete lines at random places; the first inserts two lines at the top, so every later hunk is off by
//    two and the replay must compensate). Measured in process (the op: load the history, replay 999 diffs, check
//    the file, record the review, write) and as the command in a new process. Anchor: GNU patch applying the same
//    999 diffs, concatenated, to the checkpoint. Both results are checked against the expected file.
// 2. `status` over 10,000 entries (100 conversations of 100 edits; target: under 200 ms): the op, the command
//    (table), and the command with --json. Anchor: jq reading the same logs. Beside it, what the review page
//    (`worksnap history review`) reads: its state (the same entries grouped, with every diff's line counts: a
//    first load reads each diff, later ones only the logs) and one poll of the change stamp.
//
// 3. Logging one tool call's entry into a conversation of 1, 2,000 and 10,000 entries (its cost must not grow with
//    the log). Anchor: the same line appended with one write and one fdatasync, in process.
//
// Each run of (1) starts from a fresh copy of the recorded repository (copying is not timed).
// --write replaces bench/history-README-figures.md with the figures.

import { closeSync, cpSync, existsSync, fdatasyncSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RepoPath } from "../src/core/repo-path";
import { FsHistoryStore } from "../src/ops/history/fs-history-store";
import { historyStatus } from "../src/ops/history/query";
import { DiffStats, pageState } from "../src/web/state";
import { reviewEdits } from "../src/ops/history/review";
import type { LogEntry } from "../src/ops/history/types";
import { closeWorkspace, openWorkspace } from "../src/ops/workspace";
import { applyChanges } from "../src/ops/write/write-path";
import { editEntry } from "../test/fixtures/log-entries.ts";
import { Rng, renderFile } from "./gen-repo.ts";
import { argValue, fmtMs, fmtRatio, machineLine, markdownTable, median, table, timeCommand, timeFn } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist", "worksnap");
const CONV = "conv_1700000000000_benchbenchbe";
const FILE = "src/big.ts";

function baseLines(n: number): string[] {
  const out: string[] = [];
  for (let seed = 1; out.length < n; seed++) {
    const t = renderFile({ path: `src/m${seed}.ts`, ext: "ts", size: 64 * 1024, seed, exec: false, crlf: false, noEol: false });
    out.push(...String(t).split("\n").slice(0, -1));
  }
  return out.slice(0, n);
}

/** Records `edits` edits to one `lines`-line file; returns the first edit's id and the expected file after rejecting it. */
async function recordScenario(dir: string, lines: number, edits: number): Promise<{ firstId: string; expected: string; diffs: string[] }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "src"), { recursive: true });
  let cur = baseLines(lines);
  writeFileSync(join(dir, FILE), `${cur.join("\n")}\n`);
  const ws = openWorkspace(dir);
  const rng = new Rng(20260101);
  const write = async (next: string[]) => {
    const bytes = new TextEncoder().encode(`${next.join("\n")}\n`);
    const out = await applyChanges(ws, [{ kind: "write", path: FILE as RepoPath, bytes, operation: "edit" }], { recorder: ws.recorder, conversationId: CONV, toolName: "edit_file_diff" });
    cur = next;
    return out.editIds[0]!;
  };
  const firstId = await write(["// generated header, line one", "// generated header, line two", ...cur]);
  const t0 = Date.now();
  for (let k = 1; k < edits; k++) {
    const next = [...cur];
    const at = rng.range(12, next.length - 2);
    const kind = rng.int(3);
    if (kind === 0) next[at] = `${next[at]} // edit ${k}`;
    else if (kind === 1) next.splice(at, 0, ...Array.from({ length: rng.range(1, 3) }, (_, i) => `  const e${k}_${i} = ${k * 7 + i};`));
    else next.splice(at, 1);
    await write(next);
    if (k % 100 === 0) process.stderr.write(`\r  recorded ${k}/${edits} edits (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  process.stderr.write("\n");
  closeWorkspace(ws);
  const store = new FsHistoryStore(join(dir, ".mcp"));
  const entries = await store.readLog(CONV);
  const diffs = await Promise.all(entries.slice(1).map(async (e) => new TextDecoder().decode(await store.getObject(e.diff_file!))));
  return { firstId, expected: `${cur.slice(2).join("\n")}\n`, diffs };
}

function freshCopy(template: string, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  cpSync(template, dir, { recursive: true });
}

async function rejectScenario(base: string, runs: number, lines: number, edits: number): Promise<{ rows: string[][]; ok: boolean }> {
  const template = join(base, `reject-${edits}x${lines}`);
  console.log(`recording ${edits} edits to a ${lines}-line file ...`);
  const { firstId, expected, diffs } = await recordScenario(template, lines, edits);
  const work = join(base, "reject-run");
  let ok = true;
  const check = (what: string, path: string) => {
    const got = readFileSync(path, "utf8");
    if (got !== expected) {
      ok = false;
      console.error(`MISMATCH: ${what} produced a different file than expected`);
    }
  };

  // The op, in process (as a long-running reviewer would call it).
  const inProcess: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    freshCopy(template, work);
    const ws = openWorkspace(work);
    const store = new FsHistoryStore(ws.repo.stateDir);
    const t0 = Bun.nanoseconds();
    await reviewEdits(ws, store, { action: "reject", editIds: [firstId] });
    const ms = (Bun.nanoseconds() - t0) / 1e6;
    closeWorkspace(ws);
    if (i === 0) check("reject (in process)", join(work, FILE));
    else inProcess.push(ms);
  }

  // The command, a new process per run.
  const cmd = await timeCommand([BINARY, "history", "reject", firstId, "--root", work], { cwd: ROOT, runs, warmup: 1, prepare: () => freshCopy(template, work) });
  check("worksnap history reject", join(work, FILE));

  // Anchor: GNU patch replaying the same 999 diffs onto the checkpoint.
  const patchFile = join(base, "remaining.diff");
  writeFileSync(patchFile, diffs.join(""));
  const anchorDir = join(base, "patch-run");
  const original = `${baseLines(lines).join("\n")}\n`;
  const anchor = await timeCommand(["patch", "-p1", "-s", "-i", patchFile], {
    cwd: anchorDir,
    runs,
    warmup: 1,
    prepare: () => {
      rmSync(anchorDir, { recursive: true, force: true });
      mkdirSync(join(anchorDir, "src"), { recursive: true });
      writeFileSync(join(anchorDir, FILE), original);
    },
  });
  check("GNU patch", join(anchorDir, FILE));

  const opMs = median(inProcess);
  const cmdMs = median(cmd.ms);
  const patchMs = median(anchor.ms);
  return {
    ok,
    rows: [
      [`reject the first of ${edits} edits, ${lines}-line file: the op (in process)`, fmtMs(opMs), opMs < 1000 ? "yes" : "NO", fmtRatio(opMs / patchMs)],
      [`  the command (new process)`, fmtMs(cmdMs), cmdMs < 1000 ? "yes" : "NO", fmtRatio(cmdMs / patchMs)],
      [`  anchor: GNU patch, the same ${edits - 1} diffs`, fmtMs(patchMs), "", "1.00x"],
    ],
  };
}

function syntheticEntries(conversations: number, perConversation: number): Map<string, LogEntry[]> {
  const out = new Map<string, LogEntry[]>();
  const rng = new Rng(7);
  let t = Date.parse("2026-01-01T00:00:00Z") * 1000;
  const statuses = ["pending", "accepted", "rejected"] as const;
  const ops = ["create", "replace", "edit", "delete", "move"] as const;
  for (let c = 0; c < conversations; c++) {
    const conv = `conv_${1700000000000 + c}_${(c * 2654435761).toString(16).padStart(12, "0").slice(-12)}`;
    const entries: LogEntry[] = [];
    for (let i = 0; i < perConversation; i++) {
      const op = ops[rng.int(5)]!;
      const id = crypto.randomUUID();
      const us = t++;
      entries.push({
        edit_id: id,
        conversation_id: conv,
        tool_call_index: i,
        timestamp: `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 23)}${String(us % 1000).padStart(3, "0")}Z`,
        operation: op,
        file_path: `packages/p${rng.int(40)}/src/module_${rng.int(500)}.ts`,
        source_path: op === "move" ? `packages/p${rng.int(40)}/src/old_${rng.int(500)}.ts` : null,
        tool_name: op === "delete" ? "delete_file" : op === "move" ? "move_file" : op === "edit" ? "edit_file_diff" : "write_file",
        status: statuses[rng.int(3)]!,
        diff_file: op === "delete" ? null : `diffs/${conv}/${id}.diff`,
        checkpoint_file: i === 0 ? `checkpoints/${conv}/src_module-0123456789ab.chkpt` : null,
        hash_before: op === "create" ? null : "a".repeat(64),
        hash_after: op === "delete" ? null : "b".repeat(64),
      });
    }
    out.set(conv, entries);
  }
  return out;
}

async function statusScenario(base: string, runs: number, total: number): Promise<string[][]> {
  const dir = join(base, `status-${total}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const store = new FsHistoryStore(join(dir, ".mcp"));
  const per = 100;
  const diff = (e: LogEntry) => new TextEncoder().encode(`diff --git a/${e.file_path} b/${e.file_path}\n--- a/${e.file_path}\n+++ b/${e.file_path}\n@@ -1,3 +1,4 @@\n a\n-b\n+c\n+d\n e\n`);
  for (const [conv, entries] of syntheticEntries(Math.ceil(total / per), per)) {
    await store.appendLog(conv, entries);
    await store.putObjects(entries.filter((e) => e.diff_file !== null).map((e) => ({ rel: e.diff_file!, bytes: diff(e) })));
  }
  const fresh = () => new FsHistoryStore(join(dir, ".mcp"));
  const op = await timeFn(async () => {
    const r = await historyStatus(fresh());
    if (r.entries.length !== total) throw new Error(`status saw ${r.entries.length} entries, not ${total}`);
  }, runs);
  const pageFirst = await timeFn(async () => {
    const st = await pageState(fresh(), dir, new DiffStats());
    if (st.conversations.length !== Math.ceil(total / per)) throw new Error("the page state lost conversations");
  }, runs);
  const warmStore = fresh();
  const warmStats = new DiffStats();
  await pageState(warmStore, dir, warmStats);
  const pageWarm = await timeFn(async () => void (await pageState(warmStore, dir, warmStats)), runs);
  const stamp = await timeFn(async () => void (await warmStore.changeStamp()), runs);
  const cmd = await timeCommand([BINARY, "history", "status", "--root", dir], { cwd: ROOT, runs, warmup: 1 });
  const json = await timeCommand([BINARY, "history", "status", "--json", "--root", dir], { cwd: ROOT, runs, warmup: 1 });
  const logs = join(dir, ".mcp", "edit_history", "logs");
  const jq = await timeCommand(["sh", "-c", `jq -c . ${logs}/*.log > /dev/null`], { cwd: ROOT, runs, warmup: 1 });
  const jqMs = median(jq.ms);
  const startup = await timeCommand([BINARY, "--version"], { cwd: ROOT, runs, warmup: 1 });
  const row = (what: string, ms: number, target: boolean) => [what, fmtMs(ms), target ? (ms < 200 ? "yes" : "NO") : "", fmtRatio(ms / jqMs)];
  return [
    row(`status over ${total} entries: the op (in process)`, median(op), true),
    row("  the command, table (new process)", median(cmd.ms), true),
    row("  the command, --json (new process)", median(json.ms), true),
    row("  anchor: jq -c over the same logs", jqMs, false),
    row("review page state, first load (reads every diff)", median(pageFirst), false),
    row("review page state, later loads (logs only)", median(pageWarm), false),
    row("review page change stamp (one poll)", median(stamp), false),
    row("(start-up alone: worksnap --version)", median(startup.ms), false),
  ];
}

/**
 * One tool call's entry logged into a conversation that already holds `n` entries (the recorder's commit: under
 * the log lock, flushed), for growing n: the cost must stay the call's own. Anchor: the same line appended to a
 * file of the same length with one write and one fdatasync, in process (the floor of a durable append).
 */
async function logScenario(base: string, runs: number): Promise<string[][]> {
  const dir = join(base, "log-growth");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, ".mcp"), { recursive: true });
  const store = new FsHistoryStore(join(dir, ".mcp"));
  const conv = "conv_1700000000001_benchloglogl";
  let index = 0;
  const entry = (): LogEntry => {
    const e = editEntry(conv, index, index);
    index++;
    return e;
  };
  const anchorFile = join(dir, "anchor.log");
  const rows: string[][] = [];
  for (const size of [1, 2_000, 10_000]) {
    const batch: LogEntry[] = [];
    while (index < size) batch.push(entry());
    if (batch.length > 0) await store.withLogLock([conv], () => store.appendLog(conv, batch));
    const logged = await timeFn(() => store.withLogLock([conv], () => store.appendLog(conv, [entry()])), runs * 3);
    cpSync(join(dir, ".mcp", "edit_history", "logs", `${conv}.log`), anchorFile);
    const line = new TextEncoder().encode(`${JSON.stringify(entry())}\n`);
    const anchor = await timeFn(async () => {
      const fd = openSync(anchorFile, "a");
      try {
        writeSync(fd, line);
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }, runs * 3);
    const ms = median(logged);
    const anchorMs = median(anchor);
    rows.push([`log one entry into a conversation of ${size} entries (the op, in process)`, fmtMs(ms), "", fmtRatio(ms / anchorMs)]);
    rows.push([`  anchor: write + fdatasync of the same line to a file as long`, fmtMs(anchorMs), "", ""]);
  }
  return rows;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runs = Number(argValue(args, "--runs") ?? 5);
  const edits = Number(argValue(args, "--edits") ?? 1000);
  const lines = Number(argValue(args, "--lines") ?? 5000);
  const entries = Number(argValue(args, "--entries") ?? 10_000);
  const base = resolve(argValue(args, "--dir") ?? "/tmp/wsbench-history");
  if (!existsSync(BINARY)) throw new Error("dist/worksnap is missing: run `npm run build` first");
  mkdirSync(base, { recursive: true });
  const only = argValue(args, "--only");
  const reject = only === undefined || only === "reject" ? await rejectScenario(base, runs, lines, edits) : { rows: [], ok: true };
  const status = only === undefined || only === "status" ? await statusScenario(base, runs, entries) : [];
  const logRows = only === undefined || only === "log" ? await logScenario(base, runs) : [];
  const headers = ["what", "median", "under target", "vs anchor"];
  const rows = [...reject.rows, ...status, ...logRows];
  console.log(`\n${machineLine()}\n`);
  console.log(table(headers, rows));
  if (!reject.ok) console.log("\nSOME RESULTS DID NOT MATCH THE EXPECTED FILE (see above)");
  if (args.includes("--write")) {
    const md = [
      "# Edit history benchmark figures",
      "",
      `Measured by \`node_modules/.bin/bun bench/history.ts --runs ${runs} --write\` on ${machineLine()}.`,
      "",
      `Medians of ${runs} runs after one untimed warm-up. The reject scenario records ${edits} edits to one ${lines}-line`,
      "TypeScript file through the real write path and recorder, then rejects the first one (two lines inserted at the",
      "top, so every later hunk is two lines off); each run works on a fresh copy of the recorded repository (copying",
      "is not timed), and every result was checked against the expected file. The op includes loading the history,",
      "replaying the other edits, the outside-change check, the review record (fsynced) and the atomic write. The",
      "anchor applies the same remaining diffs with GNU patch to the original file. The status scenario reads",
      `${entries} log entries in ${Math.ceil(entries / 100)} conversation logs; the anchor is jq parsing the same logs.`,
      "",
      markdownTable(headers, rows),
      "",
    ].join("\n");
    writeFileSync(join(ROOT, "bench", "history-README-figures.md"), md);
    console.log("\nwrote bench/history-README-figures.md");
  }
  return reject.ok ? 0 : 1;
}

process.exit(await main());
