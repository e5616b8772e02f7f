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
 * it) has its `?? dir/` lines confirmed by one status without the cache limited to those directories, on the
 * same index; a line git no longer gives is dropped, and the caller drops the copy whose cache held it. A status
 * told only what the work tree's watch saw needs no confirming: the watch names the emptied directory's
 * entries, and git then reads every directory above them again.
 */
import { git, splitNul } from "./git";

/** Pathspecs handed to one git at most (a command line stays far below the kernel's limit). */
const PATHSPECS_PER_RUN = 2000;

/**
 * `stdout` (`git status --porcelain=v1 -z`) with the `?? dir/` lines git no longer gives without the untracked
 * cache removed, or null when every one stands (or there is none): asked with the status's own arguments
 * (`statusArgs`, `git status --porcelain=v1 -z ...`) on the index it read (`env`).
 */
export async function confirmUntrackedDirs(
  root: string,
  stdout: Uint8Array,
  run: { statusArgs: readonly string[]; env: Record<string, string> },
): Promise<Uint8Array | null> {
  const records = splitNul(stdout);
  const dirs: Uint8Array[] = [];
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (rec[0] === 0x52 || rec[0] === 0x43) i++; // R or C: the source path follows as its own record
    else if (isUntrackedDir(rec)) dirs.push(rec.subarray(3));
  }
  if (dirs.length === 0) return null;
  const standing = new Set<string>();
  for (let at = 0; at < dirs.length; at += PATHSPECS_PER_RUN) {
    const specs = dirs.slice(at, at + PATHSPECS_PER_RUN).map(pathspecOf);
    // never written (optional locks off): without the cache, git would write the index without it
    const env = { ...run.env, GIT_OPTIONAL_LOCKS: "0" };
    const r = await git(["-c", "core.untrackedCache=false", "-c", "core.fsmonitor=false", ...run.statusArgs, "--", ...specs], { cwd: root, env });
    for (const rec of splitNul(r.stdout)) if (isUntrackedDir(rec)) standing.add(Buffer.from(rec.subarray(3)).toString("latin1"));
  }
  if (dirs.every((d) => standing.has(Buffer.from(d).toString("latin1")))) return null;
  const kept: Uint8Array[] = [];
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (isUntrackedDir(rec) && !standing.has(Buffer.from(rec.subarray(3)).toString("latin1"))) continue;
    kept.push(rec, NUL);
    if (rec[0] === 0x52 || rec[0] === 0x43) kept.push(records[++i] as Uint8Array, NUL);
  }
  return Buffer.concat(kept);
}

const NUL = new Uint8Array([0]);

/** `?? <path>/` */
function isUntrackedDir(rec: Uint8Array): boolean {
  return rec.length > 4 && rec[0] === 0x3f && rec[1] === 0x3f && rec[2] === 0x20 && rec[rec.length - 1] === 0x2f;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The pathspec naming exactly the directory `dir/` (its bytes as git printed them: -z output is not quoted). A
 * name that is not UTF-8 cannot be a command-line argument as it is: a glob with every byte above 0x7f as `?`
 * (one byte), which may name other directories too; only this one's line is looked for in the answer.
 */
function pathspecOf(dir: Uint8Array): string {
  try {
    return `:(literal)${utf8.decode(dir)}`;
  } catch {
    let glob = "";
    for (const b of dir.subarray(0, -1)) glob += b >= 0x80 ? "?" : /[*?[\]\\]/.test(String.fromCharCode(b)) ? `\\${String.fromCharCode(b)}` : String.fromCharCode(b);
    return `:(glob)${glob}/**`;
  }
}
