import { lstatSync, mkdirSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { internal } from "../../core/errors";
import { isReservedPath } from "../../core/repo-path";
import { acquireFileLock } from "../../repo/file-lock";
import type { SnapshotId } from "../../repo/manifest";
import { liveFingerprint } from "../live/live-tree";
import { sameFingerprint, type Fingerprint } from "../../repo/fingerprint";
import type { Workspace } from "../workspace";
import { type CommandResult, DIAGNOSTICS_KEPT, cacheKey, cachedResult, storeResult } from "./check-cache";
import type { CheckCommand } from "./check-detect";
import { type RunOutcome, runCommand } from "./check-runner";
import { type PathResolver, parseOutput } from "./output-parsers";
import { taskError } from "./task-errors";

export interface RunChecksOptions {
  /** The checked tree: a snapshot of the whole work tree, taken just before. */
  tree: SnapshotId;
  fingerprint: Fingerprint;
  pathDirs: string[];
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message: string) => void;
}

/** Runs in flight in this process, by cache key: a second caller awaits the first run. */
const inFlight = new Map<string, Promise<CommandResult>>();

/**
 * Runs the commands one after another (a machine's cores go to one check at
 * a time), each answered from the cache when this tree was checked with it
 * before. No two runs of the same command on the same tree happen at once:
 * in this process the second caller awaits the first; across processes a
 * file lock per key serialises them, and the one that waited answers from
 * the cache. A command that cannot start, that runs past its timeout, or
 * whose request is cancelled is an error (CHECK_COMMAND_NOT_FOUND,
 * CHECK_TIMEOUT, CHECK_CANCELLED) that names what ran before it.
 */
export async function runChecks(ws: Workspace, commands: CheckCommand[], opts: RunChecksOptions): Promise<CommandResult[]> {
  const results: CommandResult[] = [];
  const started = Date.now();
  const budget = commands.reduce((s, c) => s + c.timeoutMs, 0);
  for (const cmd of commands) {
    const key = cacheKey(opts.tree, cmd, opts.pathDirs);
    const hit = cachedResult(ws, key);
    if (hit) {
      results.push(hit);
      continue;
    }
    opts.onProgress?.(Date.now() - started, budget, `running ${cmd.name}: ${cmd.display}`);
    let run = inFlight.get(key);
    if (!run) {
      run = runLocked(ws, cmd, key, opts, (elapsed) => opts.onProgress?.(Date.now() - started, budget, `${cmd.name}: ${cmd.display} (${Math.round(elapsed / 1000)} s)`));
      inFlight.set(key, run);
      run.finally(() => inFlight.delete(key)).catch(() => undefined);
    }
    try {
      results.push(await run);
    } catch (err) {
      if (err instanceof Error && "details" in err) (err as { details: Record<string, unknown> }).details.completed = results.map((r) => `${r.name}: ${r.passed ? "passed" : "failed"}`);
      throw err;
    }
  }
  return results;
}

async function runLocked(ws: Workspace, cmd: CheckCommand, key: string, opts: RunChecksOptions, onTick: (ms: number) => void): Promise<CommandResult> {
  const lockDir = join(ws.repo.stateDir, "locks");
  mkdirSync(lockDir, { recursive: true });
  const unlock = await acquireFileLock(join(lockDir, `check-${key.slice(0, 24)}`), {
    staleMs: 10_000,
    updateMs: 2_000,
    waitMs: cmd.timeoutMs + 30_000,
    onCompromised: () => undefined,
    failed: (err) => internal(`cannot take the check lock: ${err.message}`, {}),
    timedOut: () => taskError("CHECK_TIMEOUT", "INVALID_ARGUMENT", `another process has been running ${cmd.name} (${cmd.display}) on this tree for longer than its timeout`, { check: cmd.name }),
  });
  try {
    const hit = cachedResult(ws, key);
    if (hit) return hit;
    const outcome = await runCommand(cmd, { cwd: ws.repo.root, env: checkEnv(opts.pathDirs), signal: opts.signal, onTick });
    failOnAbnormal(cmd, outcome);
    const result = resultOf(ws, cmd, outcome, opts.tree);
    const after = await liveFingerprint(ws);
    if (sameFingerprint(after, opts.fingerprint)) storeResult(ws, key, result);
    else result.notCached = "the work tree changed while the check ran (files it wrote are not ignored?), so the result was not cached";
    return result;
  } finally {
    await unlock().catch(() => undefined);
  }
}

