import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { readRegularText } from "./file-chunks";
import { git } from "./git";
import { nativeModule, statRecordsOf } from "./native";
import type { RepoRoot } from "./root";
import { perPath } from "../core/per-path";
import { commonDir, configStamp, gitConfigFiles } from "./common-dir";
import { indexIdentity } from "./index-identity";

/**
 * Whether git may convert content between the work tree and its blobs for
 * files in `dirs` (repo-relative directories, "" for the root): end-of-line
 * conversion (core.autocrlf, `text`/`eol` attributes), clean/smudge filters,
 * `ident` and `working-tree-encoding`. Apart from core.autocrlf, every one of
 * them needs an attribute, so the answer is no when core.autocrlf is off and
 * no attributes file exists: none in the index, none in the work tree in any
 * of `dirs` (any iterable, repeats allowed) or their parents, no `info/attributes`, no global or system
 * attributes file. When the answer is no, a file git reports clean holds
 * exactly its index blob's bytes.
 */
export function contentConversionPossible(repo: RepoRoot, dirs: Iterable<string>): Promise<boolean> {
  return new ConversionCheck(repo).possible(dirs);
}

/**
 * contentConversionPossible asked again and again within one capture (the read ahead, then the files it did
 * not cover): the repository-wide part (configuration, tracked and global attributes files) is read once,
 * and each directory's attributes file looked for once.
 */
export class ConversionCheck {
  private repoWide: Promise<boolean> | null = null;
  /** directories known to hold no attributes file with content (nor their parents) */
  private readonly clear = new Set<string>();
  private found = false;

  /**
   * `wholeIndex`: `git ls-files -s -v -z` of every entry of the index (run at the top of the work tree, no
   * pathspec), when the caller lists it anyway: the tracked attributes files are looked for in it instead of
   * asking git again.
   */
  constructor(
    private readonly repo: RepoRoot,
    private readonly wholeIndex?: Promise<Uint8Array>,
  ) {}

  /** Starts reading what applies to the whole repository (configuration, attributes files), before it is asked. */
  begin(): void {
    if (!this.repo.gitDir || this.repoWide) return;
    this.repoWide = repoWideKept(this.repo, this.repo.gitDir, this.wholeIndex);
    this.repoWide.catch(() => {}); // reported to whoever asks
  }

  /** possible() for the directories of these files (a run of files in one directory is one directory). */
  possibleFor(files: readonly { path: string }[]): Promise<boolean> {
    return this.possible(directoriesOf(files));
  }

  async possible(dirs: Iterable<string>): Promise<boolean> {
    const repo = this.repo;
    if (!repo.gitDir) return false;
    this.begin();
    // every directory named and those above it, each once; their attributes files looked for meanwhile
    const candidates: string[] = [];
    const named: string[] = [];
    const seen = new Set<string>();
    let last: string | null = null;
    for (const dir of dirs) {
      if (dir === last) continue; // paths come sorted, so a directory's files come together
      last = dir;
      for (let d: string | null = dir; d !== null && !seen.has(d) && !this.clear.has(d); d = d === "" ? null : dirOf(d)) {
        seen.add(d);
        named.push(d);
        candidates.push(d === "" ? ".gitattributes" : `${d}/.gitattributes`);
      }
    }
    const present = presentFiles(repo.root, candidates);
    present.catch(() => {});
    if (this.found || (await this.repoWide)) return true;
    for (const rel of await present) {
      if (hasContent(join(repo.root, rel))) {
        this.found = true;
        return true;
      }
    }
    for (const d of named) this.clear.add(d);
    return false;
  }
}

/** The last answer of repoWideConversion per root, and what it was read from. */
const repoWideAnswers = new Map<string, { key: string; sources: string[]; sourcesStamp: string; possible: boolean }>();

/**
 * repoWideConversion, kept while what it read is unchanged: the index (its tracked attributes files), git's
 * configuration files, and the attributes files it looked at (their stat data). A server asks for every
 * comparison with a commit; this spares it a `git ls-files` over the whole index each time.
 */
async function repoWideKept(repo: RepoRoot, gitDir: string, wholeIndex: Promise<Uint8Array> | undefined): Promise<boolean> {
  const key = `${indexIdentity(join(gitDir, "index"))}\0${configStamp(gitConfigFiles(gitDir))}`;
  const kept = repoWideAnswers.get(repo.root);
  if (kept && kept.key === key && configStamp(kept.sources) === kept.sourcesStamp) return kept.possible;
  const sources: string[] = [];
  const possible = await repoWideConversion(repo, gitDir, wholeIndex, sources);
  repoWideAnswers.set(repo.root, { key, sources, sourcesStamp: configStamp(sources), possible });
  return possible;
}

