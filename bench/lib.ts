// Shared helpers for the benchmarks: timing commands and functions, formatting, tables, figures files.

import { appendFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";

export interface CommandTiming {
  /** Wall time of each measured run, in milliseconds. */
  ms: number[];
  /** Peak resident set size of each measured run, in bytes: the largest of the command and its descendants. */
  maxRss: number[];
  /** True when /usr/bin/time was unavailable and maxRss is the child's rusage, which includes the spawning bun. */
  rssUpperBound: boolean;
  exitCodes: number[];
}

export interface TimeCommandOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  runs: number;
  warmup?: number;
  /** Untimed, before every run (warm-up runs included). */
  prepare?: () => Promise<void> | void;
  /** Exit codes that still count as success; default [0]. */
  okCodes?: number[];
}

export class CommandFailed extends Error {
  constructor(readonly cmd: string[], readonly code: number, readonly stderr: string) {
    super(`${cmd.join(" ")} exited ${code}: ${stderr.trim().slice(0, 2000)}`);
  }
}

const GNU_TIME = "/usr/bin/time";

/**
 * Runs `cmd` `warmup` times untimed, then `runs` times timed. Output goes to /dev/null; stderr is kept for the
 * error message.
 *
 * Peak RSS: a child's own rusage starts from the memory of the process that forked it (Linux carries the
 * pre-exec high-water mark across exec), so a command spawned straight from bun never reports less than ~25-45 MB.
 * The command therefore runs under GNU time, which forks it from a ~2 MB process and reports its %M: the largest
 * of the command and its waited-for descendants. Every row pays the same ~1 ms for the wrapper.
 */