function failOnAbnormal(cmd: CheckCommand, o: RunOutcome): void {
  const lastLine = o.output.trim().split("\n").pop()?.trim() ?? "";
  if (o.spawnError !== undefined || o.exitCode === 127) {
    throw taskError("CHECK_COMMAND_NOT_FOUND", "NOT_FOUND", `${cmd.name}: \`${cmd.display}\` (from ${cmd.source}) could not be run: ${o.spawnError ?? lastLine}; install the tool or change the command in ${cmd.source}`, {
      check: cmd.name,
      source: cmd.source,
    });
  }
  if (o.timedOut) {
    throw taskError("CHECK_TIMEOUT", "INVALID_ARGUMENT", `${cmd.name}: \`${cmd.display}\` ran past its ${Math.round(cmd.timeoutMs / 1000)} s timeout and was stopped (its whole process group killed); look for a hang, or raise the timeout in worksnap.json checks (${cmd.kind}: {"run": ..., "timeout": seconds})`, {
      check: cmd.name,
      timeout_s: cmd.timeoutMs / 1000,
    });
  }
  if (o.cancelled) throw taskError("CHECK_CANCELLED", "INTERNAL", `${cmd.name}: the request was cancelled; the command was stopped`, { check: cmd.name, cancelled: true });
}

function resultOf(ws: Workspace, cmd: CheckCommand, o: RunOutcome, tree: SnapshotId): CommandResult {
  const parsed = parseOutput(o.output, pathResolver(ws.repo.root));
  const passed = o.exitCode === 0;
  const errs = parsed.diagnostics.filter((d) => d.severity === "error");
  const warns = parsed.diagnostics.filter((d) => d.severity === "warning");
  const warnings = Math.max(warns.length, parsed.summaryWarnings ?? 0);
  const errors = passed ? 0 : Math.max(errs.length, parsed.summaryErrors ?? 0, parsed.failedTests, 1);
  return {
    name: cmd.name,
    kind: cmd.kind,
    display: cmd.display,
    source: cmd.source,
    passed,
    exitCode: o.exitCode,
    errors,
    warnings,
    diagnostics: [...(passed ? [] : errs), ...warns].slice(0, DIAGNOSTICS_KEPT),
    outputTail: o.output.slice(-2000),
    durationMs: o.durationMs,
    ranAt: new Date().toISOString(),
    tree,
  };
}

/** The environment of a check: the server's, without GIT_* (which would redirect git), non-interactive, PATH extended. */
export function checkEnv(pathDirs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  return { ...env, PATH: [...pathDirs, env.PATH ?? "/usr/bin:/bin"].join(":"), CI: "1", NO_COLOR: "1", FORCE_COLOR: "0", TERM: "dumb" };
}

/** Printed paths to repo paths: relative to the root, or absolute inside it; only files of the work tree. */
export function pathResolver(root: string): PathResolver {
  const known = new Map<string, string | null>();
  return (printed) => {
    let p = printed.startsWith("file://") ? printed.slice(7) : printed;
    if (isAbsolute(p)) {
      if (!p.startsWith(`${root}/`)) return null;
      p = relative(root, p);
    }
    p = p.replace(/^(\.\/)+/, "");
    if (p === "" || p.startsWith("../") || p.includes("\0")) return null;
    if (known.has(p)) return known.get(p) as string | null;
    let ok = false;
    if (!isReservedPath(p) && !p.split("/").includes("node_modules")) {
      try {
        ok = lstatSync(join(root, p)).isFile();
      } catch {
        ok = false;
      }
    }
    known.set(p, ok ? p : null);
    return ok ? p : null;
  };
}
