/**
 * How git takes a file's mode from the work tree in this repository, which a capture follows (capture.ts,
 * `EntryFold.gitMode`, after git's `ce_mode_from_stat`), so a snapshot holds the modes git sees:
 * - `core.fileMode` (true unless set false: git sets it false when `git init` or a clone finds the executable bit
 *   unusable, on FAT or exFAT, some network mounts, Windows drives under WSL, where every file may read as
 *   executable): where false, a tracked file keeps its mode from the index whatever the file says, and a new
 *   file is 100644; otherwise every file changed there would show a change of mode git does not see;
 * - `core.symlinks` (true unless set false): where false, git checks a symlink out as a plain file holding the
 *   link's text and keeps the entry's mode 120000 for it.
 * A directory outside git trusts both. Asked of git in one `git config` (system configuration included, as git
 * would read it for the user) once per version of the configuration files, and kept per root; reading the live
 * tree starts the question beside the status, so a capture finds it answered.
 */
import { configStamp, gitConfigFiles } from "./common-dir";
import { git } from "./git";
import type { RepoRoot } from "./root";

/** Whether git trusts the file system's executable bit (`core.fileMode`). */
export function executableBitTrusted(repo: RepoRoot): Promise<boolean> {
  return modeRules(repo).then((r) => r.executableBit);
}

/** Both rules for the repository (see above). */
export function modeRules(repo: RepoRoot): Promise<ModeRules> {
  if (!repo.gitDir) return Promise.resolve(TRUSTED);
  const stamp = configStamp(gitConfigFiles(repo.gitDir));
  const known = asked.get(repo.root);
  if (known && known.stamp === stamp) return known.answer;
  const answer = git(["config", "--bool", "--get-regexp", "^core\\.(filemode|symlinks)$"], { cwd: repo.root, okCodes: [1], env: { GIT_CONFIG_NOSYSTEM: "0" } }).then(
    (r) => {
      const rules = { ...TRUSTED };
      for (const line of new TextDecoder().decode(r.stdout).split("\n")) {
        const [key, value] = line.trim().toLowerCase().split(/\s+/);
        if (key === "core.filemode") rules.executableBit = value !== "false";
        if (key === "core.symlinks") rules.symlinks = value !== "false";
      }
      return rules;
    },
    () => TRUSTED,
  );
  asked.set(repo.root, { stamp, answer });
  return answer;
}

export interface ModeRules {
  executableBit: boolean;
  symlinks: boolean;
}

const TRUSTED: ModeRules = { executableBit: true, symlinks: true };

const asked = new Map<string, { stamp: string; answer: Promise<ModeRules> }>();
