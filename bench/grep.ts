// snapshot_grep against ripgrep over the same files, same run.
//
//   node_modules/.bin/bun bench/grep.ts [--dir DIR] [--runs N] [--out FILE] [--append] [--regen] [--case NAME]...
//
// Without --dir it searches a deterministic corpus of ~20k files / ~250 MB, generated once into
// $TMPDIR/worksnap-bench-grep-v1 (point --dir at bench/gen-repo.ts output for the 100k-file git repo).
// Each run of ours is a fresh process doing exactly the op: it opens the workspace and calls
// snapshotGrep in worktree mode twice (the first call is a one-shot CLI's, the second the MCP server's
// steady state), with the walk, ignore rules, lease touches and hashing included and limits raised so
// every match comes back. rg runs over the same directory with its default ignore rules, alternating
// with ours, after one warm-up each. Reported: medians, the ratio (target <= 1.5x rg), the peak RSS of
// the process serving the search (its own VmHWM) plus the peak summed RSS of its child processes (git,
// regex children; sampled), and whether the (path, line) pairs equal rg's.
// Figures go to bench/grep-README-figures.md (--append adds a section instead of replacing it).

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { openWorkspace } from "../src/ops/workspace";
import { snapshotGrep } from "../src/ops/snapshot/grep";

interface Case {
  name: string;
  pattern: string;
  fixed?: boolean;
  ci?: boolean;
  /** counted against the 1.5x target */
  target: boolean;
}

const CASES: Case[] = [
  { name: "literal", pattern: "handleRequest", fixed: true, target: true },
  { name: "regex", pattern: "fetch[A-Z]\\w*\\(user", target: true },
  { name: "literal -i", pattern: "handlerequest", fixed: true, ci: true, target: false },
  { name: "regex, no literal", pattern: "\\b[1-3]\\d+[7-9]{2}\\b", target: false },
];

const GEN_VERSION = 1;
const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

if (args[0] === "--child") await child();
else await main();

// ---------------------------------------------------------------- child: the op, twice, in a fresh process

async function child(): Promise<void> {
  const [, root, pattern, flags, pairsFile] = args;
  // the children's (git, regex processes) memory at once, sampled: the peak of their summed RSS
  let childKb = 0;
  const sampler = setInterval(() => {
    childKb = Math.max(childKb, childPids().reduce((sum, pid) => sum + vmRssKb(pid), 0));
  }, 10);
  const ws = openWorkspace(root!, { longLived: true }); // the server keeps what it may reuse between calls
  const once = async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await snapshotGrep(ws, {
      mode: "worktree",
      pattern: pattern!,
      fixed_strings: flags!.includes("F"),
      case_insensitive: flags!.includes("i"),
      max_matches: 1_000_000,
      maxBytes: 64 * 1024 * 1024,
      timeBudgetMs: 600_000,
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, r };
  };
  const cold = await once();
  const warm = await once();
  clearInterval(sampler);
  const pairs = [...new Set(warm.r.matches.map((m) => `${m.path}:${m.line}`))];
  writeFileSync(pairsFile!, pairs.sort().join("\n"));
  process.stdout.write(
    JSON.stringify({ coldMs: cold.ms, ms: warm.ms, cpuMs: warm.cpuMs, truncated: warm.r.truncated, hwmKb: vmHwmKb("self"), childHwmKb: childKb }),
  );
}

function vmHwmKb(pid: number | "self"): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0; // exited between listing and reading
  }
}

function vmRssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function childPids(): number[] {
  try {
    return readdirSync("/proc/self/task").flatMap((t) =>
      readFileSync(`/proc/self/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- parent

async function main(): Promise<void> {
  const runs = Number(opt("--runs") ?? 5);
  const out = opt("--out") ?? join(import.meta.dir, "grep-README-figures.md");
  const dir = opt("--dir") ?? ensureCorpus(args.includes("--regen"));
  const only = args.flatMap((a, k) => (args[k - 1] === "--case" ? [a] : []));
  const cases = only.length > 0 ? CASES.filter((c) => only.includes(c.name)) : CASES;
  const rg = Bun.which("rg");
  if (!rg) throw new Error("ripgrep (rg) is required: apt-get install ripgrep");
  const pairsFile = join(tmpdir(), `worksnap-bench-grep-pairs-${process.pid}.txt`);
  console.log(`corpus ${dir}; ${runs} runs per case, medians`);

  const rows: string[] = [];
  try {
    for (const c of cases) {
      const ours: ReturnType<typeof runOurs>[] = [];
      const theirs: Sample[] = [];
      let same = "";
      for (let k = 0; k <= runs; k++) {
        const a = runOurs(dir, c, pairsFile);
        const b = await runRg(rg, dir, c);
        if (k === 0) {
          same = samePairs(readFileSync(pairsFile, "utf8"), b.pairs);
          continue; // warm-up: page cache
        }
        ours.push(a);
        theirs.push(b);
      }
      const med = <T>(xs: T[], f: (x: T) => number) => median(xs.map(f));
      const [om, oc, ocpu] = [med(ours, (x) => x.ms), med(ours, (x) => x.coldMs), med(ours, (x) => x.cpuMs)];
      const [rm, rcpu] = [med(theirs, (x) => x.ms), med(theirs, (x) => x.cpuMs)];
      const ratio = om / rm;
      const mb = (kb: number) => (kb / 1024).toFixed(0);
      const hwm = Math.max(...ours.map((x) => x.rssKb));
      const childHwm = Math.max(...ours.map((x) => x.childRssKb));
      const rgRss = Math.max(...theirs.map((x) => x.rssKb));
      const verdict = c.target ? (ratio <= 1.5 ? "meets <=1.5x" : "MISSES 1.5x") : "(info)";
      const load = loadavg()[0]!.toFixed(1);
      console.log(
        `${c.name.padEnd(18)} ours ${om.toFixed(0).padStart(5)} ms (cold ${oc.toFixed(0)}, cpu ${ocpu.toFixed(0)})  rg ${rm.toFixed(0).padStart(5)} ms (cpu ${rcpu.toFixed(0)})  ` +
          `ratio ${ratio.toFixed(2)}x ${verdict}, cold ${(oc / rm).toFixed(2)}x  RSS ours ${mb(hwm)} MB + children ${mb(childHwm)} MB, rg ${mb(rgRss)} MB  lines ${theirs[0]!.lines} same-as-rg ${same}  load ${load}`,
      );
      rows.push(
        `| ${c.name} | \`${c.pattern}\`${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""} | ${om.toFixed(0)} | ${oc.toFixed(0)} | ${rm.toFixed(0)} | ${ratio.toFixed(2)}x${c.target ? (ratio <= 1.5 ? " ✓" : " ✗") : ""} | ${(oc / rm).toFixed(2)}x | ${ocpu.toFixed(0)} / ${rcpu.toFixed(0)} | ${mb(hwm)} + ${mb(childHwm)} | ${mb(rgRss)} | ${theirs[0]!.lines} | ${same} | ${load} |`,
      );
    }
  } finally {
    rmSync(pairsFile, { force: true });
  }

  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const append = args.includes("--append") && existsSync(out);
  const md = [
    ...(append ? [readFileSync(out, "utf8").trimEnd(), "", "---", ""] : ["# grep benchmark figures", ""]),
    `Generated by \`node_modules/.bin/bun bench/grep.ts${opt("--dir") ? " --dir <dir>" : ""}\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} CPUs (${cpu}), Bun ${Bun.version}, ${rgVersion(rg)}.`,
    `Corpus: ${opt("--dir") ? `${dir}` : `deterministic generated tree (generator v${GEN_VERSION})`}. Medians of ${runs} runs after one warm-up, ours and rg alternating.`,
    "",
    "ours = wall time of one snapshot_grep op in worktree mode, in a fresh process doing only that (the live walk with ignore rules, reading, searching, hashing what was read for the lease, all matches returned); *warm* is the second call in the process (the MCP server's steady state), *cold* the first (a one-shot CLI). rg = `rg -n --no-heading -H --hidden -g '!.git/' -g '!.mcp/'` over the directory with its default ignore rules: process wall time including its own walk, output read through a pipe. CPU = user+system ms, all threads. RSS = peak (VmHWM) of the process serving the search, over both calls, + the peak summed RSS of the child processes it had at once (git, regex children; sampled every 10 ms); rg's sampled every 5 ms. Same pairs = the set of (path, line) equals rg's. Load = 1-minute load average after the case.",
    "",
    "| case | pattern | ours warm ms | ours cold ms | rg ms | ratio warm (target ≤1.5x) | ratio cold | CPU ms ours / rg | peak RSS MB ours + children | rg RSS MB | matching lines (rg) | same pairs as rg | load |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ...rows,
    "",
  ].join("\n");
  writeFileSync(out, md);
  console.log(`figures written to ${relative(process.cwd(), out)}`);
}

interface Sample {
  ms: number;
  cpuMs: number;
  lines: number;
  rssKb: number;
}

