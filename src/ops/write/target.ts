import { modeOfPermissions, modeOfStat, type FileMode } from "../../core/file-mode";
import { lstatSync, realpathSync, type Stats } from "node:fs";
import { join } from "node:path";
import { invalidArgument, isDescriptorShortage, isMissingPath, permissionDenied, repoChanged } from "../../core/errors";
import { PATH_MAX, ROOT, ancestorsOf, baseName, isReservedPath, joinRepoPath, parentOf, type RepoPath } from "../../core/repo-path";
import { type DirHandle, type FileStat, type ReadEntry, TreeHandles, symlinkOnPath } from "../../repo/dir-handle";
import type { RepoRoot } from "../../repo/root";
import { processUmask } from "../../repo/umask";
import type { PathState } from "./edit-recorder";
import { resolveInRoot } from "../live/path-guard";
import { caseKey, foldsCase, spellingIn } from "../../repo/name-case";
import { type ModeRules, indexExecutables, knownModeRules, modeRules } from "../../repo/mode-rules";

/**
 * Where a work-tree write lands. `follow` decides what a symlink as the last
 * component means: followed (write_file writes to the link's target, which
 * must lie inside the root), or the link itself (patches, delete and move act
 * on the link as git and rm/mv do; its text is its content, mode 120000).
 * Directory symlinks on the way are always followed, and must stay inside the
 * root (spec 3.2: canonicalise, then refuse anything outside, `.git`, `.mcp`).
 *
 * The canonical path has no symlink in it; its directory is then opened
 * beneath the root without following any (repo/dir-handle.ts) and held for
 * the call: the target's state is read, and its new content published,
 * through that descriptor. A directory swapped for a symlink after the
 * canonical path was found makes the open fail (REPO_CHANGED); one swapped
 * after the open no longer matters.
 */
export interface WorktreeTarget {
  /** The path as asked for. */
  requested: RepoPath;
  /**
   * Repo-relative path of what is acted on; differs from `requested` when a
   * symlink was followed, or a case-folding file system holds the file (or a
   * directory on the way) under another spelling.
   */
  path: RepoPath;
  /** `path`'s directory. */
  parent: RepoPath;
  /** That directory, held open; null when it does not exist yet (or a file is in the way). */
  dir: DirHandle | null;
  /** The target's name in `dir`. */
  name: string;
  kind: "missing" | "file" | "symlink" | "dir" | "other";
  stat: FileStat | null;
  /** How a mode is taken from its stat here (WorktreeAccess.gitMode). */
  gitMode: (path: RepoPath, st: FileStat) => FileMode;
}

/**
 * One call's access to the work tree for writing: the directories it holds
 * open and the canonical resolutions of parent directories it made (500 files
 * in 10 directories resolve 10 directories). Made under the work-tree lock
 * for one call and closed when it ends.
 */
export class WorktreeAccess {
  readonly handles: TreeHandles;
  private readonly parents = new Map<RepoPath, RepoPath>();
  /** Whether the root's file system folds case (repo/name-case.ts). */
  readonly foldsCase: boolean;
  /** The names of directories asked for a spelling, listed once per call. */
  private readonly listings = new Map<RepoPath, string[]>();
  /** The directories the call named, by case-folded key (oneSpelling). */
  private readonly directories = new Map<string, string>();

  /** git's rules for modes here once known (repo/mode-rules.ts); until then, modes as the disk has them. */
  private rules: ModeRules | null;
  /**
   * Settles once the rules are known (at once, unless git must be asked): a
   * call's asynchronous steps wait for it before they read a file's mode.
   */
  readonly rulesKnown: Promise<void>;
  /**
   * The index's executable paths (keyed case-folded where names fold case), read once per call when a mode is
   * first taken from it; null: the index could not be read, modes are the disk's.
   */
  private executables: ReadonlySet<string> | null | undefined;

  constructor(readonly repo: RepoRoot) {
    this.handles = TreeHandles.open(repo.root);
    this.foldsCase = foldsCase(repo.root);
    this.rules = knownModeRules(repo);
    this.rulesKnown =
      this.rules !== null
        ? Promise.resolve()
        : modeRules(repo).then(
            (r) => {
              this.rules = r;
            },
            () => undefined,
          );
  }

