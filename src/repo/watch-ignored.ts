/**
 * The directories a server's watch on the work tree may watch without their
 * contents (status-watch.ts): the ones git excludes by a pattern of their own
 * (`node_modules/`, `build/`, `/out`). git never looks inside such a
 * directory, and no rule can take a file below it back in ("it is not
 * possible to re-include a file if a parent directory of that file is
 * excluded", gitignore(5)), so nothing written there can change the status,
 * as long as the rules stay as they are and the index holds no entry below it
 * (a file added with `git add -f`). In a monorepo these directories hold most
 * of the tree's directories, and every directory watched is one of the
 * user's inotify watches.
 *
 * A directory whose files are all ignored by their own patterns (`logs/` with
 * `*.log`) is not one: a file of another name made below it is untracked.
 * So the directories `git ls-files --others --ignored --directory` names are
 * kept only when `git check-ignore` says the directory itself is excluded.
 * The rules that live outside the work tree (`info/exclude`,
 * `core.excludesFile`, and the config files that name it; ruleFiles lists
 * every file outside the tree git's answer depends on) are watched by their
 * stat data (`ruleSignature`); the work tree's `.gitignore` files by the
 * watch itself.
 */
import { isAbsolute, join } from "node:path";
import { decodePath, git, splitNul } from "./git";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";

/**
 * The directories git excludes by a pattern of their own, relative to the root as latin1 strings of their bytes,
 * without a trailing "/"; none in `own` or below them (the caller watches those its own way), none whose name is
 * not UTF-8 (it could not be named to git as an argument: such a directory is watched whole).
 */
export async function excludedDirectories(repo: RepoRoot, own: readonly string[]): Promise<string[]> {
  const listed = await git(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], { cwd: repo.root });
  const latin1 = (raw: Uint8Array) => Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("latin1");
  const mine = own.map((d) => `${d}/`);
  const candidates = splitNul(listed.stdout)
    .map(latin1)
    .filter((p) => p.endsWith("/") && !mine.some((m) => p.startsWith(m)));
  if (candidates.length === 0) return [];
  const input = Buffer.from(candidates.map((p) => `${p}\0`).join(""), "latin1");
  const checked = await git(["check-ignore", "--stdin", "-z"], { cwd: repo.root, input, okCodes: [1] });
  return splitNul(checked.stdout)
    .filter((raw) => decodePath(raw) !== null)
    .map(latin1)
    .filter((p) => p.endsWith("/"))
    .map((p) => p.slice(0, -1));
}

/**
 * The files outside the work tree whose change can change `git status`'s answer for `repo`: its ignore rules
 * (`info/exclude`, `core.excludesFile`), attributes (`info/attributes`, `core.attributesFile`), and every
 * configuration file git reads (the repository's, the work tree's, the user's, and the ones they include; worksnap's
 * git reads no system configuration: GIT_CONFIG_NOSYSTEM). The default places are named whether or not a file is
 * there, so that one made later counts as a change.
 */
export async function ruleFiles(repo: RepoRoot): Promise<string[]> {
  const resolved = (p: string) => (isAbsolute(p) ? p : join(repo.root, p));
  const text = async (args: string[]) => Buffer.from((await git(args, { cwd: repo.root, okCodes: [1] })).stdout).toString();
  const [gitPaths, excludes, attributes, origins] = await Promise.all([
    text(["rev-parse", "--git-path", "info/exclude", "--git-path", "config", "--git-path", "config.worktree", "--git-path", "info/attributes"]),
    text(["config", "--path", "--get", "core.excludesFile"]),
    text(["config", "--path", "--get", "core.attributesFile"]),
    text(["config", "--list", "--show-origin", "-z"]),
  ]);
  const home = process.env.HOME ?? "";
  const xdg = process.env.XDG_CONFIG_HOME || join(home, ".config");
  const files = [...gitPaths.split("\n").filter((p) => p !== "").map(resolved), join(home, ".gitconfig")];
  for (const name of ["config", "ignore", "attributes"]) files.push(join(xdg, "git", name));
  for (const named of [excludes.trim(), attributes.trim()]) if (named !== "") files.push(resolved(named));
  // `--show-origin -z`: origin NUL key NL value NUL, the origin of a file's setting "file:<path>"
  const fields = origins.split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]!.startsWith("file:")) files.push(resolved(fields[i]!.slice(5)));
  return [...new Set(files)];
}

/** The identity of each of `files` (a missing one as such): it changes whenever one of them is written, made or removed. */
export function ruleSignature(files: readonly string[]): string {
  return files.map((f) => indexIdentity(f) ?? "-").join("|");
}

/** Whether the index file `index` holds an entry below one of `dirs` (then the watch must look inside them). */
export async function entriesBelow(repo: RepoRoot, index: string, dirs: readonly string[]): Promise<boolean> {
  if (dirs.length === 0) return false;
  const pathspecs = dirs.map((d) => `:(literal)${decodePath(Buffer.from(d, "latin1")) ?? d}/`);
  const r = await git(["ls-files", "-z", "--", ...pathspecs], { cwd: repo.root, env: { GIT_INDEX_FILE: index } });
  return r.stdout.length > 0;
}
