import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/hash";
import { git } from "./git";
import type { RepoRoot } from "./root";
import { writeCacheFile } from "./cache-file";
import { ensureStateDir, tempPath } from "./state-dir";
import { rememberState } from "./state-memory";
import { indexIdentity } from "./index-identity";
import { headIdentity } from "./head-identity";
import { gitStatus } from "./status-index";
import { userObjectDir } from "./common-dir";

/** Spec 2.2: identifies the state of HEAD, the index and the work tree. */
export interface Fingerprint {
  head_oid: string;
  index_oid: string;
  status_hash: string;
}

export function fingerprintJson(fp: Fingerprint): string {
  return canonicalJson(fp);
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a.head_oid === b.head_oid && a.index_oid === b.index_oid && a.status_hash === b.status_hash;
}

export { STATUS_ARGS } from "./status-index";

export interface GitState {
  fingerprint: Fingerprint;
  /** Raw `git status --porcelain=v1 -z` output, reused by the tree scan. */
  status: Uint8Array;
  /**
   * When `git status` started comparing the work tree with the index, ms since the epoch (for an answer given
   * again because nothing changed since, when the status that gave it started).
   */
  statusStartedAt: number;
  /** Directories git status could not open (it warns and goes on), as it named them, without the trailing "/". */
  unreadableDirs: string[];
  /**
   * The index's identity (index-identity.ts) before the status started: a reader that pairs this status with a
   * listing of the index compares it with the identity after the listing (a status and a listing of two indexes
   * make a tree that never was: readLiveTree).
   */
  index: string | null;
}

/**
 * The three git reads run in parallel. `index_oid` is computed from a private
 * copy of the index with tree objects written to worksnap's own object
 * directory (the user's objects are reachable as an alternate), so the user's
 * `.git` is never locked nor written (DESIGN decision 7).
 */
export async function readGitState(repo: RepoRoot): Promise<GitState> {
  if (!repo.gitDir) throw new Error("readGitState needs a git root");
  const index = indexIdentity(join(repo.gitDir, "index"));
  const statusStartedAt = Date.now();
  // the status first: the longest of the three, it should not wait for the others' spawns
  const statusRead = gitStatus(repo);
  const [head, indexOid, status] = await Promise.all([readHead(repo), readIndexTree(repo), statusRead]);
  const statusHash = sha256Hex(status.stdout);
  rememberState(statusHash, { kind: "git", status: status.stdout });
  return {
    fingerprint: { head_oid: head, index_oid: indexOid, status_hash: statusHash },
    status: status.stdout,
    statusStartedAt: status.startedAt ?? statusStartedAt,
    unreadableDirs: unopenedDirectories(status.stderr)
      .filter((d) => d.startsWith(repo.gitPrefix))
      .map((d) => d.slice(repo.gitPrefix.length)),
    index,
  };
}

/** `warning: could not open directory 'x/': Permission denied` (git runs with LC_ALL=C): the directories named. */
export function unopenedDirectories(stderr: string): string[] {
  const out: string[] = [];
  for (const m of stderr.matchAll(/^warning: could not open directory '(.*)\/': /gm)) out.push(m[1] as string);
  return out;
}

/** HEAD's commit as last read per git directory, with the identity HEAD's files had then (head-identity.ts). */
const headsRead = new Map<string, { identity: string; oid: string }>();

/** HEAD's commit: asked of git unless HEAD's files are as they were when it was last asked. */
async function readHead(repo: RepoRoot): Promise<string> {
  const gitDir = repo.gitDir as string;
  const identity = headIdentity(gitDir);
  const known = headsRead.get(gitDir);
  if (identity !== null && known?.identity === identity) return known.oid;
  const r = await git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd: repo.root, okCodes: [1, 128] });
  const oid = r.code === 0 ? new TextDecoder().decode(r.stdout).trim() : "";
  // kept only when HEAD did not move while git read it (and it named a commit: an object may come later)
  if (identity !== null && oid !== "" && headIdentity(gitDir) === identity) headsRead.set(gitDir, { identity, oid });
  return oid;
}

/** The version of `.mcp/cache/index-tree.json`'s records; others are computed again. */
const INDEX_TREE_CACHE = 2;

/**
 * `index_oid` depends only on the index file's bytes, and git replaces the
 * index by renaming a new file over it, so the file's identity (inode, size,
 * timestamps) names its content: the tree is computed again only when the
 * index was rewritten.
 */
async function readIndexTree(repo: RepoRoot): Promise<string> {
  const gitDir = repo.gitDir as string;
  ensureStateDir(repo.stateDir);
  const identity = indexIdentity(join(gitDir, "index"));
  const cacheFile = join(repo.stateDir, "cache", "index-tree.json");
  if (identity !== null) {
    try {
      const cached = JSON.parse(readFileSync(cacheFile, "utf8")) as { identity: string; oid: string; v?: number };
      // `v`: earlier builds kept "" for every linked work tree (they looked for its objects in the wrong place)
      if (cached.identity === identity && cached.v === INDEX_TREE_CACHE) return cached.oid;
    } catch {
      // no cache yet
    }
  }
  const oid = await computeIndexTree(repo, gitDir);
  if (identity !== null && identity === indexIdentity(join(gitDir, "index"))) {
    mkdirSync(join(repo.stateDir, "cache"), { recursive: true });
    writeCacheFile(repo.stateDir, cacheFile, JSON.stringify({ identity, oid, v: INDEX_TREE_CACHE }));
  }
  return oid;
}

async function computeIndexTree(repo: RepoRoot, gitDir: string): Promise<string> {
  const scratchObjects = join(repo.stateDir, "git", "scratch-objects");
  if (!existsSync(scratchObjects)) mkdirSync(scratchObjects, { recursive: true });
  const indexCopy = tempPath(repo.stateDir, "index");
  const userIndex = join(gitDir, "index");
  try {
    if (existsSync(userIndex)) copyFileSync(userIndex, indexCopy);
    const env = {
      GIT_INDEX_FILE: indexCopy,
      GIT_OBJECT_DIRECTORY: scratchObjects,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: userObjectDir(gitDir),
    };
    // Exit 128 means the index cannot become a tree (unmerged entries): spec says "".
    const r = await git(["write-tree"], { cwd: repo.root, env, okCodes: [128] });
    return r.code === 0 ? new TextDecoder().decode(r.stdout).trim() : "";
  } finally {
    rmSync(indexCopy, { force: true });
  }
}
