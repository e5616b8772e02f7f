/**
 * Rule 9.2: before a review touches a file, the file must be what the history
 * says it is (the end of the record track, reapply.ts). A file that differs was
 * changed outside the history since its last recorded edit; the review stops
 * and shows the difference, unless the person chooses to discard it.
 */
import { sha256Hex } from "../../core/hash";
import { baseName, type RepoPath } from "../../core/repo-path";
import { unifiedDiff } from "../diff/unified";
import { caseKey } from "../../repo/name-case";
import type { RepoRoot } from "../../repo/root";
import { readTargetState, resolveWorktreeTarget, WorktreeAccess } from "../write/target";
import type { Content } from "./objects";

export interface DiskState {
  /** null: no file; "dir"/"other": something that is not a file is in the way. */
  state: Content | null;
  hash: string | null;
  kind: "file" | "missing" | "dir" | "other";
}

/** What the work tree holds at each of `paths`, read through directories held open for the reading. */
export async function readDisks(repo: RepoRoot, paths: readonly string[]): Promise<Map<string, DiskState>> {
  const access = new WorktreeAccess(repo);
  try {
    await access.rulesKnown;
    return new Map(paths.map((p) => [p, readDisk(access, p)]));
  } finally {
    access.close();
  }
}

/** What the work tree holds at `path`, read through the directories `access` holds. */
export function readDisk(access: WorktreeAccess, path: string): DiskState {
  const target = resolveWorktreeTarget(access, path as RepoPath, false);
  // A file's name is the history's only as it spelled it: where the file system folds case, another spelling the
  // directory holds (after a rename that changed only case) is another path, and this one is not there.
  const respelled = access.foldsCase && target.name !== baseName(path as RepoPath) && caseKey(target.path) === caseKey(path);
  if (target.kind === "missing" || respelled) return { state: null, hash: null, kind: "missing" };
  if (target.kind === "dir" || target.kind === "other") return { state: null, hash: null, kind: target.kind };
  const state = readTargetState(target)!;
  return { state, hash: sha256Hex(state.bytes), kind: "file" };
}

export interface ExternalChange {
  path: string;
  /** The last recorded hash (null: the history says there is no file). */
  expected_hash: string | null;
  /** The hash now (null: no file, or not a file). */
  current_hash: string | null;
  current_kind: DiskState["kind"];
  /** Unified diff from the recorded state to the current one, capped. */
  diff: string;
  diff_truncated: boolean;
}

const MAX_DIFF_CHARS = 20_000;

export function matchesDisk(expectedHash: string | null, disk: DiskState): boolean {
  if (expectedHash === null) return disk.kind === "missing";
  return disk.kind === "file" && disk.hash === expectedHash;
}

export function describeExternal(path: string, expected: Content | null, expectedHash: string | null, disk: DiskState): ExternalChange {
  let diff: string;
  if (disk.kind === "dir" || disk.kind === "other") diff = `${path}: a ${disk.kind === "dir" ? "directory" : "special file"} is where the history expects ${expected ? "a file" : "nothing"}\n`;
  else diff = unifiedDiff(expected ? { path, ...expected } : null, disk.state ? { path, ...disk.state } : null);
  const truncated = diff.length > MAX_DIFF_CHARS;
  return {
    path,
    expected_hash: expectedHash,
    current_hash: disk.hash,
    current_kind: disk.kind,
    diff: truncated ? `${diff.slice(0, MAX_DIFF_CHARS)}\n[... diff truncated ...]\n` : diff,
    diff_truncated: truncated,
  };
}
