import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { compareUtf8 } from "../core/byte-order";
import { modeOfPermissions } from "../core/file-mode";
import { isReservedPath, isWithin, type RepoPath } from "../core/repo-path";
import { readRegularText } from "./file-chunks";
import type { ScanSkips, TreeEntry } from "./tree-scan";

/** A candidate of a plain directory walk, with the lstat the status hash needs. */
export interface PlainEntry extends TreeEntry {
  stat: Stats;
}

interface IgnoreLayer {
  base: string;
  rules: Ignore;
}

/**
 * Walks a directory that is not a git work tree, honouring `.gitignore` files
 * at every level with the `ignore` package. Symlinks are recorded, never
 * followed; `.git` and `.mcp` are never entered.
 */
export function walkPlainTree(root: string, scope: RepoPath[]): { entries: PlainEntry[]; skipped: ScanSkips; unreadable: string[] } {
  const entries: PlainEntry[] = [];
  const skipped: ScanSkips = { non_utf8: 0, submodules: 0 };
  /** directories that could not be opened (permission denied): named, their files are not candidates */
  const unreadable: string[] = [];
  const visit = (dirRel: string, layers: IgnoreLayer[]) => {
    const abs = dirRel === "" ? root : join(root, dirRel);
    const here = loadIgnore(abs, dirRel);
    const active = here ? [...layers, here] : layers;
    let names: import("node:fs").Dirent[];
    try {
      names = readdirSync(abs, { withFileTypes: true });
    } catch (err) {
      // a directory that vanished has no files; one that cannot be read is named, as git and ripgrep warn of it
      const code = (err as NodeJS.ErrnoException).code;
      if (dirRel !== "" && (code === "EACCES" || code === "EPERM")) unreadable.push(dirRel);
      else if (dirRel === "") throw err;
      return;
    }
    for (const d of names) {
      const name = d.name;
      if (name.includes("\uFFFD")) {
        skipped.non_utf8++;
        continue;
      }
      const rel = dirRel === "" ? name : `${dirRel}/${name}`;
      if (isReservedPath(rel)) continue;
      if (d.isDirectory()) {
        if (ignored(active, rel, true)) continue;
        if (!scope.some((s) => isWithin(rel, s) || isWithin(s, rel as RepoPath))) continue;
        visit(rel, active);
        continue;
      }
      if (ignored(active, rel, false)) continue;
      if (!scope.some((s) => isWithin(rel, s))) continue;
      let st: Stats;
      try {
        st = lstatSync(join(root, rel));
      } catch {
        continue; // vanished mid-walk
      }
      if (st.isSymbolicLink()) entries.push({ path: rel, mode: "120000", stat: st });
      else if (st.isFile()) entries.push({ path: rel, mode: modeOfPermissions(st.mode), stat: st });
    }
  };
  visit("", []);
  entries.sort((a, b) => compareUtf8(a.path, b.path));
  return { entries, skipped, unreadable: unreadable.sort(compareUtf8) };
}

function loadIgnore(absDir: string, dirRel: string): IgnoreLayer | null {
  const text = readRegularText(join(absDir, ".gitignore"));
  return text === null ? null : { base: dirRel, rules: ignore().add(text) };
}

function ignored(layers: IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (const layer of layers) {
    const sub = layer.base === "" ? rel : rel.slice(layer.base.length + 1);
    if (layer.rules.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}
