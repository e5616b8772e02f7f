import { posix } from "node:path";

/**
 * TypeScript and JavaScript imports: Bun's transpiler scans the runtime
 * imports (import statements, re-exports, require, dynamic import); a
 * regular expression adds the type-only ones (`import type`, `export type
 * ... from`), which matter for impact but are no runtime cycle. Relative
 * specifiers resolve with TypeScript's rules (extensions, index files, a
 * `.js` specifier naming a `.ts` file); others through tsconfig.json's
 * `paths` and `baseUrl`. Package imports are outside the graph.
 */
export const TS_EXTENSIONS = ["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
const TRY_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json"];

export interface RawImport {
  specifier: string;
  typeOnly: boolean;
}

const transpilers = new Map<string, Bun.Transpiler>();

function transpilerFor(path: string): Bun.Transpiler {
  const ext = path.slice(path.lastIndexOf(".") + 1);
  const loader = ext === "tsx" ? "tsx" : ext === "jsx" ? "jsx" : ext === "js" || ext === "mjs" || ext === "cjs" ? "jsx" : "ts";
  let t = transpilers.get(loader);
  if (!t) transpilers.set(loader, (t = new Bun.Transpiler({ loader })));
  return t;
}

const TYPE_ONLY = /^\s*(?:import|export)\s+type\s+(?:[^;'"]*?\s+from\s+)?["']([^"']+)["']/gm;

/** The imports of one file; a file that does not parse yields what the type-only scan finds (and `parsed: false`). */
export function scanTsImports(path: string, text: string): { imports: RawImport[]; parsed: boolean } {
  const imports: RawImport[] = [];
  let parsed = true;
  try {
    for (const i of transpilerFor(path).scanImports(text)) imports.push({ specifier: i.path, typeOnly: false });
  } catch {
    parsed = false;
  }
  const runtime = new Set(imports.map((i) => i.specifier));
  for (const m of text.matchAll(TYPE_ONLY)) {
    const spec = m[1] as string;
    if (!runtime.has(spec)) imports.push({ specifier: spec, typeOnly: true });
  }
  return { imports, parsed };
}

export interface TsConfigPaths {
  /** Repo-relative directory `paths` targets are relative to. */
  base: string;
  /** Repo-relative baseUrl, when set. */
  baseUrl: string | null;
  paths: [string, string[]][];
}

/** Reads compilerOptions.baseUrl and paths from a tsconfig (and what it extends, relative files only). */
export function readTsConfigPaths(readText: (path: string) => string | null, file = "tsconfig.json", depth = 0): TsConfigPaths | null {
  const text = readText(file);
  if (text === null || depth > 5) return null;
  let json: { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } };
  try {
    json = Bun.JSONC.parse(text) as typeof json;
  } catch {
    return null;
  }
  const dir = posix.dirname(file);
  const parent = typeof json.extends === "string" && json.extends.startsWith(".") ? readTsConfigPaths(readText, posix.normalize(posix.join(dir, json.extends.endsWith(".json") ? json.extends : `${json.extends}.json`)), depth + 1) : null;
  const opts = json.compilerOptions ?? {};
  const baseUrl = typeof opts.baseUrl === "string" ? posix.normalize(posix.join(dir, opts.baseUrl)) : (parent?.baseUrl ?? null);
  const paths =
    opts.paths && typeof opts.paths === "object"
      ? Object.entries(opts.paths as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []] as [string, string[]])
      : (parent?.paths ?? []);
  const base = typeof opts.paths === "object" ? (baseUrl ?? dir) : (parent?.base ?? baseUrl ?? dir);
  return { base, baseUrl, paths };
}

/** A specifier to a repo file, or null (a package, or nothing there). `exists` answers for repo paths. */
export function resolveTsImport(from: string, spec: string, exists: (p: string) => boolean, cfg: TsConfigPaths | null): string | null {
  if (spec.startsWith("./") || spec.startsWith("../") || spec === "." || spec === "..") {
    return resolveFile(norm(posix.join(posix.dirname(from), spec)), exists);
  }
  if (spec.startsWith("/") || !cfg) return null;
  let best: { prefix: string; suffix: string; targets: string[] } | null = null;
  for (const [pattern, targets] of cfg.paths) {
    const star = pattern.indexOf("*");
    const prefix = star < 0 ? pattern : pattern.slice(0, star);
    const suffix = star < 0 ? "" : pattern.slice(star + 1);
    const matches = star < 0 ? spec === pattern : spec.startsWith(prefix) && spec.endsWith(suffix) && spec.length >= prefix.length + suffix.length;
    if (matches && (!best || prefix.length > best.prefix.length)) best = { prefix, suffix, targets };
  }
  if (best) {
    const middle = spec.slice(best.prefix.length, spec.length - best.suffix.length);
    for (const t of best.targets) {
      const hit = resolveFile(norm(posix.join(cfg.base, t.replace("*", middle))), exists);
      if (hit) return hit;
    }
  }
  return cfg.baseUrl !== null ? resolveFile(norm(posix.join(cfg.baseUrl, spec)), exists) : null;
}

function norm(p: string): string {
  const n = posix.normalize(p);
  return n.startsWith("./") ? n.slice(2) : n;
}

function resolveFile(p: string, exists: (p: string) => boolean): string | null {
  if (p.startsWith("../") || p === "..") return null;
  if (exists(p)) return p;
  const js = /\.(m|c)?jsx?$/.exec(p);
  if (js) {
    const stem = p.slice(0, js.index);
    for (const e of js[1] === "m" ? [".mts"] : js[1] === "c" ? [".cts"] : [".ts", ".tsx"]) if (exists(stem + e)) return stem + e;
  }
  for (const e of TRY_EXTENSIONS) if (exists(p + e)) return p + e;
  for (const e of TRY_EXTENSIONS) if (exists(`${p}/index${e}`)) return `${p}/index${e}`;
  return null;
}
