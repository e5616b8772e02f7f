import { sha256Hex } from "../core/hash";
import { ROOT, type RepoPath } from "../core/repo-path";
import { type Fingerprint, readGitState } from "../repo/fingerprint";
import { walkPlainTree } from "../repo/plain-walk";
import { type ScanSkips, type TreeEntry, scanGitTree, startIndexListing } from "../repo/tree-scan";
import type { Workspace } from "./workspace";

export interface LiveTree {
  fingerprint: Fingerprint;
  entries: TreeEntry[];
  skipped: ScanSkips;
}

/** The live fingerprint alone (lease validation before a write). */
export async function liveFingerprint(ws: Workspace): Promise<Fingerprint> {
  if (ws.repo.gitDir) return (await readGitState(ws.repo)).fingerprint;
  return plainFingerprint(ws.repo.root);
}

/**
 * The live fingerprint and the candidate files under `scope`, read together
 * so the listing matches the state the fingerprint names.
 */
export async function readLiveTree(ws: Workspace, scope: RepoPath[] = [ROOT]): Promise<LiveTree> {
  if (ws.repo.gitDir) {
    // All git reads start together; the blob map loads while they run.
    const statePromise = readGitState(ws.repo);
    const listing = startIndexListing(ws.repo, scope);
    ws.blobs.gitMap.ensureLoaded();
    const state = await statePromise;
    const scan = await scanGitTree(ws.repo, state.status, scope, listing);
    return { fingerprint: state.fingerprint, entries: scan.entries, skipped: scan.skipped };
  }
  const all = walkPlainTree(ws.repo.root, [ROOT]);
  const inScope = scope.length === 1 && scope[0] === ROOT ? all.entries : walkPlainTree(ws.repo.root, scope).entries;
  return { fingerprint: { head_oid: "", index_oid: "", status_hash: listingHash(all.entries) }, entries: inScope, skipped: all.skipped };
}

function plainFingerprint(root: string): Fingerprint {
  return { head_oid: "", index_oid: "", status_hash: listingHash(walkPlainTree(root, [ROOT]).entries) };
}

/** Outside git: sha256 of the sorted (mode, size, mtime, path) listing (DESIGN "Outside a git work tree"). */
function listingHash(entries: ReturnType<typeof walkPlainTree>["entries"]): string {
  const lines = entries.map((e) => `${e.mode} ${e.stat.size} ${Math.round(e.stat.mtimeMs * 1e6)} ${e.path}\0`);
  return sha256Hex(lines.join(""));
}
