import { existsSync } from "node:fs";
import { invalidArgument } from "../core/errors";
import { writeStateFile } from "./state-dir";
import { FORMAT_FILE, MIGRATIONS, STATE_FORMAT, formatRefusal, readStateFormat } from "./state-format";

export interface MigrateResult {
  /** False when the root has no `.mcp/` (nothing to migrate). */
  exists: boolean;
  from: number | null;
  to: number | null;
  /** Whether `.mcp/format` held the number before. */
  was_marked: boolean;
  /** What was done (or, with check, what would be), in order. */
  steps: string[];
  /** check only: whether this binary can use `.mcp/` without a migration. */
  current: boolean;
}

/**
 * `worksnap migrate`: brings `.mcp/` to this binary's state format, one
 * MIGRATIONS step at a time, writing the number after each step so an
 * interrupted run resumes where it stopped. A newer format is refused.
 * Run it with no worksnap server or command working on the repository.
 */
export function migrateStateDir(stateDir: string, opts: { check?: boolean } = {}): MigrateResult {
  if (!existsSync(stateDir)) return { exists: false, from: null, to: null, was_marked: false, steps: [], current: true };
  const found = readStateFormat(stateDir);
  if (found.format > STATE_FORMAT) throw formatRefusal(found.format)!;
  const steps: string[] = [];
  let format = found.format;
  for (const m of MIGRATIONS) {
    if (m.from !== format) continue;
    steps.push(`format ${m.from} -> ${m.from + 1}: ${m.describe}`);
    if (!opts.check) {
      m.run(stateDir);
      writeStateFile(stateDir, FORMAT_FILE, `${m.from + 1}\n`);
    }
    format = m.from + 1;
  }
  if (format !== STATE_FORMAT) {
    throw invalidArgument(`.mcp/ has state format ${found.format} and no migration leads from it to format ${STATE_FORMAT}; nothing was changed`, {
      state_format: found.format,
      supported_format: STATE_FORMAT,
    });
  }
  if (!found.marked) {
    steps.push(`write .mcp/${FORMAT_FILE} (${STATE_FORMAT}): written before the number existed, the layout is the same`);
    if (!opts.check) writeStateFile(stateDir, FORMAT_FILE, `${STATE_FORMAT}\n`);
  }
  return { exists: true, from: found.format, to: STATE_FORMAT, was_marked: found.marked, steps, current: found.format === STATE_FORMAT };
}
