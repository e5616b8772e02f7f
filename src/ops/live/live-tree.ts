import { sha256Hex } from "../../core/hash";
import { ROOT, isWithin, type RepoPath } from "../../core/repo-path";
import { type Fingerprint, type GitState, readGitState } from "../../repo/fingerprint";
import type { GitResult } from "../../repo/git";
import { knownModeRules, modeRules } from "../../repo/mode-rules";
import { walkPlainTree } from "../../repo/plain-walk";
import { rememberState } from "../../repo/state-memory";
import { type GitTreeInputs, type ScanSkips, type TreeEntry, gitTreeEntries, listingStartIdentity, literalPathspecs, readGitTreeInputs, startIndexListing } from "../../repo/tree-scan";
import { indexIdentity } from "../../repo/index-identity";
import { busy, type WorksnapError } from "../../core/errors";
import { join } from "node:path";
import { guessUntracked, listOthers } from "../../repo/untracked-guess";
import type { Workspace } from "../workspace";

export interface LiveTree {
  fingerprint: Fingerprint;
  entries: TreeEntry[];
  skipped: ScanSkips;
  /** Directories under the scope that could not be opened (permission denied), sorted by bytes. */
  unreadable: string[];
  /** When git compared the work tree with the index for this state (see captureEntries); git only. */
  gitComparedAt?: number;
  /** TreeScan.absentSkipWorktree (git only; empty elsewhere). */
  absentSkipWorktree: string[];
  /** The index listing the tree was read from (git only): the one status and listing agreed on (readLiveTree). */
  listing?: Promise<GitResult>;
}

/** The live fingerprint alone (lease validation before a write). */
export async function liveFingerprint(ws: Workspace): Promise<Fingerprint> {
  if (ws.repo.gitDir) return (await readGitState(ws.repo)).fingerprint;
  return plainFingerprint(ws);
}

/** The live state before it is turned into entries: a git tree scan's inputs, or a plain walk. */
export interface LiveInputs {
  fingerprint: Fingerprint;
  /** null outside git. */
  git: GitTreeInputs | null;
  plain: TreeEntry[];
  skipped: ScanSkips;
  /** See LiveTree.unreadable. */
  unreadable: string[];
  gitComparedAt?: number;
}

/**
 * The live fingerprint and what the candidates under `scope` are made of,
 * read together so the listing matches the state the fingerprint names.
 */
export async function readLiveInputs(
  ws: Workspace,
  scope: RepoPath[] = [ROOT],
  opts: { lazyListing?: boolean; listing?: Promise<GitResult>; state?: GitState } = {},
): Promise<LiveInputs> {
  if (ws.repo.gitDir) {
    // The git reads start together (the index listing on first use when asked to be lazy), and the untracked
    // directories of last time are listed beside them; a caller that read the state already (to choose the scope
    // from the status) passes it.
    const statePromise = opts.state ? Promise.resolve(opts.state) : readGitState(ws.repo);
    // asked beside the status, for the capture that usually follows (capture.ts)
    void modeRules(ws.repo);
    const guess = guessUntracked(ws.repo, scope, (dirs) => listOthers(ws.repo, literalPathspecs(dirs as RepoPath[])));
    const listing = opts.listing ?? (opts.lazyListing ? undefined : startIndexListing(ws.repo, scope));
    const state = await statePromise;
    const git = await readGitTreeInputs(ws.repo, state.status, scope, listing, guess);
    const unreadable = state.unreadableDirs.filter((d) => scope.some((s) => isWithin(d, s) || isWithin(s, d as RepoPath)));
    return { fingerprint: state.fingerprint, git, plain: [], skipped: git.skipped, unreadable, gitComparedAt: state.statusStartedAt };
  }
  const all = plainTree(ws, [ROOT]);
  const inScope = scope.length === 1 && scope[0] === ROOT ? all : plainTree(ws, scope);
  return {
    fingerprint: { head_oid: "", index_oid: "", status_hash: listingHash(all.entries) },
    git: null,
    plain: inScope.entries,
    skipped: all.skipped,
    unreadable: inScope.unreadable,
  };
}