function runOurs(dir: string, c: Case, pairsFile: string): Sample & { coldMs: number; childRssKb: number } {
  const flags = `${c.fixed ? "F" : ""}${c.ci ? "i" : ""}-`;
  const proc = Bun.spawnSync([process.execPath, import.meta.path, "--child", dir, c.pattern, flags, pairsFile], { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`grep child failed: ${proc.stderr.toString()}`);
  const r = JSON.parse(proc.stdout.toString());
  if (r.truncated) throw new Error("grep child was truncated; raise the limits");
  return { ms: r.ms, coldMs: r.coldMs, cpuMs: r.cpuMs, lines: 0, rssKb: r.hwmKb, childRssKb: r.childHwmKb };
}

async function runRg(rg: string, dir: string, c: Case): Promise<Sample & { pairs: string }> {
  const cmd = [rg, "--no-config", "-n", "--no-heading", "-H", "--hidden", "-g", "!.git/", "-g", "!.mcp/"];
  if (c.fixed) cmd.push("-F");
  if (c.ci) cmd.push("-i");
  cmd.push("-e", c.pattern, ".");
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { cwd: dir, stdout: "pipe", stderr: "pipe" });
  let rssKb = 0;
  const sampler = setInterval(() => (rssKb = Math.max(rssKb, vmHwmKb(proc.pid))), 5);
  const text = await new Response(proc.stdout).text();
  await proc.exited;
  const ms = performance.now() - t0;
  clearInterval(sampler);
  if (proc.exitCode !== 0 && proc.exitCode !== 1) throw new Error(`rg failed: ${await new Response(proc.stderr).text()}`);
  let lines = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
  const cpu = proc.resourceUsage()?.cpuTime;
  return { ms, cpuMs: cpu ? Number(cpu.total) / 1000 : NaN, lines, rssKb, pairs: text };
}

/** "yes", or how the (path, line) sets differ. */
function samePairs(oursText: string, rgText: string): string {
  const ours = new Set(oursText.split("\n").filter(Boolean));
  const theirs = new Set(
    rgText
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const a = l.indexOf(":");
        const b = l.indexOf(":", a + 1);
        return l.slice(l.startsWith("./") ? 2 : 0, b);
      }),
  );
  const onlyOurs = [...ours].filter((p) => !theirs.has(p));
  const onlyRg = [...theirs].filter((p) => !ours.has(p));
  if (onlyOurs.length === 0 && onlyRg.length === 0) return "yes";
  return `NO (${onlyOurs.length} only ours, e.g. ${onlyOurs[0] ?? "-"}; ${onlyRg.length} only rg, e.g. ${onlyRg[0] ?? "-"})`;
}

function rgVersion(rg: string): string {
  return Bun.spawnSync([rg, "--version"]).stdout.toString().split("\n")[0]!.trim();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// ---------------------------------------------------------------- deterministic corpus

function ensureCorpus(regen: boolean): string {
  const dir = join(tmpdir(), `worksnap-bench-grep-v${GEN_VERSION}`);
  const marker = `${dir}.generated`;
  if (!regen && existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  console.log(`generating corpus in ${dir} ...`);
  let seed = 0x5eed;
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const nouns = "user account session token request response config option value cache store buffer stream event result error state context module item entry record".split(" ");
  const verbs = "get set load save fetch build create update delete parse render apply resolve compute read write find check handle".split(" ");
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const ident = () => pick(verbs) + cap(pick(nouns));
  const line = (): string => {
    const r = rnd();
    if (r < 0.1) return `export function ${ident()}(${pick(nouns)}: ${cap(pick(nouns))}, opts = {}) {`;
    if (r < 0.2) return `  const ${pick(nouns)} = await ${ident()}(${pick(nouns)}, ${Math.floor(rnd() * 100000)});`;
    if (r < 0.25) return `  // ${pick(["TODO", "FIXME", "NOTE", "todo"])}: ${pick(verbs)} the ${pick(nouns)} before ${pick(verbs)}ing`;
    if (r < 0.3) return `import { ${cap(pick(nouns))}, ${ident()} } from "./${pick(nouns)}/${pick(nouns)}";`;
    if (r < 0.35) return `  if (${pick(nouns)}.${pick(nouns)} === ${(rnd() * 10000).toFixed(3)}) return ${pick(nouns)};`;
    if (r < 0.4) return "}";
    if (r < 0.45) return "";
    return `  ${pick(nouns)}.${pick(nouns)} = ${pick(nouns)}.${ident()}(${pick(nouns)}, "${pick(nouns)}-${pick(nouns)}");`;
  };
  const FILES = 20_000;
  let total = 0;
  for (let i = 0; i < FILES; i++) {
    const d = `${pick(["src", "lib", "packages/core", "packages/web", "apps/api"])}/${pick(nouns)}s/${pick(verbs)}`;
    mkdirSync(join(dir, d), { recursive: true });
    const target = i % 5000 === 17 ? 8_000_000 : Math.floor(1500 + rnd() * rnd() * 38_000);
    const parts: string[] = [];
    for (let n = 0; n < target; ) {
      const l = line();
      parts.push(l);
      n += l.length + 1;
    }
    const eol = i % 11 === 0 ? "\r\n" : "\n";
    const body = i % 997 === 3 ? Buffer.concat([Buffer.from("\x89PNG\r\n\x1a\n\0\0"), Buffer.from(parts.join(eol))]) : parts.join(eol) + eol;
    writeFileSync(join(dir, d, `${pick(nouns)}-${i}.${pick(["ts", "ts", "js", "tsx", "md"])}`), body);
    total += body.length;
  }
  writeFileSync(marker, JSON.stringify({ version: GEN_VERSION, files: FILES, bytes: total }));
  return dir;
}
