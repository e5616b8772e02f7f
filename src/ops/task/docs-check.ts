import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { isBinary } from "../../core/binary";
import { lineChanges, splitLines } from "../diff/line-diff";
import type { ChangePair } from "../snapshot/changes";
import type { Workspace } from "../workspace";
import { lineAt } from "./detectors";

/**
 * Documentation freshness: documentation files that name a changed file (its
 * path, or its file name when that is distinctive) or a changed exported
 * symbol, and that the task did not update. A symbol counts as changed when
 * it was added or removed, or its declaration's lines changed (up to the next
 * top-level declaration). Exports are read with patterns for TypeScript /
 * JavaScript (`export function|class|const|interface|type|enum ...`, `export
 * { a, b }`), Python (top-level def/class without a leading underscore), Go
 * (capitalised top-level func/type/var/const) and Rust (`pub fn|struct|...`).
 */
export interface StaleDoc {
  doc: string;
  line: number;
  /** The name the document mentions. */
  mentions: string;
  /** The changed file it belongs to. */
  changed: string;
}

export const DOCS_CAP = 20;
const DOC_MAX_BYTES = 1024 * 1024;
const MIN_SYMBOL = 4;

export function isDocFile(path: string): boolean {
  return /\.(md|mdx|markdown|rst|adoc|asciidoc)$/i.test(path) || /(^|\/)docs?\/.*\.txt$/i.test(path) || /(^|\/)README(\.[^/]*)?$/i.test(path);
}

interface Decl {
  name: string;
  line: number;
}

const DECLS: [RegExp, RegExp][] = [
  [/\.[cm]?[jt]sx?$/, /^export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/gm],
  [/\.py$/, /^(?:async\s+)?(?:def|class)\s+([A-Za-z]\w*)/gm],
  [/\.go$/, /^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)([A-Z]\w*)/gm],
  [/\.rs$/, /^pub(?:\([^)]*\))?\s+(?:async\s+)?(?:fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_]\w*)/gm],
];

function declarations(path: string, text: string): Decl[] {
  const rule = DECLS.find(([file]) => file.test(path));
  if (!rule) return [];
  const out: Decl[] = [];
  for (const m of text.matchAll(rule[1])) out.push({ name: m[1] as string, line: lineAt(text, m.index ?? 0) });
  if (/\.[cm]?[jt]sx?$/.test(path)) {
    for (const m of text.matchAll(/^export\s*\{([^}]*)\}/gm)) {
      for (const part of (m[1] as string).split(",")) {
        const name = part.trim().split(/\s+as\s+/).pop()?.trim();
        if (name && /^[A-Za-z_$][\w$]*$/.test(name)) out.push({ name, line: lineAt(text, m.index ?? 0) });
      }
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

/** Exported symbols added, removed, or whose declaration block changed. */
export function changedSymbols(path: string, before: string, after: string): string[] {
  const old = declarations(path, before);
  const now = declarations(path, after);
  const oldNames = new Set(old.map((d) => d.name));
  const nowNames = new Set(now.map((d) => d.name));
  const out = new Set<string>();
  for (const d of old) if (!nowNames.has(d.name)) out.add(d.name);
  for (const d of now) if (!oldNames.has(d.name)) out.add(d.name);
  const changes = lineChanges(splitLines(before), splitLines(after));
  now.forEach((d, i) => {
    const end = (now[i + 1]?.line ?? Number.MAX_SAFE_INTEGER) - 1;
    // 0-based new-side ranges [newStart, newEnd); a deletion (empty range) touches the line at newStart.
    if (changes.some((c) => c.newStart + 1 <= end && Math.max(c.newEnd, c.newStart + 1) >= d.line)) out.add(d.name);
  });
  return [...out].filter((n) => n.length >= MIN_SYMBOL).sort(compareUtf8);
}

export async function staleDocs(ws: Workspace, changes: readonly ChangePair[], liveFiles: readonly string[]): Promise<StaleDoc[]> {
  const changedPaths = new Set(changes.map((c) => c.change.path));
  const names: { name: string; changed: string; word: boolean }[] = [];
  for (const c of changes) {
    const path = c.change.path;
    if (isDocFile(path)) continue;
    names.push({ name: path, changed: path, word: false });
    const base = path.slice(path.lastIndexOf("/") + 1);
    if (base !== path && base.includes(".") && base.length >= 6) names.push({ name: base, changed: path, word: false });
    const [before, after] = await Promise.all([c.from ? ws.blobs.read(c.from.blob) : new Uint8Array(), c.to ? ws.blobs.read(c.to.blob) : new Uint8Array()]);
    if (isBinary(before) || isBinary(after)) continue;
    const dec = new TextDecoder();
    for (const s of changedSymbols(path, dec.decode(before), dec.decode(after))) names.push({ name: s, changed: path, word: true });
  }
  if (names.length === 0) return [];
  const out: StaleDoc[] = [];
  for (const doc of [...liveFiles].filter((p) => isDocFile(p) && !changedPaths.has(p)).sort(compareUtf8)) {
    let text: string;
    try {
      if (statSync(join(ws.repo.root, doc)).size > DOC_MAX_BYTES) continue;
      text = readFileSync(join(ws.repo.root, doc), "utf8");
    } catch {
      continue;
    }
    for (const n of names) {
      const at = n.word ? wordIndex(text, n.name) : text.indexOf(n.name);
      if (at < 0) continue;
      out.push({ doc, line: lineAt(text, at), mentions: n.name, changed: n.changed });
      break; // one finding per document: the first name it mentions
    }
    if (out.length >= DOCS_CAP) break;
  }
  return out;
}

function wordIndex(text: string, word: string): number {
  const re = new RegExp(`(?<![\\w$])${word.replace(/[$]/g, "\\$")}(?![\\w$])`);
  return re.exec(text)?.index ?? -1;
}
