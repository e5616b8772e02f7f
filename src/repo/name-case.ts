import { lstatSync, readdirSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isDescriptorShortage } from "../core/errors";

/**
 * File systems that fold the case of names: macOS's default (APFS and HFS+,
 * case-insensitive, case-preserving), exFAT and FAT drives, Windows drives
 * under WSL. On them `Foo.txt` and `foo.txt` name one file, and a name asked
 * for under another spelling than the directory holds finds it. Everything
 * worksnap keys by path (a session's pins, a change set's files, a move's two
 * ends) must then compare paths as the file system does, and a write must
 * keep the name the directory holds (a file replaced by renaming a new one
 * over it takes the new one's spelling: a write of `readme.md` would rename
 * the user's `README.md`, which a case-sensitive checkout then misses).
 */

const probed = new Map<string, boolean>();

/**
 * Whether names under `root` (a canonical root) are looked up without regard
 * to case: an entry of the root with a cased letter, asked for in the other
 * case, which the directory does not hold, is found. Asked once per root and
 * process (a root keeps its file system). A root without such an entry is
 * probed through its own name in its parent, and taken as case-sensitive when
 * that cannot tell either. (Found, not the same inode: a FUSE file system may
 * number one file differently under each name it was asked for.)
 */
export function foldsCase(root: string): boolean {
  let folds = probed.get(root);
  if (folds === undefined) {
    folds = probe(root);
    probed.set(root, folds);
  }
  return folds;
}

function probe(root: string): boolean {
  const inRoot = foundOtherwise(root, listOrEmpty(root));
  if (inRoot !== null) return inRoot;
  const parent = dirname(root);
  return parent !== root && foundOtherwise(parent, listOrEmpty(parent).filter((n) => n === basename(root))) === true;
}

/** For the first of `names` whose other-case spelling `dir` does not hold: whether that spelling is found; null if none. */
function foundOtherwise(dir: string, names: string[]): boolean | null {
  const held = new Set(names);
  for (const name of names) {
    const other = swapCase(name);
    if (other === name || held.has(other)) continue;
    return lstatOrNull(join(dir, other)) !== null;
  }
  return null;
}

function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if (isDescriptorShortage(err)) throw err;
    return [];
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch (err) {
    if (isDescriptorShortage(err)) throw err;
    return null;
  }
}

/** Each ASCII letter in the other case (a probe needs only one letter to differ). */
function swapCase(name: string): string {
  return name.replace(/[A-Za-z]/g, (c) => (c <= "Z" ? c.toLowerCase() : c.toUpperCase()));
}

/**
 * The key under which a case-folding file system finds a path: composed
 * (APFS and HFS+ find é composed or decomposed alike) and in lower case.
 * Two paths with one key are taken for one file.
 */
export function caseKey(path: string): string {
  return path.normalize("NFC").toLowerCase();
}

/** What spelling lookups need of a directory: its names, and an lstat of one of them. */
export interface ListedDir {
  list(): string[];
  lstat(name: string): { dev: number; ino: number } | null;
}

/**
 * The name `dir` holds for `name` on a case-folding file system: `name`
 * itself when it is there (or nothing is), else the entry it finds. Among
 * entries of one key the one with the same file is taken; when the file
 * system folds what caseKey does not, the entries are compared by file.
 * `names` is the directory's listing when the caller has it.
 */
export function spellingIn(dir: ListedDir, name: string, names: readonly string[] = dir.list()): string {
  if (names.includes(name)) return name;
  const key = caseKey(name);
  const alike = names.filter((n) => caseKey(n) === key);
  if (alike.length === 1) return alike[0]!;
  const st = dir.lstat(name);
  if (st === null) return name;
  for (const n of alike.length > 0 ? alike : names) {
    const other = dir.lstat(n);
    if (other !== null && other.dev === st.dev && other.ino === st.ino) return n;
  }
  return name;
}

/**
 * `rel` (repo-relative, under `root`) as the directories hold it: each
 * component that exists in its spelling on disk, the rest as given. For a
 * root that does not fold case, `rel` itself.
 */
export function spelledOnDisk(root: string, rel: string): string {
  if (rel === "." || rel === "" || !foldsCase(root)) return rel;
  const parts = rel.split("/");
  let dir = root;
  for (let i = 0; i < parts.length; i++) {
    const here = dir;
    let names: string[];
    try {
      names = readdirSync(here);
    } catch (err) {
      if (isDescriptorShortage(err)) throw err;
      break; // not a directory (any more): the rest stays as given
    }
    const listed: ListedDir = { list: () => names, lstat: (n) => lstatOrNull(join(here, n)) };
    const name = spellingIn(listed, parts[i]!, names);
    if (!names.includes(name)) break; // missing from here down
    parts[i] = name;
    dir = join(here, name);
  }
  return parts.join("/");
}
