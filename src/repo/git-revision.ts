import { compareUtf8 } from "../core/byte-order";
import type { FileMode } from "../core/file-mode";
import { isReservedPath } from "../core/repo-path";
import { decodePath, git, gitFailed, splitNul } from "./git";
import type { RepoRoot } from "./root";
import { tempPath } from "./state-dir";
import { type ScanSkips, WIDE, wideFrom } from "./tree-scan";

/** One file of a commit's tree, as git stores it. */
export interface RevisionEntry {
  path: string;
  mode: FileMode;
  /** git's blob id (hex). */
  oid: string;
}

export interface RevisionTree {
  entries: RevisionEntry[];
  skipped: ScanSkips;
}

/**
 * The commit a git revision names (`HEAD`, `HEAD~2`, a branch, a tag, a
 * commit or its prefix, anything `git rev-parse` reads), or null when it
 * names none (or this is not a git repository; one git can no longer open
 * is NOT_FOUND, git_dir_missing). Read-only: rev-parse takes no
 * lock and writes nothing. A name starting with "-" is never an option
 * (`--end-of-options`), and one with control characters is not a revision.
 */
export async function resolveCommit(repo: RepoRoot, rev: string): Promise<string | null> {
  if (!repo.gitDir || rev === "" || rev.startsWith("-") || /[\x00-\x1f\x7f]/.test(rev)) return null;
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { cwd: repo.root, okCodes: [1, 128] });
  // a repository git can no longer open is not a name that names nothing
  if (r.code !== 0 && /^fatal: not a git repository/m.test(r.stderr)) throw gitFailed(["rev-parse"], r.stderr, r.code);
  if (r.code !== 0) return null;
  const oid = new TextDecoder().decode(r.stdout).trim();
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid) ? oid : null;
}

/**
 * Every file of a commit's tree (`git ls-tree -r -z --full-tree`), read from
 * git's objects: nothing is checked out, no index or lock is involved. Paths
 * are sorted by UTF-8 bytes; for a root below the top of the work tree, only
 * the files under it, named from it (RepoRoot.gitPrefix). Gitlinks (submodules) are not descended into,
 * names that are not UTF-8 are skipped, both counted as a snapshot counts
 * them; paths under `.git/` or `.mcp/` are left out, as from every side.
 */
export async function listRevisionTree(repo: RepoRoot, commit: string): Promise<RevisionTree> {
  // spooled to a file and read at once, as the index listing is: 11 MB for 100k files, 10-100 ms sooner than a pipe
  const r = await git(["ls-tree", "-r", "-z", "--full-tree", commit], { cwd: repo.root, spool: tempPath(repo.stateDir, "tree") });
  return revisionRecords(r.stdout, repo.gitPrefix);
}

const MODES = new Map<string, FileMode>([
  ["100644", "100644"],
  ["100755", "100755"],
  ["120000", "120000"],
]);

/**
 * `git ls-tree -r -z` output as a commit's entries (listRevisionTree). Read as Latin-1, one character a byte, as
 * the index listing is (tree-scan.ts): the fields are ASCII, a plain ASCII name is already right, and only a name
 * holding a byte of 0x80 or more is decoded as UTF-8 on its own. git lists a tree in the order of its index, which
 * is byte order: sorted again only if the listing ever says otherwise. (100k files: 70-90 ms, where splitting it
 * into records, decoding each and sorting took 90-220.)
 */
export function revisionRecords(raw: Uint8Array, gitPrefix = ""): RevisionTree {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = bytes.toString("latin1");
  let nextWide = wideFrom(text, 0);
  const entries: RevisionEntry[] = [];
  const skipped: ScanSkips = { non_utf8: 0, submodules: 0 };
  let sorted = true;
  let last = "";
  let lastWide = false;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\0", start);
    if (end < 0) end = text.length;
    // "<mode> <type> <oid>\t<path>"
    const sp1 = text.indexOf(" ", start);
    const sp2 = sp1 < 0 || sp1 > end ? -1 : text.indexOf(" ", sp1 + 1);
    const tab = sp2 < 0 || sp2 > end ? -1 : text.indexOf("\t", sp2 + 1);
    const at = start;
    start = end + 1;
    if (tab < 0 || tab > end) continue;
    const type = text.slice(sp1 + 1, sp2);
    if (type === "commit") {
      skipped.submodules++;
      continue;
    }
    if (type !== "blob") continue;
    let path: string | null = text.slice(tab + 1, end);
    let wide = false;
    if (nextWide < end) {
      path = decodePath(bytes.subarray(tab + 1, end));
      wide = path !== null && WIDE.test(path);
      nextWide = wideFrom(text, end);
    }
    if (path === null) {
      skipped.non_utf8++;
      continue;
    }
    if (gitPrefix !== "") {
      // a root below the top of the work tree: its part of the commit, named from the root
      if (!path.startsWith(gitPrefix)) continue;
      path = path.slice(gitPrefix.length);
    }
    if (isReservedPath(path)) continue;
    if (sorted && last !== "" && (wide || lastWide ? compareUtf8(last, path) > 0 : last > path)) sorted = false;
    last = path;
    lastWide = wide;
    entries.push({ path, mode: MODES.get(text.slice(at, sp1)) ?? "100644", oid: text.slice(sp2 + 1, tab) });
  }
  if (!sorted) entries.sort((a, b) => compareUtf8(a.path, b.path));
  return { entries, skipped };
}