  /**
   * Whether a symlink is written as one: not where git makes none
   * (`core.symlinks false`: FAT, exFAT, some Windows setups), where it is a
   * plain file holding the link's text, as `git apply` and a checkout write it.
   */
  get symlinks(): boolean {
    return this.rules?.symlinks !== false;
  }

  /**
   * A file's mode as git takes it from its stat (`ce_mode_from_stat`): where
   * git does not trust the executable bit (`core.fileMode false`: FAT, exFAT,
   * Windows drives under WSL, where every file may read as executable), a
   * regular file is executable when its index entry is, whatever the disk
   * says; else the disk's mode.
   */
  readonly gitMode = (path: RepoPath, st: FileStat): FileMode => {
    const disk = modeOfStat(st) ?? modeOfPermissions(st.mode);
    if (this.rules === null || this.rules.executableBit || !st.isFile()) return disk;
    if (!this.repo.gitDir) return "100644"; // no index to keep a mode: a file is what git would record of it there
    if (this.executables === undefined) {
      const exec = indexExecutables(this.repo);
      this.executables = exec !== null && this.foldsCase ? new Set([...exec].map(caseKey)) : exec;
    }
    if (this.executables === null) return disk;
    return this.executables.has(this.foldsCase ? caseKey(path) : path) ? "100755" : "100644";
  };

  /**
   * The name `dir` (the directory `parent`) holds for `name`: where the file
   * system folds case, an existing entry's own spelling (a write keeps it,
   * and every path of the call names the file one way); else `name`.
   */
  spelling(parent: RepoPath, dir: DirHandle, name: string): string {
    if (!this.foldsCase) return name;
    let names = this.listings.get(parent);
    if (names === undefined) {
      names = dir.list();
      this.listings.set(parent, names);
    }
    return spellingIn(dir, name, names);
  }

  /** The canonical path of a directory the caller names (symlinks on the way followed inside the root). */
  canonicalParent(parent: RepoPath): RepoPath {
    if (parent === ROOT) return ROOT;
    let p = this.parents.get(parent);
    if (p === undefined) {
      p = resolveFollowing(this.repo, parent).path;
      this.parents.set(parent, p);
    }
    return p;
  }

  /**
   * Where names fold case, each directory `p` names spelled as the call first
   * named it: existing ones are spelled as held already, and a new one named
   * twice in two spellings ("New/a.txt", "NEW/b.txt") is one directory, made
   * once, under the first.
   */
  oneSpelling(p: RepoPath): RepoPath {
    const parts = p.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      const key = caseKey(prefix);
      const first = this.directories.get(key);
      if (first === undefined) this.directories.set(key, prefix);
      else if (first !== prefix) parts.splice(0, i, ...first.split("/"));
    }
    return parts.join("/") as RepoPath;
  }

  close(): void {
    this.handles.close();
  }
}

export function resolveWorktreeTarget(access: WorktreeAccess, requested: RepoPath, follow: boolean): WorktreeTarget {
  const t = locateWorktreeTarget(access, requested, follow);
  const stat = t.dir ? t.dir.lstat(t.name) : null;
  return { ...t, kind: kindOf(stat), stat };
}

