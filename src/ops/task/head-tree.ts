import { isFileMode } from "../../core/file-mode";
import { blobIdFromHex } from "../../core/hash";
import { CatFileBatch } from "../../repo/cat-file";
import { decodePath, git, splitNul } from "../../repo/git";
import type { SideEntry } from "../snapshot/tree-side";
import type { Workspace } from "../workspace";
import { taskError } from "./task-errors";

/** Paths per `git ls-tree` call: each is an argument. */
const CHUNK = 500;

/**
 * Entries of a commit's tree for the given file paths, with sha256 blob ids
 * (the content store's ids), so they compare with snapshot and work-tree
 * entries. A blob the store does not know yet is read from the repository
 * once and stored. Paths that are not files of the commit are left out.
 */
export async function commitEntries(ws: Workspace, commit: string, paths: string[]): Promise<Map<string, SideEntry>> {
  const out = new Map<string, SideEntry>();
  if (!ws.repo.gitDir || commit === "" || paths.length === 0) return out;
  const found: { path: string; oid: string; mode: SideEntry["mode"] }[] = [];
  for (let i = 0; i < paths.length; i += CHUNK) {
    const r = await git(["ls-tree", "-z", "--full-tree", commit, "--", ...paths.slice(i, i + CHUNK)], { cwd: ws.repo.root, okCodes: [128], env: { GIT_LITERAL_PATHSPECS: "1" } });
    if (r.code !== 0) {
      throw taskError("REPO_CHANGED", "REPO_CHANGED", `the commit the task started from (${commit.slice(0, 12)}) is no longer in the repository`, { commit });
    }
    for (const rec of splitNul(r.stdout)) {
      const tab = rec.indexOf(9);
      if (tab < 0) continue;
      const [mode, type, oid] = new TextDecoder().decode(rec.subarray(0, tab)).split(" ");
      const path = decodePath(rec.subarray(tab + 1));
      if (path === null || type !== "blob" || !mode || !oid || !isFileMode(mode)) continue;
      found.push({ path, oid, mode });
    }
  }
  const unknown = found.filter((f) => !ws.blobs.gitMap.get(f.oid));
  const read = new Map<string, string>();
  if (unknown.length > 0) {
    const batch = new CatFileBatch(ws.repo.gitDir);
    try {
      for (const f of unknown) {
        if (read.has(f.oid)) continue;
        const id = await ws.blobs.write(await batch.read(f.oid));
        read.set(f.oid, id);
      }
    } finally {
      batch.close();
    }
  }
  for (const f of found) {
    const known = ws.blobs.gitMap.get(f.oid);
    const blob = known ? blobIdFromHex(known.sha256) : (read.get(f.oid) as SideEntry["blob"]);
    out.set(f.path, { path: f.path, blob, mode: f.mode });
  }
  return out;
}

/** Paths that differ between two commits (`git diff-tree -r --name-only`), both sides. */
export async function pathsChangedBetween(ws: Workspace, from: string, to: string): Promise<string[]> {
  if (!ws.repo.gitDir || from === to) return [];
  if (from === "" || to === "") {
    const commit = from === "" ? to : from;
    const r = await git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit], { cwd: ws.repo.root });
    return splitNul(r.stdout).flatMap((b) => decodePath(b) ?? []);
  }
  const r = await git(["diff-tree", "-r", "-z", "--name-only", "--no-renames", from, to], { cwd: ws.repo.root, okCodes: [128] });
  if (r.code !== 0) throw taskError("REPO_CHANGED", "REPO_CHANGED", `cannot compare commits ${from.slice(0, 12)} and ${to.slice(0, 12)}: one is no longer in the repository`, { from, to });
  return splitNul(r.stdout).flatMap((b) => decodePath(b) ?? []);
}
