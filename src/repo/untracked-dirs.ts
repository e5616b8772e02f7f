/**
 * The untracked directories a status told by git's untracked cache names, asked again of git without the cache.
 *
 * `git status --untracked-files=normal` names an untracked directory once (`?? dir/`), and only while it holds
 * something to list (a file neither tracked nor ignored, at any depth). With the untracked cache, that line is
 * kept in the parent directory's cached listing, which git reads again only when the parent's own stat data
 * changes; emptying `dir` (its last file removed, or its last subdirectory with files) changes `dir`'s mtime, not
 * the parent's, so git 2.39 goes on naming `dir/` after the plain status stopped (checked by hand: `rm -rf
 * d/sub`, `rm d/only-file`, `rm d/sub/leaf` all leave `?? d/` in the cached status until the parent changes).
 * Names added are seen (the emptied directory is read again when git recurses into it), so the cache can only
 * claim too much, and only in `?? dir/` lines.
 *
 * So a status that trusted directories' stat data (a status on a copy without the watch, or told everything by
 * it) has its `?? dir/` lines confirmed by git without the cache: `ls-files --others --exclude-standard
 * --directory --no-empty-directory` limited to those directories, which names `dir/` exactly when the plain
 * status would. It runs on an index that does not exist (an empty one): `dir` holds no tracked entry (the status
 * named it untracked on this very index), so an empty index lists the same there, and git reads nothing but
 * those directories and the ignore rules above them (10 ms on the release trees, against 150-170 ms for any git
 * that reads their 90k-entry index). A line git no longer gives is dropped, and the caller drops the copy whose
 * cache held it. A status told only what the work tree's watch saw needs no confirming: the watch names the
 * emptied directory's entries, and git then reads every directory above them again.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, splitNul } from "./git";

/** Pathspecs handed to one git at most (a command line stays far below the kernel's limit). */
const PATHSPECS_PER_RUN = 2000;

/**
 * `stdout` (`git status --porcelain=v1 -z`, paths from the work tree's top) with the `?? dir/` lines git no longer
 * gives without the untracked cache removed, or null when every one stands (or there is none). `cwd`: any
 * directory of the work tree.
 */
export async function confirmUntrackedDirs(cwd: string, stdout: Uint8Array): Promise<Uint8Array | null> {
  // (a rename's source record is a file's path, never `?? <path>/`: every record is looked at alike)
  const records = splitNul(stdout);
  const dirs = records.filter(isUntrackedDir).map((rec) => rec.subarray(3));
  if (dirs.length === 0) return null;
  const standing = new Set<string>();
  // an index no one can have made: a directory of a random name that does not exist (git takes it as empty)
  const env = { GIT_INDEX_FILE: join(tmpdir(), `worksnap-no-index-${crypto.randomUUID()}`, "index") };
  for (let at = 0; at < dirs.length; at += PATHSPECS_PER_RUN) {
    const specs = dirs.slice(at, at + PATHSPECS_PER_RUN).map(pathspecOf);
    const r = await git(["ls-files", "-z", "--others", "--exclude-standard", "--directory", "--no-empty-directory", "--full-name", "--", ...specs], { cwd, env });
    for (const name of splitNul(r.stdout)) standing.add(key(name));
  }
  const stands = (rec: Uint8Array) => !isUntrackedDir(rec) || standing.has(key(rec.subarray(3)));
  if (records.every(stands)) return null;
  return Buffer.concat(records.filter(stands).flatMap((rec) => [rec, NUL]));
}

/** A path's bytes as a set key. */
function key(path: Uint8Array): string {
  return Buffer.from(path.buffer, path.byteOffset, path.byteLength).toString("latin1");
}

const NUL = new Uint8Array([0]);

/** `?? <path>/` */
function isUntrackedDir(rec: Uint8Array): boolean {
  return rec.length > 4 && rec[0] === 0x3f && rec[1] === 0x3f && rec[2] === 0x20 && rec[rec.length - 1] === 0x2f;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The pathspec naming exactly the directory `dir/` from the work tree's top (its bytes as git printed them: -z
 * output is not quoted). A name that is not UTF-8 cannot be a command-line argument as it is: a glob with every
 * byte above 0x7f as `?` (one byte), which may name other directories too; only this one's line is looked for in
 * the answer.
 */
function pathspecOf(dir: Uint8Array): string {
  try {
    return `:(top,literal)${utf8.decode(dir)}`;
  } catch {
    let glob = "";
    for (const b of dir.subarray(0, -1)) glob += b >= 0x80 ? "?" : /[*?[\]\\]/.test(String.fromCharCode(b)) ? `\\${String.fromCharCode(b)}` : String.fromCharCode(b);
    return `:(top,glob)${glob}/**`;
  }
}
