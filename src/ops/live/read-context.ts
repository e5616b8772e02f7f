import { invalidArgument } from "../../core/errors";
import { ROOT, type RepoPath } from "../../core/repo-path";
import type { Fingerprint } from "../../repo/fingerprint";
import type { GitResult } from "../../repo/git";
import type { SnapshotId } from "../../repo/manifest";
import type { StoredSnapshot } from "../../repo/snapshot-store";
import type { Lease } from "./leases";
import { type LiveTree, readLiveTree } from "./live-tree";
import type { Workspace } from "../workspace";
import { acquireLease } from "./stale-lease";

export type ReadMode = "worktree" | "snapshot";

export interface ModeArgs {
  mode: ReadMode;
  snapshot_id?: string;
  lease_id?: string;
}

export type ReadContext =
  | { mode: "snapshot"; snapshotId: SnapshotId; snapshot: StoredSnapshot }
  | { mode: "worktree"; lease: Lease; live: LiveTree };

/** The fields that make an answer one of spec section 5's two success branches. */
export type BranchFields =
  | { cache_hint: "immutable"; snapshot_id: SnapshotId }
  | { cache_hint: "until_dirty"; lease_id: string; fingerprint: Fingerprint };

/**
 * Opens the view a hybrid read works on: a stored snapshot, or the live tree
 * under a lease (validated when given, issued otherwise).
 */
export async function openReadContext(ws: Workspace, args: ModeArgs, scope: RepoPath[] = [ROOT], listing?: Promise<GitResult>): Promise<ReadContext> {
  if (args.mode === "snapshot") {
    if (args.snapshot_id === undefined) throw invalidArgument("mode \"snapshot\" needs snapshot_id", { arg: "snapshot_id" });
    if (args.lease_id !== undefined) throw invalidArgument("lease_id applies to mode \"worktree\" only", { arg: "lease_id" });
    const snapshotId = ws.snapshots.resolve(args.snapshot_id);
    return { mode: "snapshot", snapshotId, snapshot: ws.snapshots.load(snapshotId) };
  }
  if (args.mode !== "worktree") throw invalidArgument(`mode must be "worktree" or "snapshot"`, { arg: "mode" });
  if (args.snapshot_id !== undefined) throw invalidArgument("snapshot_id applies to mode \"snapshot\" only", { arg: "snapshot_id" });
  const live = await readLiveTree(ws, scope, listing);
  const lease = await acquireLease(ws, args.lease_id, live.fingerprint);
  return { mode: "worktree", lease, live };
}

export function branchFields(ctx: ReadContext): BranchFields {
  return ctx.mode === "snapshot"
    ? { cache_hint: "immutable", snapshot_id: ctx.snapshotId }
    : { cache_hint: "until_dirty", lease_id: ctx.lease.id, fingerprint: ctx.lease.fingerprint };
}