/** resolveWorktreeTarget up to the target's directory, held open: every check on the path, no look at the target. */
function locateWorktreeTarget(access: WorktreeAccess, requested: RepoPath, follow: boolean): Located {
  if (requested === ROOT) throw invalidArgument("the repository root is not a file; name a path inside it", { path: requested });
  if (isReservedPath(requested)) throw permissionDenied(`${requested} is reserved for git and worksnap state`, { path: requested });
  let path: RepoPath;
  if (follow) {
    path = resolveFollowing(access.repo, requested).path;
    if (path === ROOT) throw invalidArgument(`${requested} resolves to the repository root`, { path: requested });
  } else {
    const parent = access.canonicalParent(parentOf(requested));
    const name = baseName(requested);
    path = (parent === ROOT ? name : `${parent}/${name}`) as RepoPath;
  }
  if (access.foldsCase && path.includes("/")) path = joinRepoPath(access.oneSpelling(parentOf(path)), baseName(path));
  if (isReservedPath(path)) {
    throw permissionDenied(`${requested} resolves into ${path}, which is reserved for git and worksnap state`, { path: requested, resolved: path });
  }
  // Held directories could reach deeper than the system's path limit, but nothing else could then name the file
  // (git, editors, worksnap's own reads): a path too long under the root is refused, as the system would.
  const bytes = Buffer.byteLength(access.repo.root, "utf8") + 1 + Buffer.byteLength(path, "utf8");
  if (bytes >= PATH_MAX) {
    throw invalidArgument(`${requested} is too long under the repository root (${bytes} bytes with the root; the file system takes at most ${PATH_MAX - 1})`, {
      path: requested,
      errno: "ENAMETOOLONG",
      limit: PATH_MAX - 1,
    });
  }
  const parent = parentOf(path);
  const dir = access.handles.dir(parent);
  const name = dir ? access.spelling(parent, dir, baseName(path)) : baseName(path);
  if (name !== baseName(path)) path = (parent === ROOT ? name : `${parent}/${name}`) as RepoPath;
  return { requested, path, parent, dir, name, gitMode: access.gitMode };
}

/**
 * resolveWorktreeTarget and readTargetState for many paths (not following a
 * final symlink), with the same answers and errors, each path's own: the
 * files' lstat and bytes are read in one call for all of them
 * (TreeHandles.readEntries).
 */
export function resolveAndReadTargets(access: WorktreeAccess, paths: readonly RepoPath[]): ({ target: WorktreeTarget; state: PathState | Error } | Error)[] {
  const located: (Located | Error)[] = paths.map((p) => {
    try {
      return locateWorktreeTarget(access, p, false);
    } catch (err) {
      return err as Error;
    }
  });
  const held = located.filter((l): l is Located & { dir: DirHandle } => !(l instanceof Error) && l.dir !== null);
  const entries = access.handles.readEntries(held);
  const byTarget = new Map<Located, ReadEntry | Error>(held.map((l, k) => [l, entries[k]!]));
  return located.map((l) => {
    if (l instanceof Error) return l;
    const entry = byTarget.get(l) ?? { stat: null, read: null };
    if (entry instanceof Error) return entry;
    const target: WorktreeTarget = { ...l, kind: kindOf(entry.stat), stat: entry.stat };
    if (target.kind !== "file") {
      try {
        return { target, state: readTargetState(target) };
      } catch (err) {
        return { target, state: err as Error };
      }
    }
    return { target, state: stateOfRead(target, entry.read!) };
  });
}

/** A target without its stat: where it is, not yet what it is. */
type Located = Omit<WorktreeTarget, "kind" | "stat">;

/**
 * Canonicalises a path with every symlink followed (spec 3.2 steps 1-6): an
 * existing path through resolveInRoot; a missing one through its deepest
 * existing ancestor, with the remaining names appended. A dangling symlink on
 * the way is refused: where it would lead is not known to be inside the root.
 */
function resolveFollowing(repo: RepoRoot, requested: RepoPath): { abs: string; path: RepoPath } {
  const ancestors = [...ancestorsOf(requested), requested];
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as RepoPath;
    const abs = join(repo.root, a);
    if (!existsFollowing(abs)) {
      if (lstatOrNull(abs)?.isSymbolicLink()) throw permissionDenied(`${a} is a symlink whose target does not exist`, { path: requested, symlink: a });
      continue;
    }
    const r = resolveInRoot(repo, a);
    const rest = requested.slice(a.length + 1);
    if (rest === "") return { abs: r.abs, path: r.resolved };
    return { abs: join(r.abs, rest), path: (r.resolved === ROOT ? rest : `${r.resolved}/${rest}`) as RepoPath };
  }
  return { abs: join(repo.root, requested), path: requested };
}

function existsFollowing(abs: string): boolean {
  try {
    realpathSync(abs);
    return true;
  } catch (err) {
    if (isDescriptorShortage(err)) throw err; // not an answer about the path
    return false;
  }
}

function kindOf(st: FileStat | null): WorktreeTarget["kind"] {
  if (!st) return "missing";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "dir";
  return "other";
}

export function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs);
  } catch (err) {
    if (isMissingPath(err)) return null;
    throw err;
  }
}

