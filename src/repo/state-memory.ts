import { join } from "node:path";
import { decodePath, git, splitNul } from "./git";
import type { RepoRoot } from "./root";
import { userObjectDir } from "./common-dir";

/**
 * The last work-tree states this process saw, by the status_hash that names
 * them: the raw `git status` output (or, outside git, the listing the hash
 * was made of). A STALE_LEASE compares the state its lease was issued on with
 * the current one to say which paths changed, without having kept anything
 * per lease. The hash names the bytes, so one memory serves every root.
 * Bounded: the most recent MAX_STATES states, none over MAX_STATE_BYTES, at
 * most MAX_TOTAL_BYTES in all; a state no longer held is simply unknown.
 */
export type StateRecord = { kind: "git"; status: Uint8Array } | { kind: "plain"; listing: string };

const MAX_STATES = 64;
const MAX_STATE_BYTES = 4 << 20;
const MAX_TOTAL_BYTES = 16 << 20;

const states = new Map<string, StateRecord>();
let total = 0;

function sizeOf(r: StateRecord): number {
  return r.kind === "git" ? r.status.length : r.listing.length;
}

export function rememberState(statusHash: string, record: StateRecord): void {
  const size = sizeOf(record);
  if (size > MAX_STATE_BYTES) return;
  const had = states.get(statusHash);
  if (had) {
    states.delete(statusHash);
    total -= sizeOf(had);
  }
  states.set(statusHash, record);
  total += size;
  for (const [hash, oldest] of states) {
    if (states.size <= MAX_STATES && total <= MAX_TOTAL_BYTES) break;
    states.delete(hash);
    total -= sizeOf(oldest);
  }
}

export function recalledState(statusHash: string): StateRecord | undefined {
  return states.get(statusHash);
}

/**
 * A state as path -> signature: git's two status letters (an untracked
 * directory is one path ending in "/"; a rename names both paths), or the
 * mode, size and mtime of a listing. Two states differ at a path when its
 * signature differs or it is in one only.
 */
export function stateEntries(r: StateRecord): Map<string, string> {
  const out = new Map<string, string>();
  if (r.kind === "plain") {
    for (const line of r.listing.split("\0")) {
      if (line === "") continue;
      const [mode, size, mtime] = line.split(" ", 3);
      out.set(line.slice(`${mode} ${size} ${mtime} `.length), `${mode} ${size} ${mtime}`);
    }
    return out;
  }
  const records = splitNul(r.status);
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Uint8Array;
    if (rec.length < 4) continue;
    const xy = String.fromCharCode(rec[0] as number, rec[1] as number);
    const path = decodePath(rec.subarray(3));
    if (path !== null) out.set(path, xy);
    if (xy[0] === "R" || xy[0] === "C") {
      const from = records[++i] ? decodePath(records[i] as Uint8Array) : null;
      if (from !== null) out.set(from, xy);
    }
  }
  return out;
}

/**
 * Paths whose index entry differs between two index trees (the fingerprint's
 * index_oid, written to worksnap's scratch object directory). null when a
 * tree is no longer there (scratch objects are pruned) or git fails.
 */
export async function indexTreeChanges(repo: RepoRoot, oldTree: string, newTree: string): Promise<Set<string> | null> {
  if (!repo.gitDir || oldTree === "" || newTree === "") return null;
  const env = {
    GIT_OBJECT_DIRECTORY: join(repo.stateDir, "git", "scratch-objects"),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: userObjectDir(repo.gitDir),
  };
  try {
    const r = await git(["diff-tree", "-r", "-z", "--no-renames", "--name-only", oldTree, newTree], { cwd: repo.root, env, okCodes: [128] });
    if (r.code !== 0) return null;
    const paths = new Set<string>();
    for (const rec of splitNul(r.stdout)) {
      const p = decodePath(rec);
      if (p !== null && p !== "") paths.add(p);
    }
    return paths;
  } catch {
    return null;
  }
}
