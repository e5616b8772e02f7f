import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import { ROOT, isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import type { FileMode } from "../../core/file-mode";
import { captureEntries } from "../../repo/capture";
import type { Fingerprint } from "../../repo/fingerprint";
import type { ManifestEntry, SnapshotId } from "../../repo/manifest";
import type { Lease } from "../live/leases";
import { readLiveTree } from "../live/live-tree";
import { refuseNamedUnreadable, withoutUnreadable } from "./unreadable";
import type { Workspace } from "../workspace";

/** One file of a side: its content is in the blob store under `blob`. */
export interface SideEntry {
  path: string;
  blob: BlobId;
  mode: FileMode;
}

export type TreeSide =
  | { kind: "snapshot"; id: SnapshotId; fingerprint: Fingerprint; entries: SideEntry[] }
  | { kind: "worktree"; fingerprint: Fingerprint; entries: SideEntry[] };

export interface OpenedSides {
  from: TreeSide;
  to: TreeSide;
  /** Set when either side is the work tree. */
  lease: Lease | null;
  /**
   * What the work tree side could not read (files, and directories it could
   * not open), sorted by bytes. These paths are left out of both sides, so a
   * file that cannot be read is never reported as deleted.
   */
  unreadable: string[];
}

export interface SideArgs {
  from: string;
  to: string;
  lease_id?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export const WORKTREE = "worktree";

/**
 * Resolves the two sides of a comparison: each a stored snapshot (full id or
 * unique prefix) or "worktree". Snapshot sides cost a manifest read; the work
 * tree is scanned and captured once (blobs stored, so later reads see exactly
 * the bytes that were hashed) under a lease validated or issued here.
 */
export async function openSides(ws: Workspace, args: SideArgs, scope: RepoPath[]): Promise<OpenedSides> {
  const fromRef = parseSideRef(ws, args.from, "from");
  const toRef = parseSideRef(ws, args.to, "to");
  const needsTree = fromRef === WORKTREE || toRef === WORKTREE;
  if (!needsTree && args.lease_id !== undefined) {
    throw invalidArgument('lease_id applies only when a side is "worktree"', { arg: "lease_id" });
  }
  let live: { fingerprint: Fingerprint; entries: SideEntry[] } | null = null;
  let lease: Lease | null = null;
  let unreadable: string[] = [];
  if (needsTree) {
    const tree = await readLiveTree(ws, scope);
    lease = ws.leases.acquire(args.lease_id, tree.fingerprint);
    refuseNamedUnreadable(ws.repo, scope, tree.unreadable);
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, {
      signal: args.signal,
      onProgress: args.onProgress,
      gitComparedAt: tree.gitComparedAt,
    });
    refuseNamedUnreadable(ws.repo, scope, captured.unreadable);
    unreadable = [...tree.unreadable, ...captured.unreadable].sort(compareUtf8);
    live = { fingerprint: tree.fingerprint, entries: captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode })) };
  }
  const side = (ref: SnapshotId | typeof WORKTREE): TreeSide => {
    if (ref === WORKTREE) return { kind: "worktree", ...(live as NonNullable<typeof live>) };
    const stored = snapshotSide(ws, ref, scope);
    return unreadable.length === 0 ? stored : { ...stored, entries: withoutUnreadable(stored.entries, unreadable) };
  };
  return { from: side(fromRef), to: side(toRef), lease, unreadable };
}

export function parseSideRef(ws: Workspace, ref: unknown, argName: string): SnapshotId | typeof WORKTREE {
  if (ref === WORKTREE) return WORKTREE;
  if (typeof ref !== "string") throw invalidArgument(`${argName} must be a snapshot id or "worktree"`, { arg: argName });
  return ws.snapshots.resolve(ref, argName);
}

/** A snapshot's entries under `scope`; a manifest read, no file reads. */
export function snapshotSide(ws: Workspace, id: SnapshotId, scope: RepoPath[]): TreeSide {
  const snap = ws.snapshots.load(id);
  return { kind: "snapshot", id, fingerprint: snap.meta.fingerprint, entries: sideEntries(snap.entries, scope) };
}

export function sideEntries(entries: ManifestEntry[], scope: RepoPath[]): SideEntry[] {
  const all = scope.length === 1 && scope[0] === ROOT;
  const out: SideEntry[] = [];
  for (const e of entries) {
    if (!all && !inScope(e.path, scope)) continue;
    out.push({ path: e.path, blob: e.blob, mode: e.mode ?? "100644" });
  }
  return out;
}

export function inScope(path: string, scope: RepoPath[]): boolean {
  for (const s of scope) if (isWithin(path, s)) return true;
  return false;
}

/**
 * `paths` as a scope: default the whole tree; each entry a valid repo-relative
 * path (INVALID_ARGUMENT for `..`, absolute or `~` paths), never git's or
 * worksnap's own state (PERMISSION_DENIED).
 */
export function parseScopeArg(paths: string[] | undefined, argName = "paths"): RepoPath[] {
  if (paths === undefined) return [ROOT];
  if (!Array.isArray(paths) || paths.length === 0) throw invalidArgument(`${argName} must be a non-empty array (omit it for the whole tree)`, { arg: argName });
  const out: RepoPath[] = [];
  for (const raw of paths) {
    const p = parseRepoPath(raw, argName);
    refuseReserved(p);
    if (!out.includes(p)) out.push(p);
  }
  return out.includes(ROOT) ? [ROOT] : out;
}

export function sideName(side: TreeSide): string {
  return side.kind === "worktree" ? WORKTREE : side.id;
}
