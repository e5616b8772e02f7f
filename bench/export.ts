// Benchmark: `worksnap snapshot export` and `snapshot import` of the generated repository's snapshot, beside tar.
//
//   npm run build && node_modules/.bin/bun bench/export.ts [--dir DIR] [--runs N] [--bin PATH] [--baseline BIN] [--without-native]
//                                                          [--append FILE] [--gate]
//
// Rows, one run of each per round, interleaved, after one untimed warm-up round:
//   export   `worksnap snapshot export ID -o FILE`          anchor `tar -cf FILE` of the work tree (.git and .mcp excluded)
//            references for what an export must do beyond tar: the archive hashed as it is written (tar | tee |
//            openssl dgst), and every file read and hashed on the native threads (bench/hash-floor.ts); and the
//            durability an export gives its bundle (fsync before it answers): `tar -cf FILE && sync -f FILE`
//   import   `worksnap snapshot import FILE` into an empty    anchor `tar -xf` of that tar into an empty directory
//            repository
// The warm-up round brings the work tree, the snapshot store and both archives into the page cache, so both sides
// of each ratio start warm: a cold page cache would measure the disk, the same for both, and hide the difference.
// Every run starts after an untimed `sync`: the gigabyte the previous run left dirty in the page cache would
// otherwise be written back during the next one, and the kernel throttles whichever process writes then.
// The imported repositories and extracted trees are moved aside after each run and deleted at the end: on ext4 a
// directory full of inodes deleted moments before makes the next creations slower, and that would land on
// whichever row came next. Every export's bundle must be byte-identical to the first; every import must report
// the snapshot id the export carried. `--baseline BIN` (another build, e.g. of the previous version) adds its export
// and import to every round, for a before/after in the same run. `--gate` exits 1 when a target is missed; `--append FILE` adds the markdown.

import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureGenerated, readMarker } from "./gen-repo.ts";
import { appendFigures, argValue, fileSystemLine, fmtBytes, fmtMs, fmtRatio, machineLine, markdownTable, median, runMain, timeCommand, type CommandTiming } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const DEFAULT_DIR = "/tmp/wsbench-large";
const TARGETS = { export: 1.2, import: 1.5 };

interface Row {
  name: string;
  timing: CommandTiming;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runs = Number(argValue(args, "--runs") ?? 3);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
  const dir = resolve(argValue(args, "--dir") ?? DEFAULT_DIR);
  const bin = resolve(argValue(args, "--bin") ?? join(ROOT, "dist", "worksnap"));
  if (!existsSync(bin)) throw new Error(`${bin} not found; build it with \`npm run build\``);
  await ensureGenerated(dir, { files: 100_000, seed: "1", layout: "monorepo", explicit: argValue(args, "--dir") !== undefined, log: (m) => console.error(m) });
  const marker = readMarker(dir);

