import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { permissionDenied } from "../core/errors";
import { randomId128 } from "../core/hash";
import { BESIDE_NOTE, removeBesideTemps } from "./beside-temps";
import { gitSync } from "./git";
import { TreeHandles } from "./dir-handle";
import { checkStateFormat, FORMAT_FILE, STATE_FORMAT } from "./state-format";

/**
 * `.mcp/` holds all of worksnap's state (DESIGN decision 5). Its `.gitignore`
 * holds `*`, so git never reports our bookkeeping and the fingerprint is not
 * changed by it. Temp files live in `.mcp/tmp/`, named after the writing
 * process, so a crashed writer's leftovers are recognised and removed.
 * `.mcp/format` holds the layout's number (state-format.ts): an existing
 * `.mcp/` of another format is refused before anything in it is touched.
 */
const prepared = new Set<string>();

export function ensureStateDir(stateDir: string): void {
  refuseSymlinks(stateDir);
  if (prepared.has(stateDir) && existsSync(join(stateDir, "tmp"))) return;
  const found = existsSync(stateDir) ? checkStateFormat(stateDir) : null;
  if (found && !found.marked) refuseTrackedFiles(stateDir);
  mkdirSync(join(stateDir, "tmp"), { recursive: true });
  if (!existsSync(join(stateDir, ".gitignore"))) writeStateFile(stateDir, ".gitignore", "*\n");
  if (!found) writeStateFile(stateDir, FORMAT_FILE, `${STATE_FORMAT}\n`);
  else if (!found.marked) {
    // written before the number existed: format 1, the same layout, so write it down; a read-only `.mcp/` is
    // still read as it is
    try {
      writeStateFile(stateDir, FORMAT_FILE, `${STATE_FORMAT}\n`);
    } catch (err) {
      if (!["EACCES", "EPERM", "EROFS"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
    }
  }
  prepared.add(stateDir);
}

/**
 * A `.mcp/` worksnap has not marked as its own yet (no `format`) may be the
 * repository's: a directory of MCP configuration some projects commit. Its
 * files would be hidden from every tool (`.mcp` is reserved) and worksnap's
 * state mixed in among them, so it is refused, once, before anything is
 * written there; a `.mcp/` left by an earlier worksnap holds nothing git
 * tracks and is taken as it is.
 */
function refuseTrackedFiles(stateDir: string): void {
  const tracked = trackedAt(stateDir);
  if (tracked.length === 0) return;
  throw permissionDenied(
    `.mcp/ holds files the repository tracks (${tracked.slice(0, 3).join(", ")}${tracked.length > 3 ? `, and ${tracked.length - 3} more` : ""}); worksnap keeps its own state in .mcp/ at the root and will not mix it with them, nor hide them from its tools. Move them elsewhere (git mv .mcp <another name>), then retry`,
    { path: ".mcp", reason: "state_dir_tracked", tracked: tracked.slice(0, 20) },
  );
}

/** What the repository tracks at or under `.mcp` (worksnap's own `.gitignore` aside); none where git cannot say. */
function trackedAt(stateDir: string): string[] {
  const root = dirname(stateDir);
  if (!existsSync(join(root, ".git"))) return []; // no work tree of its own here (a plain directory, or below the top)
  try {
    const r = gitSync(["ls-files", "-z", "--", ".mcp"], { cwd: root, okCodes: [128] });
    // worksnap's own .gitignore, committed by someone, is no reason to refuse
    return r.code === 0 ? new TextDecoder().decode(r.stdout).split("\0").filter((p) => p !== "" && p !== ".mcp/.gitignore") : [];
  } catch {
    return [];
  }
}

/** Writes a small file of `.mcp/` atomically (temp, fsync, rename). */
export function writeStateFile(stateDir: string, name: string, text: string): void {
  mkdirSync(join(stateDir, "tmp"), { recursive: true });
  const tmp = tempPath(stateDir, name);
  try {
    const fd = openSync(tmp, "w", 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(stateDir, name));
  } catch (err) {
    rmSync(tmp, { force: true }); // a full disk leaves no half-written temp file
    throw err;
  }
}

/**
 * `.mcp` and `.mcp/tmp` must be real directories inside the root: the write
 * path stages work-tree content there, and a symlink would carry it (and the
 * temp cleanup's removals) somewhere else. Refused, never followed.
 */
function refuseSymlinks(stateDir: string): void {
  for (const dir of [stateDir, join(stateDir, "tmp")]) {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st?.isSymbolicLink() || (st && !st.isDirectory())) {
      const name = dir === stateDir ? ".mcp" : ".mcp/tmp";
      const what = `${name} is ${st.isSymbolicLink() ? "a symbolic link" : "not a directory"}; worksnap keeps its state in a real directory ${name} inside the root`;
      // .mcp/tmp is worksnap's own; a .mcp that is not a directory is someone else's, and may be the repository's
      if (dir !== stateDir) throw permissionDenied(`${what}. Remove it (worksnap makes it again) and retry`, { path: name, reason: "state_dir_not_a_directory" });
      if (trackedAt(stateDir).length > 0) {
        throw permissionDenied(`${what}, and the repository tracks this one, which worksnap will not replace nor hide from its tools. Move it elsewhere (git mv .mcp <another name>), then retry`, {
          path: name,
          reason: "state_dir_tracked",
          tracked: [name],
        });
      }
      throw permissionDenied(`${what}. Move it aside (mv .mcp <another name>: worksnap will not remove what it did not make), then retry`, {
        path: name,
        reason: "state_dir_not_a_directory",
      });
    }
  }
}

/**
 * A path inside the state directory as an error names it: repo-relative
 * (`.mcp/locks/worktree.lock`), never the machine's absolute path. Everything
 * of ours lives under `<root>/.mcp/`, and nothing below it is named `.mcp`.
 */
export function shownStatePath(abs: string): string {
  const at = abs.lastIndexOf("/.mcp/");
  return at < 0 ? abs : abs.slice(at + 1);
}

/** A fresh temp path inside `.mcp/tmp/`; the pid prefix lets cleanup find orphans. */
export function tempPath(stateDir: string, tag: string): string {
  return join(stateDir, "tmp", `${process.pid}-${randomId128().slice(0, 12)}-${tag.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40)}`);
}

/** Whether a process id names a live process (one we may not signal still counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes temp files left by processes that no longer run (crash mid-write),
 * through `.mcp/tmp` held open (dir-handle.ts): a `.mcp` swapped for a symlink
 * meanwhile cannot turn the cleanup's removals elsewhere. A dead process's
 * temporary names in the work tree go with them (beside-temps.ts).
 */
export function cleanStaleTemps(stateDir: string): number {
  if (!existsSync(join(stateDir, "tmp"))) return 0;
  const handles = TreeHandles.open(dirname(stateDir));
  try {
    const tmp = handles.dir(`${stateDir.slice(stateDir.lastIndexOf("/") + 1)}/tmp`);
    if (!tmp) return 0;
    let removed = 0;
    for (const name of tmp.list()) {
      const pid = Number.parseInt(name.split("-")[0] ?? "", 10);
      const stale = Number.isFinite(pid) ? pid !== process.pid && !processAlive(pid) : Date.now() - (tmp.lstat(name)?.mtimeMs ?? Date.now()) > 24 * 3600 * 1000;
      if (!stale) continue;
      // the names the dead process made in the work tree itself (beside-temps.ts) go first
      if (name === `${pid}-${BESIDE_NOTE}`) removeBesideTemps(handles, tmp.removalPath(name), pid);
      rmSync(tmp.removalPath(name), { recursive: true, force: true });
      removed++;
    }
    return removed;
  } finally {
    handles.close();
  }
}
