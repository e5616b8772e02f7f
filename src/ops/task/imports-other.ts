import { posix } from "node:path";

/**
 * Imports of Python, Go and C/C++ files, as repo paths. Each language is read
 * with line-level patterns (comments and strings stripped where they could
 * hide an import), which is what these import forms need:
 * - Python: `import a.b`, `from a.b import c`, `from . import x`,
 *   `from ..pkg import y`; modules resolve from the repository root and from
 *   `src/` (`a/b.py`, `a/b/__init__.py`), relative ones from the file's package.
 * - Go: `import "module/path/pkg"` (single or grouped) for packages of this
 *   module (go.mod's `module`); an import means every non-test file of the
 *   package directory, and a package's `_test.go` files depend on the package.
 * - C/C++: `#include "x.h"` (quoted includes only), from the including file's
 *   directory, the root, then `include/`.
 */

// ------------------------------------------------------------------ Python

export function scanPythonImports(text: string): { module: string; level: number; names: string[] }[] {
  const out: { module: string; level: number; names: string[] }[] = [];
  const src = text.replace(/\\\r?\n/g, " ");
  const lines = src.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/#.*$/, "");
    let m = /^\s*import\s+(.+)$/.exec(line);
    if (m) {
      for (const part of (m[1] as string).split(",")) {
        const mod = part.trim().split(/\s+as\s+/)[0]?.trim() ?? "";
        if (/^[A-Za-z_][\w.]*$/.test(mod)) out.push({ module: mod, level: 0, names: [] });
      }
      continue;
    }
    m = /^\s*from\s+(\.*)([\w.]*)\s+import\s+(.*)$/.exec(line);
    if (!m) continue;
    let names = m[3] as string;
    if (names.includes("(") && !names.includes(")")) {
      while (++i < lines.length && !(lines[i] as string).includes(")")) names += ` ${(lines[i] as string).replace(/#.*$/, "")}`;
      if (i < lines.length) names += ` ${lines[i]}`;
    }
    const list = names.replace(/[()]/g, " ").split(",").map((n) => n.trim().split(/\s+as\s+/)[0]?.trim() ?? "").filter((n) => /^\w+$/.test(n));
    out.push({ module: m[2] as string, level: (m[1] as string).length, names: list });
  }
  return out;
}

export function resolvePythonImports(from: string, text: string, exists: (p: string) => boolean): string[] {
  const out = new Set<string>();
  const asModule = (base: string): string | null => {
    if (exists(`${base}.py`)) return `${base}.py`;
    if (exists(`${base}/__init__.py`)) return `${base}/__init__.py`;
    return null;
  };
  for (const imp of scanPythonImports(text)) {
    const rel = imp.module.replace(/\./g, "/");
    let bases: string[];
    if (imp.level > 0) {
      let dir = posix.dirname(from);
      for (let k = 1; k < imp.level; k++) dir = posix.dirname(dir);
      bases = [rel === "" ? dir : dir === "." ? rel : `${dir}/${rel}`];
    } else bases = [rel, `src/${rel}`];
    for (const base of bases) {
      if (base === "" || base.startsWith("..")) continue; // above the root
      const mod = base === "." ? null : asModule(base);
      let any = false;
      for (const n of imp.names) {
        const sub = asModule(base === "." ? n : `${base}/${n}`);
        if (sub) {
          out.add(sub);
          any = true;
        }
      }
      if (mod) out.add(mod);
      if (mod || any) break;
    }
  }
  out.delete(from);
  return [...out];
}

// ------------------------------------------------------------------ Go

export function goModulePath(goMod: string | null): string | null {
  const m = goMod === null ? null : /^\s*module\s+("?)([^\s"]+)\1\s*$/m.exec(goMod);
  return m ? (m[2] as string) : null;
}

export function scanGoImports(text: string): string[] {
  const src = text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, "");
  const out: string[] = [];
  for (const m of src.matchAll(/^\s*import\s*\(([\s\S]*?)\)/gm)) {
    for (const s of (m[1] as string).matchAll(/"([^"]+)"/g)) out.push(s[1] as string);
  }
  for (const m of src.matchAll(/^\s*import\s+(?:[\w.]+\s+)?"([^"]+)"/gm)) out.push(m[1] as string);
  return out;
}

/** `byDir`: non-test Go files per repo directory. */
export function resolveGoImports(from: string, text: string, module: string | null, byDir: Map<string, string[]>): string[] {
  const out = new Set<string>();
  if (module !== null) {
    for (const imp of scanGoImports(text)) {
      if (imp !== module && !imp.startsWith(`${module}/`)) continue;
      const dir = imp === module ? "." : imp.slice(module.length + 1);
      for (const f of byDir.get(dir) ?? []) out.add(f);
    }
  }
  if (from.endsWith("_test.go")) for (const f of byDir.get(posix.dirname(from)) ?? []) out.add(f);
  out.delete(from);
  return [...out];
}

// ------------------------------------------------------------------ C / C++

export const C_EXTENSIONS = ["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "ipp", "inl"];

export function resolveCIncludes(from: string, text: string, exists: (p: string) => boolean): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
    const inc = m[1] as string;
    for (const base of [posix.dirname(from), ".", "include"]) {
      const p = posix.normalize(base === "." ? inc : `${base}/${inc}`);
      if (!p.startsWith("..") && exists(p)) {
        out.add(p);
        break;
      }
    }
  }
  out.delete(from);
  return [...out];
}
