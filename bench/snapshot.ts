// Benchmark: `worksnap snapshot create`, cold and warm, beside its anchors, on one generated repository.
//
//   node_modules/.bin/bun bench/snapshot.ts [--layout monorepo|releases] [--small] [--dir DIR] [--runs N] [--seed S]
//                                            [--bin PATH] [--append FILE] [--gate] [--no-hash]
//
// Every row runs in the same process, on the same tree, with a warm page cache, in interleaved rounds after an
// untimed warm-up round. The worksnap rows read "not built" when dist/worksnap is missing; the anchors and the hash
// comparison run anyway. `--gate` exits 1 when a target is missed; `--append FILE` adds the markdown to FILE.
//
// `--layout releases` generates (bench/gen-repo.ts) and measures many release trees of one project side by side,
// where most paths share their blob with other paths: it adds the anchors a capture that reads each distinct blob
// once is held to (sha256sum of the distinct blobs, and the floor of hashing them once on every core).

import { existsSync, readFileSync, lstatSync, mkdirSync, renameSync, rmSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { createSHA256 } from "hash-wasm";
import { ensureGenerated, readMarker, Rng, seedHash, type RepoLayout } from "./gen-repo.ts";
import { indexFiles } from "./hash-floor.ts";
import { processMemory, resultOf, startServer } from "./mcp-server.ts";
import {
  CommandFailed, appendFigures, argValue, fmtBytes, fmtMs, fmtRate, fmtRatio, loadLine, machineLine, markdownTable, median,
  table, timeFn, timeRounds, type CommandTiming, type Contender,
} from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const DEFAULT_BIN = join(ROOT, "dist", "worksnap");
const HASH_BYTES = 256 * 1024 * 1024;
/** Targets per layout. Shared blobs: cold near the cost of the unique bytes; without: nothing slower than before. */
const TARGETS = {
  monorepo: { vsSha256sum: 3, vsGitAdd: 6, warmVsStatus: 1.15, serverVsStatus: 1.05, rss: 400e6 },
  releases: { vsStatusPlusFloor: 1.3, vsGitAdd: 4, warmVsStatus: 1.15, serverVsStatus: 1.05, rss: 400e6 },
};

interface Row {
  name: string;
  timing?: CommandTiming;
  note?: string; // shown instead of figures: "not built", or why it failed
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const small = args.includes("--small");
  const layout = (argValue(args, "--layout") ?? "monorepo") as RepoLayout;
  if (layout !== "monorepo" && layout !== "releases") throw new Error("--layout must be monorepo or releases");
  const releases = layout === "releases";
  const runs = Number(argValue(args, "--runs") ?? (small ? 5 : 3));
  const seed = argValue(args, "--seed") ?? "1";
  const files = small ? 3_000 : releases ? 90_000 : 100_000;
  const defaultDir = `/tmp/wsbench-${releases ? "releases" : "large"}${small ? "-small" : ""}`.replace("large-small", "small");
  const dir = resolve(argValue(args, "--dir") ?? defaultDir);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");

  await ensureGenerated(dir, { files, seed, layout, explicit: argValue(args, "--dir") !== undefined, log: (m) => console.error(m) });
  const marker = readMarker(dir);
  const BIN = resolve(argValue(args, "--bin") ?? DEFAULT_BIN);
  const built = existsSync(BIN);
  const loadBefore = machineLine();
  if (!built) console.error(`note: ${BIN} not found; build it with \`npm run build\`. Timing the anchors only.\n`);

  // One run of each row per round: a shift in machine load then hits every row alike.
  // The sha256sum row goes first, and the warm-up round brings the whole tree into the page cache.
  // Deleted tracked files and directory symlinks make sha256sum complain; xargs then exits 123, which is expected.
  const scratch = mkdtempSync(join(tmpdir(), "wsbench-index-"));
  // the state of earlier cold runs is moved aside, not deleted, until the end: on ext4 without a journal the
  // inodes of files deleted in the last minutes are skipped when new files are made (recently_deleted), which
  // made each cold run's first files many times slower to create than a first capture's on a repository
  const trash = join(dir, "..", `${basename(dir)}.trash-${process.pid}`);
  const tmpIndex = join(scratch, "index");
  const distinctList = join(scratch, "distinct");
  writeFileSync(distinctList, indexFiles(dir, true).join("\0"));
  const contenders: Contender[] = [
    { name: "git ls-files -z | xargs -0 -P2 sha256sum", cmd: ["bash", "-c", "git ls-files -z | xargs -0 -P2 sha256sum >/dev/null 2>&1"], opts: { cwd: dir, okCodes: [0, 123] } },
    // how other agent tools take a shadow snapshot
    { name: "git add -A (fresh index) + git write-tree", cmd: ["bash", "-c", "git add -A && git write-tree >/dev/null"], opts: { cwd: dir, env: { GIT_INDEX_FILE: tmpIndex }, prepare: () => rmSync(tmpIndex, { force: true }) } },
    { name: "git status --porcelain=v1 -z", cmd: ["git", "status", "--porcelain=v1", "-z"], opts: { cwd: dir } },
    // reference, not an anchor: reading and hashing every tracked file with the native module, nothing else
    { name: "floor: native read + SHA-256 only", cmd: [process.execPath, join(ROOT, "bench", "hash-floor.ts"), dir], opts: { cwd: dir } },
  ];
  if (releases) {
    contenders.push(
      { name: "xargs -0 -P2 sha256sum < distinct blobs", cmd: ["bash", "-c", `xargs -0 -P2 sha256sum < ${distinctList} >/dev/null 2>&1`], opts: { cwd: dir, okCodes: [0, 123] } },
      // the floor of a capture that reads each distinct blob once
      { name: "floor: native read + SHA-256, each distinct blob once", cmd: [process.execPath, join(ROOT, "bench", "hash-floor.ts"), dir, "--distinct"], opts: { cwd: dir } },
    );
  }
  const create = [BIN, "snapshot", "create", "--root", dir];
  if (built) {
    // Cold starts without any worksnap state; the next capture follows it directly, with nothing changed in
    // between: the first to run git status on worksnap's copy of the index, it builds git's untracked cache there
    // (src/repo/status-index.ts), which happens once per change of the index; warm is the capture after that.
    contenders.push(
      { name: "worksnap snapshot create (cold)", cmd: create, opts: { cwd: dir, prepare: () => setAside(join(dir, ".mcp"), trash) } },
      { name: FIRST_WARM, cmd: create, opts: { cwd: dir } },
      { name: "worksnap snapshot create (warm)", cmd: create, opts: { cwd: dir } },
    );
  }
  const timings = await timeRounds(contenders, { runs, warmup: 1, onRun: (name) => process.stderr.write(`  ${name}\n`) });
  rmSync(scratch, { recursive: true, force: true });
  rmSync(trash, { recursive: true, force: true });
  const rows: Row[] = contenders.map(({ name }) => {
    const t = timings.get(name);
    if (t instanceof CommandFailed) return { name, note: `failed (exit ${t.code}): ${t.stderr.trim().split("\n")[0] ?? ""}` };
    if (t instanceof Error) return { name, note: `failed: ${t.message}` };
    return { name, timing: t };
  });
  if (!built) rows.push({ name: "worksnap snapshot create (cold)", note: "not built" }, { name: FIRST_WARM, note: "not built" }, { name: "worksnap snapshot create (warm)", note: "not built" });
  if (built) rows.push(...(await warmInServer(BIN, dir, runs)));

  const hash = args.includes("--no-hash") ? null : await hashComparison(dir, seed);
  const machine = `${loadBefore} (at start); ${loadLine()} (at end)`;
  const report = render(rows, hash, { dir, runs, machine, layout, files: marker?.files ?? NaN, bytes: marker?.bytes ?? NaN, distinct: marker?.distinctBytes, blobs: marker?.distinctBlobs });
  console.log("\n" + report.text + "\n");
  console.log("---- markdown for bench/README.md ----\n");
  console.log(report.markdown);
  const append = argValue(args, "--append");
  if (append) appendFigures(append, report.markdown);
  if (args.includes("--gate") && report.missed.length > 0) {
    console.error(`\ntargets missed: ${report.missed.join("; ")}`);
    return 1;
  }
  return 0;
}

/**
 * A warm `snapshot_create` inside a running server (the compiled binary, through the MCP SDK's client over
 * stdio, so the time includes the request and its answer), interleaved with `git status` in the same rounds:
 * what an agent's second capture of an unchanged tree costs, against the least any capture must do.
 */
async function warmInServer(bin: string, dir: string, runs: number): Promise<Row[]> {
  const server = await startServer(bin, ["serve", "--root", dir, "--index-budget", "0"], { stderr: "ignore" });
  const create = async () => resultOf("snapshot_create", (await server.call("snapshot_create", { paths: ["."] })).answer);
  const status = () => {
    const r = Bun.spawnSync(["git", "status", "--porcelain=v1", "-z"], { cwd: dir, stdout: "ignore", stderr: "ignore" });
    if (r.exitCode !== 0) throw new Error(`git status exited ${r.exitCode}`);
  };
  try {
    await create(); // the first capture of this server: warm state on disk, listings not yet kept
    await create();
    const inServer: number[] = [];
    const anchor: number[] = [];
    for (let i = 0; i < runs; i++) {
      anchor.push(...(await timeFn(status, 1, 0)));
      inServer.push(...(await timeFn(create, 1, 0)));
    }
    const rss = processMemory(server.pid).hwm * 1024 * 1024 || NaN;
    const timing = (ms: number[], maxRss: number): CommandTiming => ({ ms, maxRss: [maxRss], rssUpperBound: false, exitCodes: ms.map(() => 0) });
    return [
      { name: "git status --porcelain=v1 -z (beside the server)", timing: timing(anchor, NaN) },
      { name: "worksnap snapshot_create (warm, in a server)", timing: timing(inServer, rss) },
    ];
  } finally {
    await server.close();
  }
}

/** Moves `path` (if there) into `trash`, on the same file system, under a fresh name. */
function setAside(path: string, trash: string): void {
  if (!existsSync(path)) return;
  mkdirSync(trash, { recursive: true });
  renameSync(path, join(trash, `${Date.now()}-${Math.random().toString(36).slice(2)}`));
}


interface HashResult {
  files: number;
  bytes: number;
  rows: { name: string; ms: number }[];
}

/** Native SHA-256 against hash-wasm over the same ~256 MB of the repository's files, held in memory. */
async function hashComparison(dir: string, seed: string): Promise<HashResult> {
  process.stderr.write("timing sha256 in memory ...\n");
  const list = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: dir }).stdout.toString().split("\0").filter(Boolean);
  const r = new Rng(seedHash(seed) ^ 0x4a5b);
  for (let i = list.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  const bufs: Uint8Array[] = [];
  let bytes = 0;
  for (const p of list) {
    if (bytes >= HASH_BYTES) break;
    const full = join(dir, p);
    try {
      if (!lstatSync(full).isFile()) continue;
    } catch {
      continue; // deleted in the dirty state
    }
    const b = readFileSync(full);
    bufs.push(b);
    bytes += b.length;
  }
  const wasm = await createSHA256();
  const chunks: Uint8Array[] = [];
  const whole = Buffer.concat(bufs);
  for (let at = 0; at < whole.length; at += 1 << 20) chunks.push(whole.subarray(at, at + (1 << 20)));
  const runs = 3;
  const results = [
    { name: "Bun.CryptoHasher sha256, per file", fn: () => { for (const b of bufs) new Bun.CryptoHasher("sha256").update(b).digest(); } },
    { name: "hash-wasm createSHA256, per file", fn: () => { for (const b of bufs) wasm.init().update(b).digest("binary"); } },
    { name: "Bun.CryptoHasher sha256, one stream", fn: () => { const h = new Bun.CryptoHasher("sha256"); for (const c of chunks) h.update(c); h.digest(); } },
    { name: "hash-wasm createSHA256, one stream", fn: () => { wasm.init(); for (const c of chunks) wasm.update(c); wasm.digest("binary"); } },
  ];
  const rows: { name: string; ms: number }[] = [];
  for (const { name, fn } of results) rows.push({ name, ms: median(await timeFn(fn, runs)) });
  return { files: bufs.length, bytes, rows };
}

