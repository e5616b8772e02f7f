import { readdirSync } from "node:fs";
import { join } from "node:path";
import { invalidArgument, notFound } from "../../core/errors";
import { parseRepoPath } from "../../core/repo-path";
import type { WriteChange } from "../write/write-path";
import { type MutationArgs, type MutationResult, runMutation } from "./mutation";
import type { Workspace } from "../workspace";

export interface DeleteArgs extends MutationArgs {
  path: string;
  /** Required to delete a directory and everything in it. */
  recursive?: boolean;
}

export type DeleteResult = MutationResult<{ path: string; ignored_kept?: number }>;

/**
 * workspace_delete: a file, a symlink (the link itself, never its target), or
 * with recursive:true a directory. In the work tree a directory's files are
 * the tracked and untracked ones git does not ignore; each is deleted (and
 * recorded), directories left empty go too, and ignored files stay where they
 * are (the answer counts them in `ignored_kept`).
 */
export async function deleteOp(ws: Workspace, args: DeleteArgs): Promise<DeleteResult> {
  const path = parseRepoPath(args.path, "path");
  let dirAbs: string | null = null;
  const r = await runMutation(ws, args, "delete_file", async (view) => {
    const t = await view.resolve(path, false);
    if (t.kind === "missing") {
      throw notFound(view.mode === "snapshot" ? `${path} is not in the snapshot` : `${path} does not exist`, { path });
    }
    if (t.kind !== "dir") return { changes: [{ kind: "delete", path: t.path }], extra: {} };
    if (args.recursive !== true) {
      throw invalidArgument(`${path} is a directory; pass recursive: true to delete it and everything in it`, { path });
    }
    const files = await view.filesUnder(t.path);
    if (view.mode === "worktree") {
      dirAbs = join(ws.repo.root, t.path);
      const ignored = files.length === 0 ? countFiles(dirAbs) : 0;
      if (ignored > 0) {
        throw invalidArgument(`${path} holds only files git ignores (${ignored}); workspace_delete does not delete ignored files`, { path, ignored });
      }
    }
    const changes: WriteChange[] = files.length > 0 ? files.map((f) => ({ kind: "delete", path: f })) : [{ kind: "delete", path: t.path }];
    return { changes, extra: {} };
  });
  const out: DeleteResult = { ...r.result, path };
  if (dirAbs !== null) {
    const kept = countFiles(dirAbs);
    if (kept > 0) out.ignored_kept = kept;
  }
  return out;
}

/** Files still below a directory (ignored ones the delete left in place); 0 when it is gone. */
export function countFiles(abs: string, cap = 100_000): number {
  let n = 0;
  const walk = (dir: string) => {
    let names: import("node:fs").Dirent[];
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      if (n >= cap) return;
      if (d.isDirectory()) walk(join(dir, d.name));
      else n++;
    }
  };
  walk(abs);
  return n;
}
