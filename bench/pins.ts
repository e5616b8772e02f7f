// Benchmark: what the session auto-lease costs. Two compiled servers (`dist/worksnap serve`) on one generated
// repository of 10,000 small files, each spoken to through the MCP SDK's own client:
//   - the anchor session has no pins: it writes u.txt, a file it never read (the write passes through unpinned);
//   - the pinned session first shows every file (grep pages of 1,000 matches: 10,000 pins) and reads p.txt, then
//     writes p.txt, which is pinned: the write path checks the pin under the lock on every write.
// The writes alternate between the two (the order swapped every round) so both see the same history growth and
// machine load; each write is a one-file worktree write_file without lease_id. Printed: medians and the ratio.
//
// Memory: the resident set of the pinned server before and after the 10,000 pins (each read after the server's
// idle collection), beside a control server that searches the same files without a match shown (the same leases
// and caches, no pins), and, in this process, the heap a Pins of 10,000 entries of the same shape holds.
//
//   npm run build && node_modules/.bin/bun bench/pins.ts [--files N] [--writes N]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { heapStats } from "bun:jsc";
import { blobIdOf } from "../src/core/hash";
import { PIN_LIMIT, Pins } from "../src/mcp/pins";
import { argValue, fmtMs, fmtRatio, loadLine, machineLine, median, table, runMain } from "./lib.ts";
import { processMemory, resultOf, startServer } from "./mcp-server.ts";

const args = process.argv.slice(2);
const files = Number(argValue(args, "--files") ?? PIN_LIMIT);
const writes = Number(argValue(args, "--writes") ?? 200);
const binary = join(import.meta.dir, "..", "dist", "worksnap");

const name = (i: number) => `src/m${String(Math.floor(i / 500)).padStart(2, "0")}/file${String(i).padStart(5, "0")}.ts`;

function git(cwd: string, ...a: string[]): void {
  const r = Bun.spawnSync(["git", ...a], {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" },
  });
  if (r.exitCode !== 0) throw new Error(`git ${a.join(" ")}: ${r.stderr.toString()}`);
}

function rssMb(pid: number): number {
  return processMemory(pid).rss;
}

async function serve(root: string) {
  const server = await startServer(binary, ["serve", "--root", root]);
  return { ...server, call: async (tool: string, a: Record<string, unknown>): Promise<any> => resultOf(tool, (await server.call(tool, a)).answer) };
}

/** The heap a Pins of `n` entries holds (paths and blob ids as fresh strings, as parsed answers make them). */
function pinsHeapMb(n: number): number {
  const measure = () => {
    Bun.gc(true);
    return heapStats().heapSize;
  };
  const before = measure();
  const pins = new Pins(n);
  for (let i = 0; i < n; i++) pins.merge([[`${name(i)}`.slice(0), blobIdOf(`content of ${i}\n`)]]);
  const after = measure();
  if (pins.size !== n) throw new Error("pins lost");
  return (after - before) / 1048576;
}

async function main(): Promise<number> {
  const start = machineLine();
  const root = mkdtempSync(join(tmpdir(), "wsbench-pins-"));
  try {
    for (let i = 0; i < files; i++) {
      const p = join(root, name(i));
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, `export const v${i} = ${i}; // needle\n`);
    }
    writeFileSync(join(root, "p.txt"), "pinned 0\n");
    writeFileSync(join(root, "u.txt"), "unpinned 0\n");
    git(root, "init", "-q", "-b", "main");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "bench");

    const anchor = await serve(root);
    const pinned = await serve(root);
    const control = await serve(root);
    try {
      await anchor.call("snapshot_list", { path: "." });
      await Bun.sleep(500);
      const rssBefore = rssMb(pinned.pid);
      const controlBefore = rssMb(control.pid);
      const none = await control.call("snapshot_grep", { pattern: "no such needle", fixed_strings: true });
      await control.call("snapshot_file", { path: "p.txt" });
      let cursor: string | undefined;
      let shown = 0;
      do {
        const page = await pinned.call("snapshot_grep", { pattern: "needle", fixed_strings: true, max_matches: 1000, ...(cursor ? { cursor } : {}) });
        shown += page.matches.length;
        cursor = page.cursor;
      } while (cursor);
      await pinned.call("snapshot_file", { path: "p.txt" });
      await Bun.sleep(500); // the server's idle collection runs 250 ms after a call
      const rssAfter = rssMb(pinned.pid);
      const controlAfter = rssMb(control.pid);
      await control.client.close();

      const times = { anchor: [] as number[], pinned: [] as number[] };
      const write = async (s: Awaited<ReturnType<typeof serve>>, path: string, i: number, into: number[]) => {
        const t0 = performance.now();
        await s.call("workspace_write_file", { path, content: `${path} ${i}\n` });
        into.push(performance.now() - t0);
      };
      for (let i = 1; i <= writes; i++) {
        if (i % 2 === 0) {
          await write(anchor, "u.txt", i, times.anchor);
          await write(pinned, "p.txt", i, times.pinned);
        } else {
          await write(pinned, "p.txt", i, times.pinned);
          await write(anchor, "u.txt", i, times.anchor);
        }
      }
      // the first rounds warm both servers up
      const warm = (xs: number[]) => xs.slice(Math.min(10, Math.floor(xs.length / 10)));
      const a = median(warm(times.anchor));
      const p = median(warm(times.pinned));
      console.log(`${files} files; the pinned session showed ${shown} grep matches and read p.txt; ${writes} one-file writes each, alternating`);
      console.log(
        table(
          ["write_file (worktree, no lease_id)", "median", "ratio"],
          [
            ["anchor: unpinned file, session without pins", fmtMs(a), "1.00x"],
            [`pinned file, session with ${PIN_LIMIT} pins`, fmtMs(p), fmtRatio(p / a)],
          ],
        ),
      );
      console.log(
        table(
          ["memory", "MB"],
          [
            ["server RSS before the pins (after idle collection)", rssBefore.toFixed(1)],
            [`server RSS after ${shown} grep matches and 1 read (after idle collection)`, rssAfter.toFixed(1)],
            ["difference (pins, plus the leases and caches the greps left)", (rssAfter - rssBefore).toFixed(1)],
            [`control: RSS difference after a grep searching ${none.files_searched} files, no match shown, and 1 read`, (controlAfter - controlBefore).toFixed(1)],
            ["pinned minus control (the pins, and what ten answers of 1,000 matches leave beyond one grep)", (rssAfter - rssBefore - (controlAfter - controlBefore)).toFixed(1)],
            [`heap of a Pins of ${PIN_LIMIT} entries, in this process`, pinsHeapMb(PIN_LIMIT).toFixed(1)],
          ],
        ),
      );
    } finally {
      await anchor.client.close();
      await pinned.client.close();
    }
    console.log(`${start}; after: ${loadLine()}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return 0;
}

if (import.meta.main) await runMain(main);
