import { closeSync, lstatSync, readSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { WorksnapError } from "../../core/errors";
import { blobIdFromHex, blobIdOf, sha256Hex } from "../../core/hash";
import { openRegular, sha256OfFile } from "../../repo/file-chunks";
import { isWithin, type RepoPath } from "../../core/repo-path";
import { type Fingerprint, sameFingerprint } from "../../repo/fingerprint";
import { indexTreeChanges, recalledState, stateEntries } from "../../repo/state-memory";
import type { Lease } from "./leases";
import type { Workspace } from "../workspace";

/**
 * The lease for a request (spec 2.3), as LeaseStore.acquire, except that a
 * lease whose fingerprint moved is refused with what moved: the files the
 * lease read that changed since (path, the blob read, the blob now) and how
 * many other paths changed, beside the current fingerprint. The client then
 * reads again only those files; when none of them changed (a commit, a build
 * writing elsewhere), a fresh lease is all it needs.
 */
export async function acquireLease(ws: Workspace, leaseId: string | undefined, live: Fingerprint): Promise<Lease> {
  if (leaseId === undefined) return ws.leases.issue(live);
  const lease = ws.leases.get(leaseId, live);
  if (sameFingerprint(lease.fingerprint, live)) return lease;
  const changes = await leaseChanges(ws, lease, live);
  throw new WorksnapError("STALE_LEASE", `lease ${lease.id} is stale: the repository changed since it was issued, and ${staleWhy(changes)}.`, {
    lease_id: lease.id,
    fingerprint: live,
    ...changes,
  });
}

export interface LeaseFileChange {
  path: string;
  /** The blob the lease read there (null: no file); absent when it read only a prefix of the file. */
  read_blob?: string | null;
  /** The length of the prefix the lease read (a line range of a large file), when that is all it read. */
  read_bytes?: number;
  /** The blob there now (null: no file); absent for a file only a prefix of which was read and compared. */
  current_blob?: string | null;
}

export interface LeaseChanges {
  /** Files the lease touched that changed since, by path (the first LEASE_CHANGES_CAP). */
  changed: LeaseFileChange[];
  changed_total: number;
  /** Touched files that were not compared (past the hashing budget): they may have changed too. */
  unchecked?: number;
  /**
   * Other paths whose state changed (git status entries, an untracked
   * directory counting once, and index entries; outside git the listing);
   * null when the state the lease was issued on is no longer remembered.
   */
  untouched_changed: number | null;
}

export const LEASE_CHANGES_CAP = 50;
/** What one STALE_LEASE may hash to compare the touched files with what they were. */
const HASH_BUDGET = { files: 5_000, bytes: 64 << 20 };

export async function leaseChanges(ws: Workspace, lease: Lease, live: Fingerprint): Promise<LeaseChanges> {
  const before = recalledState(lease.fingerprint.status_hash);
  const now = recalledState(live.status_hash);
  const was = before ? stateEntries(before) : null;
  const is = now ? stateEntries(now) : null;
  const indexMoved = lease.fingerprint.index_oid !== live.index_oid;
  const index = indexMoved ? await indexTreeChanges(ws.repo, lease.fingerprint.index_oid, live.index_oid) : new Set<string>();

  // Paths whose recorded state differs between the two states (null: not known).
  let moved: Set<string> | null = null;
  if (was && is && index) {
    moved = new Set(index);
    for (const [p, sig] of is) if (was.get(p) !== sig) moved.add(p);
    for (const p of was.keys()) if (!is.has(p)) moved.add(p);
  }
  // Dirty paths (and untracked directories) of either state: their content can change without their status changing.
  const dirty = new Set<string>([...(was?.keys() ?? []), ...(is?.keys() ?? [])]);
  const untrackedDirs = [...dirty].filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1) as RepoPath);
  const mayHaveChanged = (p: string) => moved === null || moved.has(p) || dirty.has(p) || untrackedDirs.some((d) => isWithin(p, d));

  const changed: LeaseFileChange[] = [];
  let unchecked = 0;
  let budgetFiles = HASH_BUDGET.files;
  let budgetBytes = HASH_BUDGET.bytes;
  for (const path of lease.touched.keys()) {
    if (!mayHaveChanged(path)) continue;
    const abs = join(ws.repo.root, path);
    const st = statOrNull(abs);
    const part = lease.touched.partialRead(path);
    if (part) {
      // only a prefix was read (a line range of a large file): what changed is whether that prefix did
      if (budgetFiles <= 0 || budgetBytes < part.bytes) {
        unchecked++;
        continue;
      }
      budgetFiles--;
      budgetBytes -= part.bytes;
      const prefix = st?.isFile() ? readPrefix(abs, part.bytes) : null;
      if (prefix === null) changed.push({ path, read_bytes: part.bytes, current_blob: null });
      else if (prefix.length < part.bytes || sha256Hex(prefix) !== part.sha256) changed.push({ path, read_bytes: part.bytes });
      continue;
    }
    let read: string | null | undefined;
    try {
      read = lease.touched.get(path);
    } catch {
      unchecked++;
      continue;
    }
    if (read === undefined) continue;
    if (st && st.isFile() && (budgetFiles <= 0 || budgetBytes < st.size)) {
      unchecked++;
      continue;
    }
    budgetFiles--;
    budgetBytes -= st?.size ?? 0;
    const current = currentBlob(abs, st);
    if (current !== read) changed.push({ path, read_blob: read, current_blob: current });
  }
  changed.sort((a, b) => compareUtf8(a.path, b.path));
  let untouched: number | null = null;
  if (moved) {
    untouched = 0;
    for (const p of moved) if (!lease.touched.has(p.endsWith("/") ? p.slice(0, -1) : p)) untouched++;
  }
  const out: LeaseChanges = { changed: changed.slice(0, LEASE_CHANGES_CAP), changed_total: changed.length, untouched_changed: untouched };
  if (unchecked > 0) out.unchecked = unchecked;
  return out;
}