export async function liveTreeOf(inputs: LiveInputs): Promise<LiveTree> {
  const { fingerprint, skipped, unreadable } = inputs;
  if (!inputs.git) return { fingerprint, entries: inputs.plain, skipped, unreadable, absentSkipWorktree: [] };
  const scan = await gitTreeEntries(inputs.git);
  return { fingerprint, entries: scan.entries, skipped: scan.skipped, unreadable, gitComparedAt: inputs.gitComparedAt, absentSkipWorktree: scan.absentSkipWorktree };
}

/**
 * The live fingerprint and the candidate files under `scope` (`listing`: the index listing for it, started already).
 *
 * In git, the files come from two reads of the index: `git status` (which files differ from it, which are
 * untracked) and its listing (the tracked files and their blobs). Another program staging or unstaging files
 * meanwhile (an editor's git view, another agent, `git add` in a terminal) can make the two read different indexes,
 * and the tree then mixes them: a file staged in one and not in the other taken as its other blob (a snapshot that
 * records what the file held before it was edited), one removed from the index in one missing altogether. So the
 * index's identity (git replaces it by a rename) is taken before either read starts and again after both end; a
 * tree read across a change is read again, INDEX_READS times at most, and then refused as BUSY
 * (`details.reason: "index_changing"`): a refusal to retry, never a tree of two indexes.
 */
export async function readLiveTree(ws: Workspace, scope: RepoPath[] = [ROOT], listing?: Promise<GitResult>): Promise<LiveTree> {
  const gitDir = ws.repo.gitDir;
  if (!gitDir) return liveTreeOf(await readLiveInputs(ws, scope, { listing }));
  const index = join(gitDir, "index");
  for (let read = 1; ; read++) {
    // a listing started by the caller: the identity when it started; else the identity before this one starts
    const started = listing === undefined ? undefined : listingStartIdentity(listing);
    const before = started !== undefined ? started : indexIdentity(index);
    const own = listing ?? startIndexListing(ws.repo, scope);
    const tree = await liveTreeOf(await readLiveInputs(ws, scope, { listing: own }));
    if (indexIdentity(index) === before) return { ...tree, listing: own };
    if (read >= INDEX_READS) throw indexChanging(read);
    listing = undefined;
    await indexSettle(read);
  }
}

/** Reads of the tree across a change of the index before one is refused. */
export const INDEX_READS = 4;

/**
 * A pause before the next read of a changing index, longer each time (20, 40, 60 ms): a program that stages files
 * one `git add` at a time is usually done within it.
 */
export function indexSettle(read: number): Promise<void> {
  return Bun.sleep(20 * read);
}

/** The refusal of a tree read while the index kept changing (readLiveTree). */
export function indexChanging(reads: number): WorksnapError {
  return busy(`the git index was replaced during each of ${reads} reads of the work tree (another program is staging or unstaging files); nothing was answered: try again`, {
    reason: "index_changing",
  });
}

/**
 * The files outside git, with their modes as git would take them there: where the file system keeps no
 * executable bit (mode-rules.ts asks it), every file is 100644, as `git add` records it on such a drive.
 */
function plainTree(ws: Workspace, scope: RepoPath[]): ReturnType<typeof walkPlainTree> {
  const walked = walkPlainTree(ws.repo.root, scope);
  if (knownModeRules(ws.repo)?.executableBit !== false) return walked;
  return { ...walked, entries: walked.entries.map((e) => (e.mode === "100755" ? { ...e, mode: "100644" } : e)) };
}

function plainFingerprint(ws: Workspace): Fingerprint {
  return { head_oid: "", index_oid: "", status_hash: listingHash(plainTree(ws, [ROOT]).entries) };
}

/** Outside git: sha256 of the sorted (mode, size, mtime, path) listing (DESIGN "Outside a git work tree"). */
function listingHash(entries: ReturnType<typeof walkPlainTree>["entries"]): string {
  const listing = entries.map((e) => `${e.mode} ${e.stat.size} ${Math.round(e.stat.mtimeMs * 1e6)} ${e.path}\0`).join("");
  const hash = sha256Hex(listing);
  rememberState(hash, { kind: "plain", listing });
  return hash;
}
