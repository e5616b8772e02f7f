import { WorksnapError, internal, invalidArgument } from "../../core/errors";
import { blobIdOfState } from "../../core/content-hash";
import { randomId128, sha256Hex } from "../../core/hash";
import { type Fingerprint, sameFingerprint } from "../../repo/fingerprint";

/**
 * A lease (spec 2.3): optimistic concurrency on the fingerprint a client saw.
 * Ids are 128 random bits, never counters. For every touched path the lease
 * keeps the blob it observed (null for directories and deleted paths), the
 * base for per-file staleness.
 */
export interface Lease {
  id: string;
  fingerprint: Fingerprint;
  created_at: string;
  touched: TouchedPaths;
}

/** The sha256 blob id of a git blob the store knows (GitBlobMap), if it does. */
export type IndexBlobResolver = (gitOid: string) => string | undefined;

/**
 * What a line range of a large file read (snapshot_file): its first `bytes`
 * bytes, which hash to `sha256` (hex). The read stops where the range ends,
 * so the whole file's blob is not known; the lease records exactly what was
 * read, never a blob it did not see.
 */
export interface PartialRead {
  bytes: number;
  sha256: string;
}

/**
 * The paths a lease touched, each with what was observed: a Map of path to
 * blob id (or null), except that a clean tracked file may be recorded by its
 * git blob id (setIndexBlob), which is turned into the sha256 blob id only
 * when someone reads it (a whole-tree grep touches every file, and making
 * 100k blob ids nobody may ever look at cost more than the search), and a
 * file of which only a prefix was read by its PartialRead (setPartial). The
 * kinds of value tell themselves apart: a blob id starts with "sha256:", a
 * partial read with "part:", a git id is hex.
 */
export class TouchedPaths {
  private readonly map = new Map<string, string | null>();

  constructor(private readonly resolve: IndexBlobResolver) {}

  get size(): number {
    return this.map.size;
  }

  has(path: string): boolean {
    return this.map.has(path);
  }

  /** The blob observed at `path` (null: no file); undefined when not touched, or when only part of it was read (partialRead). */
  get(path: string): string | null | undefined {
    const v = this.map.get(path);
    if (v !== undefined && v !== null && isPartial(v)) return undefined;
    return v === undefined || v === null || isBlobId(v) ? v : this.resolved(path, v);
  }

  /** Records that only the first `read.bytes` bytes of the file at `path` were read. */
  setPartial(path: string, read: PartialRead): void {
    this.map.set(path, `part:${read.bytes}:${read.sha256}`);
  }

  partialRead(path: string): PartialRead | undefined {
    const v = this.map.get(path);
    if (v === undefined || v === null || !isPartial(v)) return undefined;
    const colon = v.indexOf(":", 5);
    return { bytes: Number(v.slice(5, colon)), sha256: v.slice(colon + 1) };
  }

  /**
   * How `current` (the file's bytes now; null: no file) differs from what the
   * lease observed at `path`; null when it does not, or when the lease
   * observed no file content there. A partial read is compared on the bytes
   * it read: a change beyond them was never seen, so it is not the lease's to
   * guard (the patch's context or expected_blob guard the rest).
   */
  changedSince(path: string, current: Uint8Array | null): { read_blob: string; current_blob: string | null } | { read_bytes: number; current_blob: string | null } | null {
    const part = this.partialRead(path);
    const currentBlob = () => (current ? blobIdOfState(current) : null);
    if (part) {
      const same = current !== null && current.length >= part.bytes && sha256Hex(current.subarray(0, part.bytes)) === part.sha256;
      return same ? null : { read_bytes: part.bytes, current_blob: currentBlob() };
    }
    const seen = this.get(path);
    if (typeof seen !== "string") return null;
    const now = currentBlob();
    return now === seen ? null : { read_blob: seen, current_blob: now };
  }

  set(path: string, blob: string | null): this {
    this.map.set(path, blob);
    return this;
  }