function staleWhy(c: LeaseChanges): string {
  const others = c.untouched_changed === null ? "" : c.untouched_changed === 0 ? "" : ` and ${c.untouched_changed} path${c.untouched_changed === 1 ? "" : "s"} it did not read`;
  const unchecked = c.unchecked ? `; ${c.unchecked} of its files were not compared` : "";
  if (c.changed_total === 0) {
    return `none of the files it read changed${others ? ` (the change is in${others.slice(4)}, or in HEAD or the index)` : " (HEAD, the index or other paths moved)"}${unchecked}. Any call without lease_id gives a fresh lease; nothing needs reading again`;
  }
  const names = c.changed.slice(0, 5).map((f) => f.path).join(", ");
  const more = c.changed_total > 5 ? ` and ${c.changed_total - 5} more` : "";
  return `${c.changed_total} of the files it read changed (${names}${more})${others}${unchecked}. Read those again without lease_id`;
}

function statOrNull(abs: string) {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
}

/** The blob at a path now: a file's content, a symlink's text; null for no file (missing, a directory, a FIFO). */
function currentBlob(abs: string, st: ReturnType<typeof statOrNull>): string | null {
  try {
    if (st?.isSymbolicLink()) return blobIdOf(new Uint8Array(readlinkSync(abs, { encoding: "buffer" })));
    if (st?.isFile()) return blobIdFromHex(sha256OfFile(abs));
  } catch {
    return null;
  }
  return null;
}

/** The first `n` bytes of a regular file (fewer when it is shorter); null when it cannot be read. */
function readPrefix(abs: string, n: number): Uint8Array | null {
  let opened: { fd: number };
  try {
    opened = openRegular(abs);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.allocUnsafe(n);
    let len = 0;
    while (len < n) {
      const got = readSync(opened.fd, buf, len, n - len, len);
      if (got === 0) break;
      len += got;
    }
    return buf.subarray(0, len);
  } catch {
    return null;
  } finally {
    closeSync(opened.fd);
  }
}
