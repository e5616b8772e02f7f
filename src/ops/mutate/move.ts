import { join } from "node:path";
import { invalidArgument, notFound } from "../../core/errors";
import { baseName, isWithin, parseRepoPath, type RepoPath } from "../../core/repo-path";
import { countFiles } from "./delete";
import { type MutationArgs, type MutationResult, runMutation } from "./mutation";
import type { WriteChange } from "../write/write-path";
import type { Workspace } from "../workspace";

export interface MoveArgs extends MutationArgs {
  from: string;
  to: string;
  /** Replace an existing destination file; without it an existing destination is refused. */
  overwrite?: boolean;
}

export type MoveResult = MutationResult<{ from: string; to: string; ignored_kept?: number }>;

/**
 * workspace_move: renames a file or symlink (the link itself), or a directory
 * (its files one by one, each recorded; in the work tree, ignored files stay
 * in the source directory and are counted in `ignored_kept`). Missing parent
 * directories of the destination are created. An existing destination is
 * never replaced unless overwrite:true, and a directory never merges into an
 * existing one.
 */
export async function moveOp(ws: Workspace, args: MoveArgs): Promise<MoveResult> {
  const from = parseRepoPath(args.from, "from");
  const to = parseRepoPath(args.to, "to");
  let srcDirAbs: string | null = null;
  const r = await runMutation(ws, args, "move_file", async (view) => {
    const src = await view.resolve(from, false);
    if (src.kind === "missing") throw notFound(view.mode === "snapshot" ? `${from} is not in the snapshot` : `${from} does not exist`, { path: from });
    const dst = await view.resolve(to, false);
    // the same file under a new spelling of its name (a file system that folds case found it): a rename
    const caseOnly = dst.path === src.path && baseName(to) !== baseName(src.path);
    if (dst.path === src.path && !caseOnly) throw invalidArgument(`cannot move ${from} onto itself`, { from, to });
    if (caseOnly && src.kind === "dir") {
      throw invalidArgument(`${to} is ${src.path} on this file system, whose names ignore case; a directory changes the case of its name through another name: move it to a new name, then to ${to}`, { from, to });
    }
    if (src.kind !== "dir") {
      if (dst.kind === "dir") throw invalidArgument(`${to} is a directory; name the full destination path (for example ${to}/${from.split("/").pop()})`, { to });
      return { changes: [{ kind: "move", from: src.path, path: to, overwrite: args.overwrite === true }], extra: {} };
    }
    if (isWithin(dst.path, src.path)) throw invalidArgument(`cannot move the directory ${from} into itself (${to})`, { from, to });
    if (dst.kind !== "missing") throw invalidArgument(`${to} already exists; a directory is only moved to a new path`, { to });
    const files = await view.filesUnder(src.path);
    if (files.length === 0) throw invalidArgument(`${from} holds no files to move (files git ignores are not moved)`, { from });
    if (view.mode === "worktree") srcDirAbs = join(ws.repo.root, src.path);
    const changes: WriteChange[] = files.map((f) => ({ kind: "move", from: f, path: `${dst.path}${f.slice(src.path.length)}` as RepoPath }));
    return { changes, extra: {} };
  });
  const out: MoveResult = { ...r.result, from, to };
  if (srcDirAbs !== null) {
    const kept = countFiles(srcDirAbs);
    if (kept > 0) out.ignored_kept = kept;
  }
  return out;
}
