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

/** Reads `paths` from HEAD (git) or the work tree (no git). Missing files are simply absent from `files`. */
export async function readCommitted(ws: Workspace, paths: readonly string[]): Promise<CommittedFiles> {
  const files = new Map<string, string>();
  if (!ws.repo.gitDir) {
    for (const p of paths) {
      const text = readWorktree(ws, p);
      if (text !== null) files.set(p, text);
    }
    return { origin: { kind: "worktree" }, files, drift: [] };
  }
  const head = (await gitText(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd: ws.repo.root, okCodes: [1, 128] })).trim();
  if (head === "") return { origin: { kind: "no-commit" }, files, drift: paths.filter((p) => readWorktree(ws, p) !== null) };
  const batch = new CatFileBatch(ws.repo.gitDir);
  const drift: string[] = [];
  try {
    // Requests are queued together; answers come back in order.
    const reads = paths.map((p) => batch.read(`${head}:${p}`).then(
      (bytes) => new TextDecoder().decode(bytes),
      () => null,
    ));
    const texts = await Promise.all(reads);
    paths.forEach((p, i) => {
      const committed = texts[i] ?? null;
      const live = readWorktree(ws, p);
      if (committed !== null) files.set(p, committed);
      if (committed !== live) drift.push(p);
    });
  } finally {
    batch.close();
  }
  return { origin: { kind: "head", commit: head }, files, drift };
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
