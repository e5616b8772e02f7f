import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { internal } from "../../core/errors";
import { writeFileAtomic } from "../../repo/atomic-write";
import { withFileLocks } from "../history/locks";
import type { Workspace } from "../workspace";

/**
 * The task layer's own state under `.mcp/` (never tracked: `.mcp/.gitignore`
 * holds `*`): tasks in `.mcp/tasks/`, learnings and violations in
 * `.mcp/memory/`, check results in `.mcp/cache/checks/`. Files are replaced
 * whole (temp file, fsync, rename) under a file lock per area, so two
 * servers and the CLI can share a repository.
 */
export type StateArea = "tasks" | "memory" | "checks";

export function areaDir(ws: Workspace, area: StateArea): string {
  return area === "checks" ? join(ws.repo.stateDir, "cache", "checks") : join(ws.repo.stateDir, area);
}

/** Runs fn holding the area's lock (`.mcp/locks/<area>.lock`). */
export function withAreaLock<T>(ws: Workspace, area: StateArea, fn: () => Promise<T>): Promise<T> {
  return withFileLocks([join(ws.repo.stateDir, "locks", area)], fn, `${area} lock`);
}

/** A JSON state file, or null when absent. A file that does not parse is INTERNAL (never silently reset). */
export function readJson<T>(file: string): T | null {
  if (!existsSync(file)) return null;
  const text = readFileSync(file, "utf8");
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw internal(`worksnap state file ${file.split("/.mcp/")[1] ?? file} is not valid JSON: ${(err as Error).message}`, {});
  }
}

export function writeJson(ws: Workspace, file: string, value: unknown): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomic(ws.repo.stateDir, file, new TextEncoder().encode(`${JSON.stringify(value, null, 1)}\n`));
}
