/**
 * How git takes a file's mode from the work tree in this repository, which a capture follows (capture.ts,
 * `EntryFold.gitMode`, after git's `ce_mode_from_stat`), so a snapshot holds the modes git sees:
 * - `core.fileMode` (true unless set false: git sets it false when `git init` or a clone finds the executable bit
 *   unusable, on FAT or exFAT, some network mounts, Windows drives under WSL, where every file may read as
 *   executable): where false, a tracked file keeps its mode from the index whatever the file says, and a new
 *   file is 100644; otherwise every file changed there would show a change of mode git does not see;
 * - `core.symlinks` (true unless set false): where false, git checks a symlink out as a plain file holding the
 *   link's text and keeps the entry's mode 120000 for it.
 * Asked of git in one `git config` (system configuration included, as git would read it for the user) once per
 * version of the configuration files, kept per root and in `.mcp/cache/mode-rules.json` for the next process (a
 * one-shot write asks no git); reading the live tree starts the question beside the status, so a capture finds it
 * answered. A directory outside git has its file system asked instead (probedRules).
 *
 * The write path reads a file's mode by the same rule (`ops/write/target.ts`): where the executable bit is not
 * trusted, a tracked file's mode is the index's (indexExecutables), a new one's 100644.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomId128 } from "../core/hash";
import { writeCacheFile } from "./cache-file";
import { configStamp, gitConfigFiles } from "./common-dir";
import { git } from "./git";
import { indexEntriesOfFile } from "./index-entries";
import { indexIdentity } from "./index-identity";
import type { RepoRoot } from "./root";
import { ensureStateDir } from "./state-dir";

/** Whether git trusts the file system's executable bit (`core.fileMode`). */
export function executableBitTrusted(repo: RepoRoot): Promise<boolean> {
  return modeRules(repo).then((r) => r.executableBit);
}

/** Both rules for the repository (see above). */
export function modeRules(repo: RepoRoot): Promise<ModeRules> {
  if (!repo.gitDir) return Promise.resolve(probedRules(repo));
  const stamp = configStamp(gitConfigFiles(repo.gitDir));
  const known = keptRules(repo, stamp);
  if (known) return known.answer;
  const entry: Asked = { stamp, answer: Promise.resolve(TRUSTED), value: null };
  entry.answer = git(["config", "--bool", "--get-regexp", "^core\\.(filemode|symlinks)$"], { cwd: repo.root, okCodes: [1], env: { GIT_CONFIG_NOSYSTEM: "0" } }).then(
    (r) => {
      const rules = { ...TRUSTED };
      for (const line of new TextDecoder().decode(r.stdout).split("\n")) {
        const [key, value] = line.trim().toLowerCase().split(/\s+/);
        if (key === "core.filemode") rules.executableBit = value !== "false";
        if (key === "core.symlinks") rules.symlinks = value !== "false";
      }
      entry.value = rules;
      storeRules(repo, stamp, rules);
      return rules;
    },
    () => TRUSTED,
  );
  asked.set(repo.root, entry);
  return entry.answer;
}

/**
 * The rules when they are known without asking git: answered before in this process, or kept in
 * `.mcp/cache/mode-rules.json` for the configuration files as they are now; null otherwise (modeRules asks).
 */
export function knownModeRules(repo: RepoRoot): ModeRules | null {
  if (!repo.gitDir) return probedRules(repo);
  return keptRules(repo, configStamp(gitConfigFiles(repo.gitDir)))?.value ?? null;
}

/** The rules for the configuration files of `stamp` as kept in memory, or in the cache file (then kept in memory too). */
function keptRules(repo: RepoRoot, stamp: string): Asked | null {
  const known = asked.get(repo.root);
  if (known && known.stamp === stamp) return known;
  const stored = storedRules(repo, stamp);
  if (stored === null) return null;
  const entry: Asked = { stamp, answer: Promise.resolve(stored), value: stored };
  asked.set(repo.root, entry);
  return entry;
}