  const snapshotId = await run([bin, "snapshot", "create", "--root", dir]);
  console.error(`snapshot ${snapshotId}`);
  const scratch = mkdtempSync(join(dir, "..", "wsbench-export-scratch-"));
  const trash = join(scratch, "trash");
  mkdirSync(trash);
  const bundle = join(scratch, "bundle.tar");
  const treeTar = join(scratch, "tree.tar");
  const target = join(scratch, "target");
  let moved = 0;
  const clearTarget = () => {
    if (existsSync(target)) renameSync(target, join(trash, String(moved++)));
  };
  // --without-native: every worksnap process with WORKSNAP_NATIVE=0 (the darwin executables' TypeScript paths)
  const ours = args.includes("--without-native") ? { WORKSNAP_NATIVE: "0" } : undefined;
  const baselineArg = argValue(args, "--baseline");
  const baseline = baselineArg ? resolve(baselineArg) : null;
  if (baseline && !existsSync(baseline)) throw new Error(`${baseline} not found`);
  /** One timed run of `cmd` in the work tree, which writes `file` (removed before, and after when `drop`). */
  const timeWriting = async (cmd: string[], file: string, drop: boolean, env?: Record<string, string>) => {
    const t = await timeCommand(cmd, {
      cwd: dir,
      env,
      runs: 1,
      prepare: () => {
        rmSync(file, { force: true });
        syncAll();
      },
    });
    if (drop) rmSync(file, { force: true });
    return t;
  };
  /** The bundle's SHA-256, read in pieces: a gigabyte read whole would hand the next run memory just freed. */
  const bundleHash = async () => {
    const h = new Bun.CryptoHasher("sha256");
    for await (const chunk of Bun.file(bundle).stream()) h.update(chunk);
    return h.digest("hex");
  };
  /** One timed export of the snapshot by `exe` into the bundle file. */
  const timeExport = (exe: string) => timeWriting([exe, "snapshot", "export", snapshotId, "-o", bundle, "--root", dir], bundle, false, ours);
  /** One timed import of the bundle by `exe` into a new empty repository; checks the id it stored. */
  const timeImport = async (exe: string) => {
    const t = await timeCommand([exe, "snapshot", "import", bundle, "--root", target, "--json"], {
      cwd: scratch,
      env: ours,
      runs: 1,
      prepare: async () => {
        clearTarget();
        mkdirSync(target);
        await run(["git", "init", "-q", target]);
        syncAll();
      },
    });
    const imported = await run([bin, "snapshot", "info", snapshotId, "--root", target, "--json"]);
    importedIds.push(JSON.parse(imported).snapshot_id);
    return t;
  };
  const loadBefore = `${machineLine()}; work tree on ${fileSystemLine(dir)}; bundle on ${fileSystemLine(scratch)}`;
  const bundleHashes: string[] = [];
  const importedIds: string[] = [];
  const rows = new Map<string, CommandTiming>();
  const names = {
    export: "worksnap snapshot export ID -o FILE",
    exportBase: "baseline: worksnap snapshot export ID -o FILE (--baseline)",
    importBase: "baseline: worksnap snapshot import FILE (--baseline)",
    tarC: "tar -cf FILE (work tree, without .git and .mcp)",
    tarFlushed: "tar -cf FILE, then sync -f FILE (the archive on the disk when it ends, as an export's bundle is)",
    tee: "reference: tar -cf - | tee FILE | openssl dgst -sha256 (the archive written and hashed once)",
    floor: "reference: native read + SHA-256 of every tracked file (bench/hash-floor.ts)",
    import: "worksnap snapshot import FILE (empty repository)",
    tarX: "tar -xf FILE (empty directory)",
  };
  try {
    for (let round = 0; round <= runs; round++) {
      const label = round === 0 ? "warm-up" : `round ${round}/${runs}`;
      console.error(`${label}: export`);
      // With --baseline the two builds take turns going first: on a VM whose host takes back memory left idle,
      // the second of two runs finds memory the first has just freed, and its page faults cost less.
      const baseFirst = baseline !== null && round % 2 === 1;
      const exportOnce = async (exe: string) => {
        const t = await timeExport(exe);
        bundleHashes.push(await bundleHash());
        return t;
      };
      const exBaseFirst = baseFirst ? await exportOnce(baseline) : null;
      const ex = await exportOnce(bin);
      const exBase = baseline ? (exBaseFirst ?? (await exportOnce(baseline))) : null;
      console.error(`${label}: tar -c`);
      const tc = await timeWriting(["tar", "-cf", treeTar, "--exclude=./.git", "--exclude=./.mcp", "."], treeTar, false);
      const tcFlushed = await timeWriting(["bash", "-c", `tar -cf ${treeTar}.flushed --exclude=./.git --exclude=./.mcp . && sync -f ${treeTar}.flushed`], `${treeTar}.flushed`, true);
      console.error(`${label}: references`);
      const tee = await timeWriting(["bash", "-c", `tar -cf - --exclude=./.git --exclude=./.mcp . | tee ${treeTar}.tee | openssl dgst -sha256 >/dev/null`], `${treeTar}.tee`, true);
      const floor = await timeCommand([process.execPath, join(ROOT, "bench", "hash-floor.ts"), dir], { cwd: dir, runs: 1, prepare: syncAll });
      console.error(`${label}: import`);
      const imBaseFirst = baseFirst ? await timeImport(baseline) : null;
      const im = await timeImport(bin);
      const imBase = baseline ? (imBaseFirst ?? (await timeImport(baseline))) : null;
      console.error(`${label}: tar -x`);
      const tx = await timeCommand(["tar", "-xf", treeTar, "-C", target], {
        cwd: scratch,
        runs: 1,
        prepare: () => {
          clearTarget();
          mkdirSync(target);
          syncAll();
        },
      });
      clearTarget();
      if (round === 0) continue;
      const timed: [string, CommandTiming][] = [[names.export, ex], [names.tarC, tc], [names.tarFlushed, tcFlushed], [names.tee, tee], [names.floor, floor], [names.import, im], [names.tarX, tx]];
      if (exBase && imBase) {
        timed.splice(1, 0, [names.exportBase, exBase]);
        timed.splice(7, 0, [names.importBase, imBase]);
      }
      // each run's time as it comes, in the order run: a median hides whether a row was slow in some rounds only
      console.error(`${label}: ${timed.map(([name, t]) => `${name.split(" (")[0]} ${fmtMs(t.ms[0] as number)}`).join("; ")}`);
      for (const [name, t] of timed) {
        const sofar = rows.get(name);
        if (!sofar) rows.set(name, t);
        else {
          sofar.ms.push(...t.ms);
          sofar.maxRss.push(...t.maxRss);
        }
      }
    }
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }

  const identical = bundleHashes.every((h) => h === bundleHashes[0]);
  const sameIds = importedIds.every((id) => id === snapshotId);
  const list: Row[] = [...rows].map(([name, timing]) => ({ name, timing }));
  const med = (name: string) => median((rows.get(name) as CommandTiming).ms);
  const exportRatio = med(names.export) / med(names.tarC);
  const importRatio = med(names.import) / med(names.tarX);
  const flushedRatio = med(names.export) / med(names.tarFlushed);
  const loadAfter = machineLine();
  const md = [
    `### snapshot export / import (${marker ? `${marker.files} files, ${fmtBytes(marker.bytes)}` : dir}; ${runs} rounds${ours ? "; WORKSNAP_NATIVE=0" : ""})`,
    "",
    `before: ${loadBefore}`,
    `after:  ${loadAfter}`,
    "",
    markdownTable(
      ["what", "median", "min", "max", "peak RSS"],
      list.map((r) => [r.name, fmtMs(median(r.timing.ms)), fmtMs(Math.min(...r.timing.ms)), fmtMs(Math.max(...r.timing.ms)), fmtBytes(Math.max(...r.timing.maxRss))]),
    ),
    "",
    markdownTable(
      ["ratio", "value", "target", "verdict"],
      [
        ["export vs tar -cf", fmtRatio(exportRatio), `≤ ${TARGETS.export}x`, exportRatio <= TARGETS.export ? "met" : "missed"],
        ["export vs tar -cf, flushed (same durability; information)", fmtRatio(flushedRatio), "", ""],
        ["import vs tar -xf", fmtRatio(importRatio), `≤ ${TARGETS.import}x`, importRatio <= TARGETS.import ? "met" : "missed"],
      ],
    ),
    "",
    `bundles byte-identical across ${bundleHashes.length} exports: ${identical ? "yes" : "NO"} (sha256 ${bundleHashes[0]?.slice(0, 8)}…); ` +
      `every import stored ${snapshotId.slice(0, 15)}…: ${sameIds ? "yes" : "NO"}`,
  ].join("\n");
  console.log(md);
  const appendTo = argValue(args, "--append");
  if (appendTo) appendFigures(appendTo, md);
  console.error("removing the imported and extracted trees ...");
  rmSync(scratch, { recursive: true, force: true });
  if (!identical || !sameIds) return 1;
  if (args.includes("--gate") && (exportRatio > TARGETS.export || importRatio > TARGETS.import)) return 1;
  return 0;
}

/** Writes back every dirty page (untimed, before each run). */
function syncAll(): void {
  Bun.spawnSync(["sync"]);
}

/** Runs a command to completion; its trimmed stdout, or an error with its stderr. */
async function run(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${err.trim().slice(0, 2000)}`);
  return out.trim();
}

await runMain(main);