  /** Records a clean tracked file's observed blob by its index blob id (git's, hex), which the resolver must know. */
  setIndexBlob(path: string, gitOid: string): void {
    this.map.set(path, gitOid);
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** Every touched path with its value: a blob id, null, or a partial read as stored (set() takes it back as it is). */
  *entries(): IterableIterator<[string, string | null]> {
    for (const [path, v] of this.map) yield [path, v === null || isBlobId(v) || isPartial(v) ? v : this.resolved(path, v)];
  }

  [Symbol.iterator](): IterableIterator<[string, string | null]> {
    return this.entries();
  }

  private resolved(path: string, gitOid: string): string {
    const blob = this.resolve(gitOid);
    if (blob === undefined) throw internal(`the blob store no longer knows git blob ${gitOid}, read at ${path}`, { path });
    this.map.set(path, blob);
    return blob;
  }
}

const LEASE_ID = /^lease_[0-9a-f]{32}$/;
/** What a lease_id argument may be: the id, or `lease_` and a prefix of at least LEASE_PREFIX_MIN of its hex digits. */
const LEASE_REF = /^lease_[0-9a-f]{12,32}$/;
/** Hex digits a lease prefix needs; answers written for a model show this many (48 bits, unique among 10,000 leases). */
export const LEASE_PREFIX_MIN = 12;

/**
 * Limits on what a server keeps: leases, and touched paths over all of them.
 * A whole-tree grep touches every file, and each touched path costs about
 * 150 bytes: 250,000 keeps the last two whole-tree leases of a 100k-file
 * repository (a server that kept ten grew by about 17 MB a grep, to 390 MB).
 * A lease alone over the limit is kept, whatever its size.
 */
export const LEASE_LIMITS = { leases: 10_000, touched: 250_000 };

/**
 * Leases live in memory, oldest first. When a new lease pushes the count or
 * the touched paths over LEASE_LIMITS, the oldest go; using one afterwards is
 * STALE_LEASE ("unknown"), as after a restart.
 */
/** "sha256:..." (a blob id), not a git object id (hex only). */
function isBlobId(v: string): boolean {
  return v.charCodeAt(0) === 115; // "s"
}

/** "part:..." (a partial read). */
function isPartial(v: string): boolean {
  return v.charCodeAt(0) === 112; // "p"
}

export class LeaseStore {
  private readonly leases = new Map<string, Lease>();
  /** Lease ids by their first LEASE_PREFIX_MIN hex digits, so a shortened id is found without a scan. */
  private readonly byPrefix = new Map<string, string[]>();

  constructor(
    private readonly limits = LEASE_LIMITS,
    private readonly resolve: IndexBlobResolver = () => undefined,
  ) {}

  issue(fingerprint: Fingerprint): Lease {
    const lease: Lease = {
      id: `lease_${randomId128()}`,
      fingerprint,
      created_at: new Date().toISOString(),
      touched: new TouchedPaths(this.resolve),
    };
    this.leases.set(lease.id, lease);
    const key = prefixKey(lease.id);
    this.byPrefix.set(key, [...(this.byPrefix.get(key) ?? []), lease.id]);
    let touched = 0;
    for (const l of this.leases.values()) touched += l.touched.size;
    for (const [id, oldest] of this.leases) {
      if (id === lease.id || (this.leases.size <= this.limits.leases && touched <= this.limits.touched)) break;
      touched -= oldest.touched.size;
      this.forget(id);
    }
    return lease;
  }

  private forget(id: string): void {
    this.leases.delete(id);
    const key = prefixKey(id);
    const rest = (this.byPrefix.get(key) ?? []).filter((x) => x !== id);
    if (rest.length > 0) this.byPrefix.set(key, rest);
    else this.byPrefix.delete(key);
  }

  /**
   * The lease for a request: validated against the live fingerprint when an
   * id is given (no auto-refresh), a new one otherwise.
   */
  acquire(leaseId: string | undefined, live: Fingerprint): Lease {
    if (leaseId === undefined) return this.issue(live);
    const lease = this.get(leaseId, live);
    if (!sameFingerprint(lease.fingerprint, live)) throw staleLease(lease.id, live, "the repository changed since the lease was issued");
    return lease;
  }

  /**
   * Looks a lease up without validating it: the full id or a unique prefix
   * (`lease_` and at least 12 hex digits, as compact answers show it).
   * Unknown ids are STALE_LEASE (the server may have restarted), carrying
   * `live`, the current fingerprint, as spec 2.3 requires of every
   * STALE_LEASE; a prefix that two live leases share is INVALID_ARGUMENT
   * (never a guess).
   */
  get(leaseId: string, live: Fingerprint | null = null): Lease {
    if (typeof leaseId !== "string" || !LEASE_REF.test(leaseId)) {
      throw invalidArgument(`lease_id ${JSON.stringify(leaseId)} is malformed; pass a lease_id returned by a worktree call, or omit it`, {
        arg: "lease_id",
      });
    }
    const exact = this.leases.get(leaseId);
    if (exact) return exact;
    const matches = LEASE_ID.test(leaseId) ? [] : (this.byPrefix.get(prefixKey(leaseId)) ?? []).filter((id) => id.startsWith(leaseId));
    if (matches.length > 1) {
      throw invalidArgument(`lease_id ${leaseId} matches ${matches.length} leases; pass the whole lease_id`, { arg: "lease_id" });
    }
    const lease = matches.length === 1 ? this.leases.get(matches[0] as string) : undefined;
    if (!lease) throw staleLease(leaseId, live, "the lease is unknown (expired, or issued by a server that has restarted)");
    return lease;
  }
}

function prefixKey(id: string): string {
  return id.slice(0, 6 + LEASE_PREFIX_MIN);
}

export function staleLease(leaseId: string, live: Fingerprint | null, why: string): WorksnapError {
  return new WorksnapError("STALE_LEASE", `lease ${leaseId} is stale: ${why}. Re-read what you need without lease_id to get a fresh lease.`, {
    lease_id: leaseId,
    fingerprint: live,
  });
}

export function touch(lease: Lease, path: string, blob: string | null): void {
  lease.touched.set(path, blob);
}