const FIRST_WARM = "worksnap snapshot create (first after cold: builds git's untracked cache, once per index change)";

interface RenderContext {
  dir: string;
  runs: number;
  machine: string;
  layout: RepoLayout;
  files: number;
  bytes: number;
  distinct?: number;
  blobs?: number;
}

function render(rows: Row[], hash: HashResult | null, ctx: RenderContext) {
  const get = (prefix: string) => rows.find((r) => r.name.startsWith(prefix))?.timing;
  const med = (t?: CommandTiming) => (t ? median(t.ms) : NaN);
  const cold = get("worksnap snapshot create (cold)");
  const warm = get("worksnap snapshot create (warm)");
  const firstWarm = get(FIRST_WARM);
  const inServer = get("worksnap snapshot_create (warm, in a server)");
  const besideServer = get("git status --porcelain=v1 -z (beside the server)");
  const sha = get("git ls-files");
  const add = get("git add");
  const status = get("git status");
  const floor = get("floor: native read + SHA-256 only");
  const distinctSha = get("xargs -0 -P2 sha256sum < distinct");
  const distinctFloor = get("floor: native read + SHA-256, each distinct");
  const firstWarmRow = ["first capture after cold vs git status (time ratio)", fmtRatio(med(firstWarm) / med(status)), "—", "once per index change"];
  const rssRuns = [cold, firstWarm, warm, inServer].flatMap((t) => t?.maxRss ?? []);
  const rss = rssRuns.length ? Math.max(...rssRuns) : NaN;
  const rssNote = [cold, warm].some((t) => t?.rssUpperBound) ? " (upper bound: no /usr/bin/time)" : "";

  const headers = ["what", "median", "min", "max", "peak RSS"];
  const timingRows = rows.map((r) =>
    r.timing
      ? [r.name, fmtMs(median(r.timing.ms)), fmtMs(Math.min(...r.timing.ms)), fmtMs(Math.max(...r.timing.ms)), fmtBytes(Math.max(...r.timing.maxRss))]
      : [r.name, r.note ?? "—", "", "", ""]);

  const missed: string[] = [];
  const check = (label: string, value: number, shown: string, target: string, pass: (v: number) => boolean) => {
    const verdict = Number.isFinite(value) ? (pass(value) ? "met" : "MISSED") : "n/a";
    if (verdict === "MISSED") missed.push(`${label} ${shown} (target ${target})`);
    return [label, shown, target, verdict];
  };
  const ratio = (a: number, b: number) => [a / b, fmtRatio(a / b)] as const;
  let ratioRows: string[][];
  if (ctx.layout === "releases") {
    const T = TARGETS.releases;
    const budget = med(status) + med(distinctFloor);
    ratioRows = [
      check("cold vs git status + distinct floor (time ratio)", ...ratio(med(cold), budget), `≤ ${T.vsStatusPlusFloor}x`, (v) => v <= T.vsStatusPlusFloor),
      check("cold vs git add -A + write-tree (x faster)", ...ratio(med(add), med(cold)), `≥ ${T.vsGitAdd}x`, (v) => v >= T.vsGitAdd),
      check("warm vs git status (time ratio)", ...ratio(med(warm), med(status)), `≤ ${T.warmVsStatus}x`, (v) => v <= T.warmVsStatus),
      check("warm in a server vs git status beside it (time ratio)", ...ratio(med(inServer), med(besideServer)), `≤ ${T.serverVsStatus}x`, (v) => v <= T.serverVsStatus),
      firstWarmRow,
      check("worksnap peak RSS" + rssNote, rss, fmtBytes(rss), `< ${fmtBytes(T.rss)}`, (v) => v < T.rss),
      ["cold vs sha256sum of every file (x faster)", fmtRatio(med(sha) / med(cold)), "—", "reference"],
      ["cold vs sha256sum of the distinct blobs (time ratio)", fmtRatio(med(cold) / med(distinctSha)), "—", "reference"],
      ["cold vs floor of every file (time ratio)", fmtRatio(med(cold) / med(floor)), "—", "reference"],
      ["distinct floor vs floor of every file (time ratio)", fmtRatio(med(distinctFloor) / med(floor)), "—", "reference"],
    ];
  } else {
    const T = TARGETS.monorepo;
    ratioRows = [
      check("cold vs sha256sum (x faster)", ...ratio(med(sha), med(cold)), `≥ ${T.vsSha256sum}x`, (v) => v >= T.vsSha256sum),
      check("cold vs git add -A + write-tree (x faster)", ...ratio(med(add), med(cold)), `≥ ${T.vsGitAdd}x`, (v) => v >= T.vsGitAdd),
      check("warm vs git status (time ratio)", ...ratio(med(warm), med(status)), `≤ ${T.warmVsStatus}x`, (v) => v <= T.warmVsStatus),
      check("warm in a server vs git status beside it (time ratio)", ...ratio(med(inServer), med(besideServer)), `≤ ${T.serverVsStatus}x`, (v) => v <= T.serverVsStatus),
      firstWarmRow,
      check("worksnap peak RSS" + rssNote, rss, fmtBytes(rss), `< ${fmtBytes(T.rss)}`, (v) => v < T.rss),
      ["floor vs sha256sum (x faster; reading + hashing alone)", fmtRatio(med(sha) / med(floor)), "—", "reference"],
      ["cold vs floor (time ratio)", fmtRatio(med(cold) / med(floor)), "—", "reference"],
    ];
  }
  const ratioHeaders = ["ratio", "value", "target", "verdict"];

  // Rows come in pairs, native then hash-wasm, for the same way of feeding the bytes.
  const hashHeaders = ["sha256 over the same bytes", "median", "throughput", "time vs native"];
  const hashRows = hash ? hash.rows.map((h, i) => [h.name, fmtMs(h.ms), fmtRate(hash.bytes, h.ms), fmtRatio(h.ms / hash.rows[i - (i % 2)]!.ms)]) : [];

  const distinct = ctx.distinct !== undefined ? ` (${(ctx.blobs ?? 0).toLocaleString("en-US")} distinct blobs, ${fmtBytes(ctx.distinct)})` : "";
  const where = `${Number.isFinite(ctx.files) ? ctx.files.toLocaleString("en-US") + " tracked files, " : ""}${fmtBytes(ctx.bytes)}${distinct}, layout ${ctx.layout}, ${ctx.runs} runs per row (median), repo ${ctx.dir}`;
  const hashWhere = hash ? `${hash.files.toLocaleString("en-US")} files, ${fmtBytes(hash.bytes)} in memory` : "";
  const text = [`snapshot create — ${where}`, ctx.machine, "", table(headers, timingRows), "", table(ratioHeaders, ratioRows)];
  if (hash) text.push("", `hash throughput — ${hashWhere}`, table(hashHeaders, hashRows));
  const markdown = [
    `### snapshot create (${new Date().toISOString().slice(0, 10)})`,
    "",
    `${where}.  `,
    `Machine: ${ctx.machine}.`,
    "",
    markdownTable(headers, timingRows),
    "",
    markdownTable(ratioHeaders, ratioRows),
  ];
  if (hash) markdown.push("", `SHA-256 throughput, ${hashWhere}:`, "", markdownTable(hashHeaders, hashRows));
  return { text: text.join("\n"), markdown: markdown.join("\n"), missed };
}

process.exit(await main());
