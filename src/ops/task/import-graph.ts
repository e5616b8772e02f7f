import { readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { sha256Hex } from "../../core/hash";
import { ROOT } from "../../core/repo-path";
import { readLiveTree } from "../live/live-tree";
import type { Workspace } from "../workspace";
import { C_EXTENSIONS, goModulePath, resolveCIncludes, resolveGoImports, resolvePythonImports } from "./imports-other";
import { TS_EXTENSIONS, type TsConfigPaths, readTsConfigPaths, resolveTsImport, scanTsImports } from "./imports-ts";

/**
 * The import graph of the work tree's source files (TypeScript/JavaScript,
 * Python, Go, C/C++): an edge from a file to each repository file it imports,
 * marked when the import is type-only (TypeScript). Built from the live files
 * (tracked and untracked, not ignored); files over MAX_SOURCE_BYTES are
 * nodes without edges. A server keeps each file's edges while the file's
 * size and mtime stay the same.
 */
export interface ImportGraph {
  files: Set<string>;
  /** from -> (to -> type-only) */
  edges: Map<string, Map<string, boolean>>;
  context: GraphContext;
}

export interface GraphContext {
  exists: (p: string) => boolean;
  tsPaths: TsConfigPaths | null;
  goModule: string | null;
  goByDir: Map<string, string[]>;
}

const MAX_SOURCE_BYTES = 1024 * 1024;
const PY = new Set(["py"]);
const GO = new Set(["go"]);
const C = new Set(C_EXTENSIONS);
const TS = new Set(TS_EXTENSIONS);

export function languageOf(path: string): "ts" | "py" | "go" | "c" | null {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return null;
  const ext = path.slice(dot + 1).toLowerCase();
  if (TS.has(ext)) return "ts";
  if (PY.has(ext)) return "py";
  if (GO.has(ext)) return "go";
  if (C.has(ext)) return "c";
  return null;
}

/** The edges of one file with the given content (also used for a file's content at the task's start). */
export function edgesOf(ctx: GraphContext, path: string, text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  switch (languageOf(path)) {
    case "ts":
      for (const imp of scanTsImports(path, text).imports) {
        const to = resolveTsImport(path, imp.specifier, ctx.exists, ctx.tsPaths);
        if (to && to !== path) out.set(to, (out.get(to) ?? true) && imp.typeOnly);
      }
      break;
    case "py":
      for (const to of resolvePythonImports(path, text, ctx.exists)) out.set(to, false);
      break;
    case "go":
      for (const to of resolveGoImports(path, text, ctx.goModule, ctx.goByDir)) out.set(to, false);
      break;
    case "c":
      for (const to of resolveCIncludes(path, text, ctx.exists)) out.set(to, false);
      break;
  }
  return out;
}

const edgeCache = new Map<string, { stamp: string; edges: Map<string, boolean>; ctxKey: string }>();

/**
 * `gone`: files deleted since the task started; imports of them still resolve
 * (to a node with no file), so a deleted file's importers are its dependents.
 */
export async function buildImportGraph(ws: Workspace, gone: readonly string[] = []): Promise<ImportGraph> {
  const tree = await readLiveTree(ws, [ROOT]);
  const all = new Set(tree.entries.filter((e) => e.mode !== "120000").map((e) => e.path));
  const resolvable = new Set([...all, ...gone]);
  const readText = (p: string): string | null => {
    if (!all.has(p)) return null;
    try {
      return readFileSync(join(ws.repo.root, p), "utf8");
    } catch {
      return null;
    }
  };
  const goByDir = new Map<string, string[]>();
  for (const p of all) {
    if (!p.endsWith(".go") || p.endsWith("_test.go")) continue;
    const dir = posix.dirname(p);
    goByDir.set(dir, [...(goByDir.get(dir) ?? []), p]);
  }
  const context: GraphContext = { exists: (p) => resolvable.has(p), tsPaths: readTsConfigPaths(readText), goModule: goModulePath(readText("go.mod")), goByDir };
  // Resolution depends on which files exist and on the configuration: cached edges are valid for the same of both.
  const ctxKey = sha256Hex(`${[...all].join("\0")}\n${[...gone].join("\0")}\n${JSON.stringify(context.tsPaths)}\n${context.goModule}`);
  const files = new Set<string>();
  const edges = new Map<string, Map<string, boolean>>();
  for (const p of all) {
    if (languageOf(p) === null) continue;
    files.add(p);
    let stamp: string;
    try {
      const st = statSync(join(ws.repo.root, p));
      if (st.size > MAX_SOURCE_BYTES) continue;
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      continue;
    }
    const cacheKey = `${ws.repo.root}\0${p}`;
    const hit = edgeCache.get(cacheKey);
    if (hit && hit.stamp === stamp && hit.ctxKey === ctxKey) {
      edges.set(p, hit.edges);
      continue;
    }
    const text = readText(p);
    if (text === null) continue;
    const e = edgesOf(context, p, text);
    edges.set(p, e);
    edgeCache.set(cacheKey, { stamp, edges: e, ctxKey });
  }
  return { files, edges, context };
}

/** Test files by their paths' conventions (JS/TS, Python, Go, Rust, C/C++). */
export function isTestFile(path: string): boolean {
  return (
    /(^|\/)(__tests__|tests?|spec)\//.test(path) ||
    /\.(test|spec)\.[cm]?[jt]sx?$/.test(path) ||
    /(^|\/)test_[^/]*\.py$/.test(path) ||
    /_test\.(py|go|c|cc|cpp)$/.test(path) ||
    /(^|\/)test_[^/]*\.(c|cc|cpp)$/.test(path)
  );
}
