/**
 * Temporary names a write makes in the work tree itself, `.worksnap-{pid}-{16
 * hex}`: a file written beside its target where no rename reaches it from
 * `.mcp/tmp` (another mount), a rollback's restored file, a case-only
 * rename's middle step. A process killed between making one and renaming it
 * would leave it in the user's tree, where git lists it as untracked and
 * nothing of worksnap's would ever look for it.
 *
 * So each directory is noted before its first such name is made, durably, in
 * `.mcp/tmp/{pid}-beside` (one JSON string per line: the directory from the
 * root); the temp cleanup of a later process (state-dir.ts), finding that
 * file of a process no longer running, removes that process's names in those
 * directories, then the file. A running process's file is left alone, as
 * every temp of a running process is.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomId128 } from "../core/hash";
import type { DirHandle, TreeHandles } from "./dir-handle";

/** How the note of a process's directories is named in `.mcp/tmp` (after `{pid}-`). */
export const BESIDE_NOTE = "beside";
const NAME = /^\.worksnap-(\d+)-[0-9a-f]{16}$/;

/** The directories noted so far, by state directory: each is noted once per process. */
const noted = new Map<string, Set<string>>();

/** A fresh temporary name for `dir` (held open, inside the root whose state directory is `stateDir`), noted first. */
export function besideName(stateDir: string, dir: DirHandle): string {
  let dirs = noted.get(stateDir);
  if (dirs === undefined) noted.set(stateDir, (dirs = new Set()));
  const rel = dir.rel === "" ? "." : dir.rel;
  if (!dirs.has(rel) && note(stateDir, rel)) dirs.add(rel);
  return `.worksnap-${process.pid}-${randomId128().slice(0, 16)}`;
}

/**
 * Appends `rel` to this process's note, flushed; false when that fails (a
 * full disk): the note only helps a later cleanup, it never stops a write,
 * least of all a rollback's.
 */
function note(stateDir: string, rel: string): boolean {
  let fd = -1;
  try {
    fd = openSync(join(stateDir, "tmp", `${process.pid}-${BESIDE_NOTE}`), "a", 0o644);
    writeSync(fd, `${JSON.stringify(rel)}\n`);
    fsyncSync(fd);
    return true;
  } catch {
    return false;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/**
 * Removes the temporary names process `pid` (no longer running) left in the
 * directories its note names, each reached beneath the root without
 * following a symlink; a directory gone since is skipped. The names removed.
 */
export function removeBesideTemps(handles: TreeHandles, notePath: string, pid: number): number {
  let text: string;
  try {
    text = readFileSync(notePath, "utf8");
  } catch {
    return 0;
  }
  let removed = 0;
  for (const line of text.split("\n")) {
    let rel: unknown;
    try {
      rel = JSON.parse(line);
    } catch {
      continue; // an unfinished last line: its directory had no name made yet
    }
    if (typeof rel !== "string") continue;
    let dir: DirHandle | null;
    try {
      dir = handles.dir(rel);
    } catch {
      continue; // gone, or no longer a directory reached without a symlink
    }
    if (!dir) continue;
    for (const name of dir.list()) {
      if (NAME.exec(name)?.[1] !== String(pid)) continue;
      try {
        dir.unlink(name);
        removed++;
      } catch {
        // removed meanwhile, or a directory by that name: not ours to force
      }
    }
  }
  return removed;
}
