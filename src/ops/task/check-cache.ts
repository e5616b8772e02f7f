import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../../core/canonical-json";
import { sha256Hex } from "../../core/hash";
import type { SnapshotId } from "../../repo/manifest";
import type { Workspace } from "../workspace";
import type { CheckCommand } from "./check-detect";
import type { Diagnostic } from "./output-parsers";
import { areaDir, readJson, writeJson } from "./state-files";

/**
 * Check results by (snapshot id of the checked tree, command), one file each
 * in `.mcp/cache/checks/`, so the same tree checked again answers at once.
 * The key covers everything that decides what runs: the command's argv, its
 * standard input (a committed makefile), the directories put on PATH. Only
 * completed runs are kept (not a timeout, a cancellation, a command that did
 * not start), and only when the tree did not change while the command ran.
 */
export interface CommandResult {
  name: string;
  kind: CheckCommand["kind"];
  display: string;
  source: string;
  passed: boolean;
  exitCode: number | null;
  errors: number;
  warnings: number;
  /** The first diagnostics, errors before warnings (at most DIAGNOSTICS_KEPT). */
  diagnostics: Diagnostic[];
  /** The end of the output, for a failure that named no location. */
  outputTail: string;
  durationMs: number;
  ranAt: string;
  /** The tree the command ran on. */
  tree: SnapshotId;
  /** Set on an answer from the cache. */
  cached?: boolean;
  /** Why the result was not kept (the tree changed while it ran). */
  notCached?: string;
}

export const DIAGNOSTICS_KEPT = 50;
const KEEP_RESULTS = 500;

export function cacheKey(tree: SnapshotId, cmd: CheckCommand, pathDirs: string[]): string {
  return sha256Hex(canonicalJson({ tree, argv: cmd.argv, stdin: cmd.stdin === undefined ? null : sha256Hex(cmd.stdin), path: pathDirs }));
}

function resultFile(ws: Workspace, key: string): string {
  return join(areaDir(ws, "checks"), `${key}.json`);
}

export function cachedResult(ws: Workspace, key: string): CommandResult | null {
  const hit = readJson<CommandResult>(resultFile(ws, key));
  return hit ? { ...hit, cached: true } : null;
}

export function storeResult(ws: Workspace, key: string, result: CommandResult): void {
  const { cached: _c, notCached: _n, ...kept } = result;
  writeJson(ws, resultFile(ws, key), kept);
  prune(areaDir(ws, "checks"));
}

/** Keeps the newest KEEP_RESULTS results. */
function prune(dir: string): void {
  if (!existsSync(dir)) return;
  const names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  if (names.length <= KEEP_RESULTS) return;
  const aged = names.map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs })).sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, names.length - KEEP_RESULTS)) rmSync(join(dir, n), { force: true });
}
