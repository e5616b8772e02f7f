/** A small, strict argument parser: unknown flags are usage errors (exit 2), never ignored. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export type FlagKind = "bool" | "string" | "multi";

export interface FlagSpec {
  [name: string]: { kind: FlagKind; short?: string };
}

export interface ParsedArgs {
  flags: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function parseArgv(argv: string[], spec: FlagSpec): ParsedArgs {
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  const byShort = new Map(Object.entries(spec).flatMap(([n, s]) => (s.short ? [[s.short, n] as const] : [])));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith("-") && arg.length === 2) {
      name = byShort.get(arg.slice(1));
      if (!name) throw new UsageError(`unknown option ${arg}`);
    } else {
      positionals.push(arg);
      continue;
    }
    const s = spec[name];
    if (!s) throw new UsageError(`unknown option --${name}`);
    if (s.kind === "bool") {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (s.kind === "multi") flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else flags[name] = value;
  }
  return { flags, positionals };
}

export function intFlag(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be an integer`);
  return n;
}

/** A size in bytes: a whole number with an optional K, M or G (powers of 1024), as `--index-budget 512M`. */
export function sizeFlag(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const m = /^([0-9]+)([KMG]?)i?B?$/i.exec(String(value).trim());
  if (!m) throw new UsageError(`--${name} must be a size such as 512M, 2G or 0`);
  const unit = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(m[2] as string).toUpperCase()] as number;
  return Number(m[1]) * unit;
}