/** Paths per `git diff` call: command lines stay far below the system's limit. */
const DIFF_PATHS_PER_CALL = 500;

/**
 * Which of `paths` (files of the work tree git tracks, named from the root) differ between `commit` and the work
 * tree as git compares them: through the content conversion git applies on the way into the repository (eol
 * conversion, a clean filter such as Git LFS's), as `git status` does, never a smudge filter (nothing is checked
 * out or fetched). Read-only (optional locks off: the refreshed index is not written). Names only: no diff
 * driver or textconv runs.
 */
export async function pathsDifferingFromWorkTree(repo: RepoRoot, commit: string, paths: readonly string[]): Promise<Set<string>> {
  // many paths: one call over the whole tree (about 150 ms on 100k files) rather than one per batch (about 70 each)
  const specs = paths.length > DIFF_PATHS_PER_CALL ? [] : ["--", ...paths.map((p) => `:(literal)${p}`)];
  const args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--ignore-submodules=all", "--name-only", "-z", "--relative", commit, ...specs];
  const differing = new Set<string>();
  for (const rec of splitNul((await git(args, { cwd: repo.root })).stdout)) {
    const path = decodePath(rec);
    if (path !== null) differing.add(path);
  }
  return differing;
}

/**
 * Which of `paths` (named from the root) carry an attribute by which git's conversion can make of a file's bytes
 * something other than its line endings: a `filter` (Git LFS's), `ident`, `working-tree-encoding`
 * (`git check-attr`: attributes files only, nothing runs).
 */
export async function pathsWithContentFilters(repo: RepoRoot, paths: readonly string[]): Promise<Set<string>> {
  const attrs = await attributesOf(repo, paths, ["filter", "ident", "working-tree-encoding"]);
  return new Set(paths.filter((p) => [...(attrs.get(p)?.values() ?? [])].some(given)));
}

/** An attribute's value from `git check-attr` that sets it to something (not "unspecified", not "unset"). */
const given = (value: string | undefined) => value !== undefined && value !== "unspecified" && value !== "unset";

/** `names`' values for each of `paths` (named from the root), as `git check-attr` tells them: attributes files only, nothing runs. */
async function attributesOf(repo: RepoRoot, paths: readonly string[], names: string[], env?: Record<string, string>): Promise<Map<string, Map<string, string>>> {
  const attrs = new Map<string, Map<string, string>>();
  const text = new TextDecoder();
  for (let i = 0; i < paths.length; i += DIFF_PATHS_PER_CALL) {
    const r = await git(["check-attr", "-z", ...names, "--", ...paths.slice(i, i + DIFF_PATHS_PER_CALL)], { cwd: repo.root, env });
    const fields = splitNul(r.stdout);
    for (let k = 0; k + 2 < fields.length; k += 3) {
      const path = decodePath(fields[k] as Uint8Array);
      if (path === null) continue;
      const of = attrs.get(path) ?? new Map<string, string>();
      of.set(text.decode(fields[k + 1]), text.decode(fields[k + 2]));
      attrs.set(path, of);
    }
  }
  return attrs;
}

/**
 * Which of `paths` (files named from the root) git may convert on checkout, by their attributes and
 * `core.autocrlf` (`git check-attr`, `git config`: attributes files and configuration only, system's included, as
 * for the checkout): `ident` or `working-tree-encoding`; an `eol=crlf`; `text` set or `auto`; no `text` attribute
 * where core.autocrlf is true. Not `-text`, and never a file a `filter` names (its program is not run here).
 */
async function mayConvertOnCheckout(repo: RepoRoot, paths: readonly string[]): Promise<string[]> {
  const env = { GIT_CONFIG_NOSYSTEM: "0" };
  const config = await git(["config", "--type=bool", "--get", "core.autocrlf"], { cwd: repo.root, okCodes: [1, 128], env });
  const autocrlf = config.code === 0 && new TextDecoder().decode(config.stdout).trim() === "true";
  const attrs = await attributesOf(repo, paths, ["filter", "ident", "working-tree-encoding", "eol", "text"], env);
  return paths.filter((p) => {
    const a = attrs.get(p);
    if (!a || given(a.get("filter"))) return false;
    if (given(a.get("ident")) || given(a.get("working-tree-encoding"))) return true;
    const text = a.get("text");
    if (text === "unset") return false;
    if (a.get("eol") === "crlf" || text === "set" || text === "auto") return true;
    return text === "unspecified" && autocrlf;
  });
}

/**
 * The bytes of each of `paths` (files of `commit`, named from the root) as git would check them out here: its eol
 * conversion, `ident` and `working-tree-encoding` applied to the blob (`git cat-file --filters`), by this work
 * tree's attributes and configuration. Only files git may convert (mayConvertOnCheckout) are asked about; a file
 * a `filter` attribute names is never: its smudge program (Git LFS's) does not run, nothing is fetched or
 * executed. Read-only; one git a file, at most GIT_CHILDREN_MAX at once.
 */
export async function checkoutForms(repo: RepoRoot, commit: string, paths: readonly string[]): Promise<Map<string, Uint8Array>> {
  const forms = new Map<string, Uint8Array>();
  const env = { GIT_CONFIG_NOSYSTEM: "0" };
  await Promise.all(
    (await mayConvertOnCheckout(repo, paths)).map(async (path) => {
      const r = await git(["cat-file", "--filters", `${commit}:${repo.gitPrefix}${path}`], { cwd: repo.root, env });
      forms.set(path, r.stdout);
    }),
  );
  return forms;
}
