import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * The repository's common directory: the git directory itself, or the one its `commondir` file names (the git
 * directory of a linked work tree, `git worktree add`, holds its own HEAD and index; objects and refs live in
 * the common one). null when that file cannot be read.
 */
export function commonDir(gitDir: string): string | null {
  let named: string;
  try {
    named = readFileSync(join(gitDir, "commondir"), "utf8").trim();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? gitDir : null;
  }
  if (named === "") return null;
  return isAbsolute(named) ? named : join(gitDir, named);
}

/**
 * How long the repository's object ids are in hex: 64 where its configuration declares the SHA-256 object format
 * (`[extensions] objectformat = sha256`, in the common directory's `config`, where git keeps it), else 40. Read
 * from the file: no git process.
 */
export function objectIdHexLength(gitDir: string): 40 | 64 {
  try {
    const text = readFileSync(join(commonDir(gitDir) ?? gitDir, "config"), "utf8");
    return /^\s*objectformat\s*=\s*"?sha256"?\s*$/im.test(text) ? 64 : 40;
  } catch {
    return 40;
  }
}

/** Whether the repository is a shallow clone (git's `shallow` file in its common directory lists where its history was cut). */
export function isShallow(gitDir: string): boolean {
  return existsSync(join(commonDir(gitDir) ?? gitDir, "shallow"));
}

/** The repository's object directory, which a linked work tree's git directory does not hold. */
export function userObjectDir(gitDir: string): string {
  return join(commonDir(gitDir) ?? gitDir, "objects");
}

/**
 * The files git reads its configuration from for the repository of `gitDir`: the common directory's `config`,
 * a linked work tree's own `config.worktree`, the user's (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and
 * the system's. Their stat data changes whenever one is written, made or removed (configStamp).
 */
export function gitConfigFiles(gitDir: string): string[] {
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return [join(commonDir(gitDir) ?? gitDir, "config"), join(gitDir, "config.worktree"), join(homedir(), ".gitconfig"), join(xdg, "git", "config"), "/etc/gitconfig"];
}

/** The stat data of each file ("-" where there is none), joined: what a cache of their content is keyed by. */
export function configStamp(files: readonly string[]): string {
  return files
    .map((f) => {
      let st;
      try {
        st = statSync(f, { throwIfNoEntry: false });
      } catch {
        st = undefined; // below something that is not a directory (XDG_CONFIG_HOME naming a file), or unreachable: git reads none either
      }
      return st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : "-";
    })
    .join("\0");
}
