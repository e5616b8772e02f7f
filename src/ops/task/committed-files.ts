import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CatFileBatch } from "../../repo/cat-file";
import { gitText } from "../../repo/git";
import type { Workspace } from "../workspace";

/**
 * Where configuration is read from (DESIGN decision 15): in a git work tree,
 * the committed version at HEAD, so an agent that edits `package.json` or
 * `worksnap.json` cannot change what `check` runs or what it looks for until
 * a person commits the edit; outside git, the work tree (the answer says so).
 */
export type ConfigOrigin = { kind: "head"; commit: string } | { kind: "worktree" } | { kind: "no-commit" };

export interface CommittedFiles {
  origin: ConfigOrigin;
  /** The files that exist there, by repo path. */
  files: Map<string, string>;
  /** Files whose work-tree version differs from the one read (uncommitted edits, which are not used). */
  drift: string[];
}

/** A commit's files never change: a server reads each (commit, path) from git once. */
const committedCache = new Map<string, string | null>();
const COMMITTED_CACHE_MAX = 512;

/**
 * Reads `paths` from HEAD (git) or the work tree (no git). Missing files are
 * simply absent from `files`. `head`: the HEAD commit when the caller read it
 * already (spares a git call).
 */
export async function readCommitted(ws: Workspace, paths: readonly string[], head?: string): Promise<CommittedFiles> {
  const files = new Map<string, string>();
  if (!ws.repo.gitDir) {
    for (const p of paths) {
      const text = readWorktree(ws, p);
      if (text !== null) files.set(p, text);
    }
    return { origin: { kind: "worktree" }, files, drift: [] };
  }
  const commit = head ?? (await gitText(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd: ws.repo.root, okCodes: [1, 128] })).trim();
  if (commit === "") return { origin: { kind: "no-commit" }, files, drift: paths.filter((p) => readWorktree(ws, p) !== null) };
  const key = (p: string) => `${ws.repo.gitDir}\0${commit}\0${p}`;
  const missing = paths.filter((p) => !committedCache.has(key(p)));
  if (missing.length > 0) {
    const batch = new CatFileBatch(ws.repo.gitDir);
    try {
      // Requests are queued together; answers come back in order.
      const texts = await Promise.all(missing.map((p) => batch.read(`${commit}:${p}`).then((bytes) => new TextDecoder().decode(bytes), () => null)));
      missing.forEach((p, i) => committedCache.set(key(p), texts[i] ?? null));
      while (committedCache.size > COMMITTED_CACHE_MAX) committedCache.delete(committedCache.keys().next().value as string);
    } finally {
      batch.close();
    }
  }
  const drift: string[] = [];
  for (const p of paths) {
    const committed = committedCache.get(key(p)) ?? null;
    if (committed !== null) files.set(p, committed);
    if (committed !== readWorktree(ws, p)) drift.push(p);
  }
  return { origin: { kind: "head", commit }, files, drift };
}

function readWorktree(ws: Workspace, path: string): string | null {
  const abs = join(ws.repo.root, path);
  if (!existsSync(abs)) return null;
  try {
    return readFileSync(abs, "utf8");
  } catch {
    return null; // a directory, or unreadable: not a configuration file
  }
}
