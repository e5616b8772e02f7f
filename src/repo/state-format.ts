import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { invalidArgument, type WorksnapError } from "../core/errors";

/**
 * The layout of `.mcp/` has a number, kept in `.mcp/format` (one decimal
 * number and a newline). A binary works only on the format it knows: an older
 * one is upgraded by `worksnap migrate` (MIGRATIONS, in order), a newer one is
 * refused before anything in it is read or written. A `.mcp/` without the file
 * was written before the number existed and is format 1, the original layout.
 */
export const STATE_FORMAT = 1;

export const FORMAT_FILE = "format";

/** What `.mcp/` holds: its format, and whether the number is written down or implied (format 1 before the file). */
export interface StateFormat {
  format: number;
  marked: boolean;
}

/** One upgrade of `.mcp/` from format `from` to `from + 1`; it runs before the new number is written. */
export interface Migration {
  from: number;
  describe: string;
  run(stateDir: string): void;
}

/**
 * Every upgrade, oldest first. Empty: format 1 is the only layout so far, so
 * every `.mcp/` a released worksnap wrote is read as it is; `migrate` only
 * writes the number down.
 */
export const MIGRATIONS: readonly Migration[] = [];

export function readStateFormat(stateDir: string): StateFormat {
  const file = join(stateDir, FORMAT_FILE);
  if (!existsSync(file)) return { format: 1, marked: false };
  const text = readFileSync(file, "utf8");
  const m = /^\s*([0-9]{1,6})\s*$/.exec(text);
  if (!m) {
    throw invalidArgument(`.mcp/${FORMAT_FILE} does not hold a state format number; nothing in .mcp/ was read or written`, {
      state_format_file: `.mcp/${FORMAT_FILE}`,
      content: text.slice(0, 40),
      supported_format: STATE_FORMAT,
    });
  }
  return { format: Number(m[1]), marked: true };
}

/** Why this binary must not use a `.mcp/` of `format`, or null when it can. */
export function formatRefusal(format: number): WorksnapError | null {
  const details = { state_format: format, supported_format: STATE_FORMAT };
  if (format > STATE_FORMAT) {
    return invalidArgument(
      `.mcp/ has state format ${format}, written by a newer worksnap; this worksnap knows format ${STATE_FORMAT} and leaves it untouched. Upgrade worksnap (npx -y worksnap@latest, or a newer release binary)`,
      { ...details, remedy: "upgrade worksnap" },
    );
  }
  if (format < STATE_FORMAT) {
    return invalidArgument(
      `.mcp/ has state format ${format}, older than this worksnap's format ${STATE_FORMAT}; nothing in it was read or written. Upgrade it with \`worksnap migrate\` in the repository (or with --root DIR)`,
      { ...details, remedy: "worksnap migrate" },
    );
  }
  return null;
}

/** The format of an existing `.mcp/`, refused unless it is this binary's. */
export function checkStateFormat(stateDir: string): StateFormat {
  const found = readStateFormat(stateDir);
  const refusal = formatRefusal(found.format);
  if (refusal) throw refusal;
  return found;
}