/** A file's or symlink's content and git mode, read through its held directory; null when absent. Directories are refused. */
export function readTargetState(t: WorktreeTarget): PathState {
  if (t.kind === "missing") return null;
  if (t.kind === "dir") throw invalidArgument(`${t.requested} is a directory, not a file`, { path: t.requested });
  if (t.kind === "other") throw invalidArgument(`${t.requested} is not a regular file or symlink`, { path: t.requested });
  const dir = t.dir!;
  try {
    if (t.kind === "symlink") return { bytes: dir.readlink(t.name), mode: "120000" };
  } catch (err) {
    throw readFailure(t, err);
  }
  // A view, not a copy: on a 50 MB file the copy costs as much as the read.
  let read: { bytes: Uint8Array; stat: FileStat } | Error;
  try {
    read = dir.readFile(t.name);
  } catch (err) {
    read = err as Error;
  }
  const state = stateOfRead(t, read);
  if (state instanceof Error) throw state;
  return state;
}

/** A file target's state from its read (readFile's answer or error): the error to report when it is no longer that file. */
function stateOfRead(t: WorktreeTarget, read: { bytes: Uint8Array; stat: FileStat } | Error): PathState | Error {
  if (read instanceof Error) return readFailure(t, read);
  if (!read.stat.isFile()) return changedWhileRead(t);
  return { bytes: read.bytes, mode: t.gitMode(t.path, t.stat!) };
}

function readFailure(t: WorktreeTarget, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ELOOP" || code === "ENOENT" || code === "EINVAL" ? changedWhileRead(t) : (err as Error);
}

function changedWhileRead(t: WorktreeTarget): Error {
  return repoChanged(`${t.path} changed while it was being read (it is no longer the ${t.kind} it was a moment ago); nothing was written, retry`, { path: t.path, reason: "path_changed" });
}

/**
 * What identifies one version of a file on disk without reading it: a write
 * changes its mtime and ctime (a rename over it, its inode). Two reads with
 * the same stamp are taken to have read the same bytes; like git's index, a
 * rewrite to the same size within one timestamp tick of the file system is
 * not seen.
 */
export function statStamp(st: FileStat | null): string | null {
  if (!st) return null;
  return `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/**
 * The nearest existing ancestor of `path` that is not a directory (a file in
 * the way of creating `path`), or null. `path` is canonical (no symlink on the
 * way), so its ancestors are looked at through held directories. `removed` are paths the same change
 * set deletes first, so they no longer block. `directories`: the ancestors one validation found to be
 * directories already (not looked at again; those found here are added).
 */
export function blockingAncestor(access: WorktreeAccess, path: RepoPath, removed: Set<string>, directories?: Set<string>): RepoPath | null {
  const ancestors = ancestorsOf(path);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as RepoPath;
    if (directories?.has(a)) return null;
    const dir = access.handles.dir(parentOf(a));
    const st = dir ? dir.lstat(baseName(a)) : null;
    if (!st) continue;
    if (st.isDirectory()) {
      directories?.add(a);
      return null;
    }
    // A symlink where the canonical path had a directory, or nothing, was put there since (a file is just in the way).
    if (st.isSymbolicLink() && !removed.has(a)) throw symlinkOnPath(path, a);
    return removed.has(a) ? null : a; // a file: not a directory to create in
  }
  return null;
}

/**
 * Permission bits for a file written with git mode `mode`: an existing
 * file keeps its exact bits unless its executable state changes (then x
 * follows r, as git does); a new file gets what a checkout by git gives it,
 * 0666 or 0777 less the process's umask (0644 or 0755 under the usual 022,
 * 0600 or 0700 under 077, 0664 or 0775 under 002), as the directories made
 * for it get 0777 less the umask; the owner's read and write are kept, and
 * an executable's owner x, which is what git reads as executable.
 */
export function permFor(mode: FileMode, existingPerm: number | null): number {
  const exec = mode === "100755";
  if (existingPerm === null) return ((exec ? 0o777 : 0o666) & ~processUmask()) | (exec ? 0o700 : 0o600);
  const wasExec = (existingPerm & 0o111) !== 0;
  if (wasExec === exec) return existingPerm;
  return exec ? existingPerm | ((existingPerm & 0o444) >> 2) : existingPerm & ~0o111;
}
