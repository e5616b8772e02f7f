import { taskError } from "./task-errors";
import type { Severity } from "./detectors";

/**
 * `worksnap.json`, the explicit configuration (read from HEAD in a git work
 * tree, see committed-files.ts):
 *
 * ```json
 * {
 *   "checks": {
 *     "typecheck": "tsc --noEmit",
 *     "lint": ["eslint .", { "run": ["ruff", "check", "."], "timeout": 120 }],
 *     "test": { "run": "bun test", "timeout": 900 }
 *   },
 *   "patterns": {
 *     "no_fixme": { "regex": "FIXME", "files": "src/**", "severity": "warning", "message": "resolve FIXMEs before ending" }
 *   }
 * }
 * ```
 *
 * `checks` keys are the four kinds (typecheck, lint, build, test). A value is
 * one command or a list of commands (an array is always a list); a command is
 * a shell string (run with `sh -c`) or `{run, timeout}` where `run` is a shell
 * string or an argv array (run directly) and the timeout is in seconds. When `checks` is present, nothing is detected: the
 * file says exactly what runs. `patterns` are extra detectors (a JavaScript
 * regular expression matched against the lines a task added, an optional
 * glob of the files it applies to).
 */
export const CHECK_KINDS = ["typecheck", "lint", "build", "test"] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

export interface ConfiguredCommand {
  kind: CheckKind;
  argv: string[];
  /** A shell string as written, or the argv joined. */
  display: string;
  timeoutMs?: number;
}

export interface PatternRule {
  name: string;
  regex: RegExp;
  files?: string;
  severity: Severity;
  message: string;
}

export interface WorksnapConfig {
  /** null: no `checks` section (commands are detected). */
  checks: ConfiguredCommand[] | null;
  patterns: PatternRule[];
}

export const CONFIG_FILE = "worksnap.json";
const MAX_TIMEOUT_S = 3600;

function invalid(message: string, where: string): never {
  throw taskError("CONFIG_INVALID", "INVALID_ARGUMENT", `${CONFIG_FILE}: ${where}: ${message}`, { file: CONFIG_FILE, where });
}

export function parseWorksnapConfig(text: string | undefined): WorksnapConfig {
  if (text === undefined) return { checks: null, patterns: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    invalid(`not valid JSON (${(err as Error).message})`, "(file)");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) invalid("must be a JSON object", "(file)");
  const obj = raw as Record<string, unknown>;
  return { checks: obj.checks === undefined ? null : parseChecks(obj.checks), patterns: obj.patterns === undefined ? [] : parsePatterns(obj.patterns) };
}

function parseChecks(raw: unknown): ConfiguredCommand[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) invalid("must be an object keyed by typecheck, lint, build, test", "checks");
  const out: ConfiguredCommand[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(CHECK_KINDS as readonly string[]).includes(key)) invalid(`unknown kind ${JSON.stringify(key)}; use ${CHECK_KINDS.join(", ")}`, `checks.${key}`);
    const kind = key as CheckKind;
    const list = Array.isArray(value) ? value : [value];
    if (list.length === 0) invalid("an empty list runs nothing; remove the key instead", `checks.${key}`);
    list.forEach((entry, i) => out.push(parseCommand(kind, entry, list.length > 1 ? `checks.${key}[${i}]` : `checks.${key}`)));
  }
  return out;
}

function parseCommand(kind: CheckKind, entry: unknown, where: string): ConfiguredCommand {
  let run: unknown = entry;
  let timeoutMs: number | undefined;
  if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) {
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) if (k !== "run" && k !== "timeout") invalid(`unknown key ${JSON.stringify(k)}; use run and timeout`, where);
    run = e.run;
    if (e.timeout !== undefined) {
      if (typeof e.timeout !== "number" || !(e.timeout > 0) || e.timeout > MAX_TIMEOUT_S) invalid(`timeout must be seconds, from 1 to ${MAX_TIMEOUT_S}`, `${where}.timeout`);
      timeoutMs = Math.round(e.timeout * 1000);
    }
  }
  if (Array.isArray(entry)) invalid('an array inside the list is not a command; write an argv as {"run": [...]}', where);
  if (typeof run === "string") {
    if (run.trim() === "") invalid("the command is empty", where);
    return { kind, argv: ["sh", "-c", run], display: run.trim(), timeoutMs };
  }
  if (Array.isArray(run) && run.length > 0 && run.every((a) => typeof a === "string" && a !== "")) {
    return { kind, argv: run as string[], display: (run as string[]).join(" "), timeoutMs };
  }
  invalid("a command is a shell string, an argv array of strings, or {run, timeout}", where);
}

function parsePatterns(raw: unknown): PatternRule[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) invalid("must be an object keyed by pattern name", "patterns");
  const out: PatternRule[] = [];
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const where = `patterns.${name}`;
    if (!/^[a-z0-9][a-z0-9_.]{0,63}$/.test(name)) invalid("a pattern name is 1-64 of a-z 0-9 _ . (the violation type it automates)", where);
    if (typeof value !== "object" || value === null) invalid("must be {regex, files?, severity?, message?}", where);
    const v = value as Record<string, unknown>;
    if (typeof v.regex !== "string" || v.regex === "") invalid("regex must be a non-empty string", `${where}.regex`);
    let regex: RegExp;
    try {
      regex = new RegExp(v.regex as string, "gm");
    } catch (err) {
      invalid(`regex does not compile: ${(err as Error).message}`, `${where}.regex`);
    }
    if (v.files !== undefined && typeof v.files !== "string") invalid("files must be a glob string", `${where}.files`);
    if (v.severity !== undefined && v.severity !== "error" && v.severity !== "warning") invalid('severity must be "error" or "warning"', `${where}.severity`);
    if (v.message !== undefined && typeof v.message !== "string") invalid("message must be a string", `${where}.message`);
    out.push({
      name,
      regex,
      files: v.files as string | undefined,
      severity: (v.severity as Severity | undefined) ?? "warning",
      message: (v.message as string | undefined) ?? `matches pattern ${name}`,
    });
  }
  return out;
}