/** Configuration and attributes files that apply to the whole repository; `read`: the attributes files looked at. */
async function repoWideConversion(repo: RepoRoot, gitDir: string, wholeIndex: Promise<Uint8Array> | undefined, read: string[] = []): Promise<boolean> {
  // the whole index, not only the root's part: an attributes file above a root below the top applies to it too
  const askGit = () => git(["ls-files", "-z", "--", ":(top,glob)**/.gitattributes"], { cwd: repo.root }).then((r) => r.stdout.length > 0);
  const [config, indexed] = await Promise.all([
    // System config counts here: it shaped the checkout even though worksnap's own git calls ignore it.
    git(["config", "-z", "--get-regexp", "^core\\.(autocrlf|attributesfile)$"], { cwd: repo.root, okCodes: [1], env: { GIT_CONFIG_NOSYSTEM: "0" } }),
    wholeIndex ? wholeIndex.then(listsAttributesFile, askGit) : askGit(),
  ]);
  if (indexed) return true;
  let attributesFile = "";
  for (const rec of new TextDecoder().decode(config.stdout).split("\0")) {
    const nl = rec.indexOf("\n");
    if (nl < 0) continue;
    const key = rec.slice(0, nl).toLowerCase();
    const value = rec.slice(nl + 1);
    if (key === "core.autocrlf" && value.toLowerCase() !== "false") return true;
    if (key === "core.attributesfile") attributesFile = value;
  }
  // a linked work tree's git directory has no info/ of its own: git reads the common directory's
  const sources = [join(commonDir(gitDir) ?? gitDir, "info", "attributes"), globalAttributesFile(repo.root, attributesFile)];
  // the directories above a root below the top of the work tree: their attributes apply to its files too
  const above = repo.gitPrefix.split("/").filter(Boolean);
  const top = join(repo.root, ...above.map(() => ".."));
  for (let k = 0; k < above.length; k++) sources.push(join(top, ...above.slice(0, k), ".gitattributes"));
  if (!process.env.GIT_ATTR_NOSYSTEM) sources.push("/etc/gitattributes", "/usr/local/etc/gitattributes");
  read.push(...sources);
  return sources.some(hasContent);
}

/**
 * Which of `paths` (under `root`) exist: one lstat each, on the native module's threads when it is there (a
 * capture asks about every directory of the tree: 16k on the bench's release trees), else here.
 */
async function presentFiles(root: string, paths: string[]): Promise<string[]> {
  const m = nativeModule();
  if (!m || paths.length < 64) return paths.filter((p) => isThere(join(root, p)));
  const L = m.layout;
  const records = await statRecordsOf(m, root, paths);
  // a regular file, or something else that is there (hasContent decides); gone or unreachable: none
  const present: string[] = [];
  for (let k = 0; k < paths.length; k++) {
    const status = records[k * L.STAT_RECORD + L.SJ_STATUS];
    if (status === 0 || status === 4) present.push(paths[k] as string);
  }
  return present;
}

/**
 * Whether something is at `path`, as the native stat above tells it: a path below something that is no longer
 * a directory (a directory of the commit compared, now a file: ENOTDIR) or that cannot be reached is not.
 */
function isThere(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Whether a listing of `git ls-files -s -v -z` names an attributes file: a
 * path ".gitattributes" (after its tab) or ending in "/.gitattributes", at
 * any stage. A name holding a tab before ".gitattributes" counts too, which
 * only makes the answer "possible" where git's would be no.
 */
export function listsAttributesFile(listing: Uint8Array): boolean {
  const bytes = Buffer.from(listing.buffer, listing.byteOffset, listing.byteLength);
  return bytes.includes("\t.gitattributes\0") || bytes.includes("/.gitattributes\0");
}

/**
 * The directories holding these files, as dirOf names them, once per run of
 * files in one directory (sorted paths give each directory once); a file
 * whose directory is the previous file's costs no new string.
 */
export function directoriesOf(files: readonly { path: string }[]): string[] {
  const out: string[] = [];
  let last: string | null = null;
  for (const { path } of files) {
    const slash = path.lastIndexOf("/");
    if (last !== null && (slash < 0 ? last === "" : slash === last.length && path.startsWith(last))) continue;
    last = slash < 0 ? "" : path.slice(0, slash);
    out.push(last);
  }
  return out;
}

/** The repo-relative directory holding `path` ("" for the root). */
export function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}
perPath(dirOf);


function globalAttributesFile(root: string, configured: string): string {
  if (configured !== "") return configured.startsWith("~/") ? join(homedir(), configured.slice(2)) : resolve(root, configured);
  const xdg = process.env.XDG_CONFIG_HOME;
  return xdg ? join(xdg, "git", "attributes") : join(homedir(), ".config", "git", "attributes");
}

function hasContent(file: string): boolean {
  try {
    // No exception for the usual answer (no such file): this runs once per directory of the tree.
    const st = statSync(file, { throwIfNoEntry: false });
    if (st === undefined || st.size === 0) return false;
    const text = readRegularText(file);
    if (text === null) return true; // there but unreadable: it may hold attributes
    return text.split("\n").some((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
  } catch {
    return false;
  }
}