export async function timeCommand(cmd: string[], opts: TimeCommandOptions): Promise<CommandTiming> {
  const ok = opts.okCodes ?? [0];
  const env = opts.env ? { ...process.env, ...opts.env } : process.env;
  const wrap = existsSync(GNU_TIME);
  const result: CommandTiming = { ms: [], maxRss: [], exitCodes: [], rssUpperBound: !wrap };
  const scratch = mkdtempSync(join(tmpdir(), "bench-rss-"));
  const rssFile = join(scratch, "rss");
  const argv = wrap ? [GNU_TIME, "-q", "-f", "%M", "-o", rssFile, ...cmd] : cmd;
  const warmup = opts.warmup ?? 0;
  try {
    for (let i = 0; i < warmup + opts.runs; i++) {
      await opts.prepare?.();
      const t0 = Bun.nanoseconds();
      const p = Bun.spawn(argv, { cwd: opts.cwd, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
      const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      const ms = (Bun.nanoseconds() - t0) / 1e6;
      if (!ok.includes(code)) throw new CommandFailed(cmd, code, stderr);
      if (i < warmup) continue;
      result.ms.push(ms);
      result.maxRss.push(wrap ? Number(readFileSync(rssFile, "utf8").trim().split("\n").pop()) * 1024 : (p.resourceUsage()?.maxRSS ?? 0));
      result.exitCodes.push(code);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}

export interface Contender {
  name: string;
  cmd: string[];
  opts: Omit<TimeCommandOptions, "runs" | "warmup">;
}

/**
 * Times several commands in rounds, one run of each per round, in the given order, so a change in machine load
 * lands on every row alike and the ratios stay fair. `warmup` untimed rounds come first. A contender that fails
 * is dropped from later rounds and reported as its error.
 */
export async function timeRounds(contenders: Contender[], rounds: { runs: number; warmup?: number; onRun?: (name: string) => void }): Promise<Map<string, CommandTiming | Error>> {
  const out = new Map<string, CommandTiming | Error>();
  const warmup = rounds.warmup ?? 0;
  for (let round = 0; round < warmup + rounds.runs; round++) {
    for (const c of contenders) {
      const sofar = out.get(c.name);
      if (sofar instanceof Error) continue;
      rounds.onRun?.(c.name);
      try {
        const t = await timeCommand(c.cmd, { ...c.opts, runs: 1, warmup: 0 });
        if (round < warmup) continue;
        if (!sofar) out.set(c.name, t);
        else {
          sofar.ms.push(...t.ms);
          sofar.maxRss.push(...t.maxRss);
          sofar.exitCodes.push(...t.exitCodes);
        }
      } catch (e) {
        out.set(c.name, e instanceof Error ? e : new Error(String(e)));
      }
    }
  }
  return out;
}

/** In-process timings of `fn`, in milliseconds; one untimed warm-up call first. */
export async function timeFn(fn: () => unknown, runs: number, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = Bun.nanoseconds();
    await fn();
    ms.push((Bun.nanoseconds() - t0) / 1e6);
  }
  return ms;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return "—";
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(0)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} KB`;
  return `${n} B`;
}

/** `2.4x`; below 10 with one decimal, above with none. */
export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return "—";
  return r >= 10 ? `${r.toFixed(0)}x` : `${r.toFixed(2)}x`;
}

export function fmtRate(bytes: number, ms: number): string {
  return `${(bytes / 1e9 / (ms / 1000)).toFixed(2)} GB/s`;
}

/** Columns whose cells mostly look numeric are right-aligned. */
export function table(headers: string[], rows: string[][]): string {
  const width = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const numeric = headers.map((_, i) => {
    const cells = rows.map((r) => r[i] ?? "").filter((c) => c !== "");
    return cells.filter((c) => /^[\d.,—<>≤≥~ -]*[\d—]/.test(c)).length * 2 > cells.length;
  });
  const cell = (s: string, i: number) => (numeric[i] ? s.padStart(width[i]!) : s.padEnd(width[i]!));
  const line = (r: string[]) => headers.map((_, i) => cell(r[i] ?? "", i)).join("  ").trimEnd();
  return [line(headers), width.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export function printTable(headers: string[], rows: string[][]): void {
  console.log(table(headers, rows));
}

/** The same table as GitHub markdown. */
export function markdownTable(headers: string[], rows: string[][]): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  return [
    `| ${headers.map(esc).join(" | ")} |`,
    `| ${headers.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${headers.map((_, i) => esc(r[i] ?? "")).join(" | ")} |`),
  ].join("\n");
}

/** Appends a dated section to a figures file, creating it if needed. */
export function appendFigures(file: string, markdown: string): void {
  const head = existsSync(file) ? "\n" : "";
  appendFileSync(file, `${head}<!-- ${new Date().toISOString()} -->\n${markdown.trimEnd()}\n`);
}

/** One line that says what the numbers were measured on, and how busy the machine was. */
export function machineLine(): string {
  const c = cpus();
  return `${c.length} x ${c[0]?.model.trim() ?? "cpu"}, bun ${Bun.version}, ${process.platform}, ${loadLine()}`;
}

/**
 * The file system `dir` is on, as its figures depend on it: type, device, whether ext4 keeps a journal (on ext4
 * without one, a file created moments after others were deleted costs several times more, which slows `git
 * apply`, which unlinks and creates every file it patches), and its mount options. "" off Linux.
 */
export function fileSystemLine(dir: string): string {
  if (process.platform !== "linux") return "";
  const at = realpathSync(dir);
  let best: { point: string; type: string; source: string; options: string } | null = null;
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const point = (fields[4] ?? "").replace(/\\040/g, " ");
    const inside = point === "/" || at === point || at.startsWith(`${point}/`);
    if (!inside || (best && best.point.length > point.length)) continue;
    const [type = "", source = ""] = right.split(" ");
    best = { point, type, source, options: fields[5] ?? "" };
  }
  if (!best) return "";
  const journal = best.type === "ext4" ? (existsSync(`/proc/fs/jbd2/${basename(best.source)}-8`) ? ", with a journal" : ", without a journal") : "";
  return `${best.type} on ${best.source} at ${best.point}${journal} (${best.options})`;
}

/** The 1, 5 and 15 minute load averages: other work on the machine is the usual cause of noisy figures. */
export function loadLine(): string {
  return `load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`;
}

export function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** Runs a benchmark's main when the file is the entry point: its result is the exit code; an error prints its message and exits 1. */
export async function runMain(main: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main();
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  }
}