/**
 * Outside git there is no configuration to ask: the file system is asked as `git init` asks it (and then sets
 * `core.fileMode` and `core.symlinks`), once per root and process: a file whose owner x is toggled must show the
 * change, and a symlink must be made. On an exFAT drive every file reads 0777 whatever chmod does, and a tree
 * captured there would otherwise be all executable (and another id than the same tree elsewhere). Where nothing
 * can be made (a root that cannot be written), both are trusted.
 */
function probedRules(repo: RepoRoot): ModeRules {
  let rules = probed.get(repo.root);
  if (rules === undefined) {
    rules = probeFileSystem(repo.stateDir);
    probed.set(repo.root, rules);
  }
  return rules;
}

const probed = new Map<string, ModeRules>();

function probeFileSystem(stateDir: string): ModeRules {
  const base = join(stateDir, "tmp", `mode-probe-${process.pid}-${randomId128().slice(0, 12)}`);
  const link = `${base}-link`;
  try {
    ensureStateDir(stateDir);
    mkdirSync(join(stateDir, "tmp"), { recursive: true });
    writeFileSync(base, "", { mode: 0o644 });
    const before = lstatSync(base).mode;
    chmodSync(base, (before ^ 0o100) & 0o7777);
    const executableBit = lstatSync(base).mode !== before;
    let symlinks = true;
    try {
      symlinkSync("mode-probe", link);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      symlinks = !(code === "ENOSYS" || code === "EPERM" || code === "EOPNOTSUPP" || code === "ENOTSUP");
    }
    return { executableBit, symlinks };
  } catch {
    return TRUSTED;
  } finally {
    rmSync(link, { force: true });
    rmSync(base, { force: true });
  }
}

export interface ModeRules {
  executableBit: boolean;
  symlinks: boolean;
}

const TRUSTED: ModeRules = { executableBit: true, symlinks: true };

interface Asked {
  stamp: string;
  answer: Promise<ModeRules>;
  /** the answer once it is in */
  value: ModeRules | null;
}

const asked = new Map<string, Asked>();

function cacheFile(repo: RepoRoot): string {
  return join(repo.stateDir, "cache", "mode-rules.json");
}

function storedRules(repo: RepoRoot, stamp: string): ModeRules | null {
  try {
    const kept = JSON.parse(readFileSync(cacheFile(repo), "utf8")) as { stamp?: unknown; executableBit?: unknown; symlinks?: unknown };
    if (kept.stamp !== stamp || typeof kept.executableBit !== "boolean" || typeof kept.symlinks !== "boolean") return null;
    return { executableBit: kept.executableBit, symlinks: kept.symlinks };
  } catch {
    return null; // not kept yet, or unreadable: ask git
  }
}

function storeRules(repo: RepoRoot, stamp: string, rules: ModeRules): void {
  try {
    ensureStateDir(repo.stateDir);
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, cacheFile(repo), JSON.stringify({ stamp, ...rules }));
  } catch {
    // a cache only: the next process asks git again
  }
}

/**
 * The paths under the root (relative to it) whose index entry is executable (mode 100755), per version of the
 * index file; null when the index cannot be read (the caller then keeps what the disk says).
 */
export function indexExecutables(repo: RepoRoot): ReadonlySet<string> | null {
  if (!repo.gitDir) return null;
  const indexPath = join(repo.gitDir, "index");
  const identity = indexIdentity(indexPath);
  if (identity === null) return null;
  const kept = executables.get(repo.root);
  if (kept?.identity === identity) return kept.paths;
  const entries = indexEntriesOfFile(indexPath, (_flags, _extended, mode) => mode === 0o100755);
  if (entries === null || indexIdentity(indexPath) !== identity) return null;
  const prefix = repo.gitPrefix;
  const paths = new Set(entries.filter((e) => e.path.startsWith(prefix)).map((e) => e.path.slice(prefix.length)));
  executables.set(repo.root, { identity, paths });
  return paths;
}

const executables = new Map<string, { identity: string; paths: ReadonlySet<string> }>();
