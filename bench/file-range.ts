// Benchmark: a line range of a huge file.
//
//   node_modules/.bin/bun bench/file-range.ts [--runs N] [--gb N] [--baseline BINARY]
//
// `worksnap snapshot file huge.log --start-line 1 --end-line 2` (and lines 1000-1040) on a sparse file of N GB
// (default 2) whose first lines are text, untracked in a git repository, so no blob id is known: the range is read
// only as far as it needs and the whole-file hash is not taken. Anchor, in the same rounds: `sed -n 1,2p;3q` (GNU
// sed reading the same lines and stopping), and, for scale, `sha256sum` of the whole file (what a whole-file blob
// id costs). The binary is the compiled one (npm run build); --baseline adds the same read by another build (an
// earlier version) to the rounds.

import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { argValue, fmtMs, fmtRatio, machineLine, median, printTable, runMain, timeRounds, type CommandTiming } from "./lib.ts";

const BINARY = join(resolve(import.meta.dir, ".."), "dist", "worksnap");

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runs = Number(argValue(args, "--runs") ?? 5);
  const gb = Number(argValue(args, "--gb") ?? 2);
  const dir = mkdtempSync(join(tmpdir(), "bench-file-range-"));
  try {
    Bun.spawnSync(["git", "init", "-q"], { cwd: dir });
    const file = join(dir, "huge.log");
    const fd = openSync(file, "w");
    for (let i = 1; i <= 2000; i++) writeSync(fd, `line ${i}: some log text that a model wants to see the start of\n`);
    closeSync(fd);
    truncateSync(file, gb * 1024 ** 3);
    console.log(machineLine());
    console.log(`a ${gb} GB sparse file, ${runs} runs per row (median)`);
    const opts = { cwd: dir };
    const baseline = argValue(args, "--baseline");
    const results = await timeRounds(
      [
        ...(baseline ? [{ name: "baseline build, lines 1-2", cmd: [resolve(baseline), "snapshot", "file", "huge.log", "--start-line", "1", "--end-line", "2"], opts }] : []),
        { name: "worksnap snapshot file --start-line 1 --end-line 2", cmd: [BINARY, "snapshot", "file", "huge.log", "--start-line", "1", "--end-line", "2"], opts },
        { name: "worksnap snapshot file --start-line 1000 --end-line 1040", cmd: [BINARY, "snapshot", "file", "huge.log", "--start-line", "1000", "--end-line", "1040"], opts },
        { name: "sed -n 1,2p;3q (anchor)", cmd: ["sed", "-n", "1,2p;3q", "huge.log"], opts },
        { name: "sha256sum of the whole file (what a blob id costs)", cmd: ["sha256sum", "huge.log"], opts },
      ],
      { runs, warmup: 1 },
    );
    const med = (name: string) => {
      const r = results.get(name);
      if (!r || r instanceof Error) throw r ?? new Error(`no result for ${name}`);
      return median((r as CommandTiming).ms);
    };
    const rows = [...results.keys()].map((name) => [name, fmtMs(med(name))]);
    printTable(["what", "median"], rows);
    const ours = med("worksnap snapshot file --start-line 1 --end-line 2");
    printTable(["ratio", "value"], [
      ["lines 1-2 vs sed (time ratio)", fmtRatio(ours / med("sed -n 1,2p;3q (anchor)"))],
      ["whole-file sha256sum vs lines 1-2 (times slower)", fmtRatio(med("sha256sum of the whole file (what a blob id costs)") / ours)],
      ...(baseline ? [["baseline vs this build, lines 1-2 (times slower)", fmtRatio(med("baseline build, lines 1-2") / ours)]] : []),
    ]);
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await runMain(main);
