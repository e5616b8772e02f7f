import { WorksnapError, internal, invalidArgument } from "../../core/errors";
import { blobIdOfState } from "../../core/content-hash";
import { randomId128, sha256Hex } from "../../core/hash";
import { compareUtf8, searchUtf8 } from "../../core/byte-order";
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
 * The paths a lease touched, each with what was observed: a blob id, or null
 * (no file), except that a clean tracked file may be recorded by its git blob
 * id (in a search's run), which is turned into the sha256 blob id only when
 * someone reads it (a whole-tree grep touches every file, and making 100k
 * blob ids nobody may ever look at cost more than the search), and a file of
 * which only a prefix was read by its PartialRead (setPartial). The kinds of
 * value tell themselves apart: a blob id starts with "sha256:", a partial
 * read with "part:", a git id is hex.
 *
 * Two layers: a Map for paths touched one by one, and one sorted run for the
 * paths a search touched in walk order (addRun): 90,000 paths a call go into
 * two arrays instead of a Map, and are found by binary search. The Map is
 * asked first; addRun takes out of it the paths the run holds, so the newest
 * touch of a path is always the one seen.
 */
export class TouchedPaths {
  private readonly map = new Map<string, string | null>();
  /** paths in UTF-8 byte order without repeats, each with its value as the map would hold it */
  private run: { paths: string[]; values: (string | null)[] } | null = null;
  /** paths both in the map and in the run (the map's value counts): size counts them once */
  private shadowed = 0;

  constructor(private readonly resolve: IndexBlobResolver) {}

  get size(): number {
    return this.map.size + (this.run?.paths.length ?? 0) - this.shadowed;
  }

  has(path: string): boolean {
    return this.map.has(path) || this.inRun(path) >= 0;
  }

  /** The blob observed at `path` (null: no file); undefined when not touched, or when only part of it was read (partialRead). */
  get(path: string): string | null | undefined {
    const v = this.map.get(path);
    if (v !== undefined) return v === null || isBlobId(v) ? v : isPartial(v) ? undefined : this.resolved(path, v, -1);
    const i = this.inRun(path);
    if (i < 0) return undefined;
    const r = this.run!.values[i] as string | null;
    return r === null || isBlobId(r) ? r : isPartial(r) ? undefined : this.resolved(path, r, i);
  }

  /** Records that only the first `read.bytes` bytes of the file at `path` were read. */
  setPartial(path: string, read: PartialRead): void {
    this.put(path, `part:${read.bytes}:${read.sha256}`);
  }

  partialRead(path: string): PartialRead | undefined {
    const v = this.raw(path);
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
    this.put(path, blob);
    return this;
  }

  /**
   * Records many touches at once, newer than every touch before: `paths` in
   * UTF-8 byte order without repeats (a search's walk order), `values` as
   * set() takes them, or a clean tracked file's index blob id (git's, hex),
   * which the resolver must know. The arrays are kept, not copied.
   */
  addRun(paths: string[], values: (string | null)[]): void {
    if (paths.length !== values.length) throw internal("a run of touches needs one value per path");
    if (!ascending(paths)) {
      for (let i = 0; i < paths.length; i++) this.put(paths[i] as string, values[i] as string | null);
      return;
    }
    const older = this.run;
    this.run = older === null ? { paths, values } : mergeRuns(older, { paths, values });
    this.shadowed = 0;
    for (const key of [...this.map.keys()]) {
      if (searchExact(paths, key) >= 0) this.map.delete(key);
      else if (older !== null && this.inRun(key) >= 0) this.shadowed++;
    }
  }

  /** Every touched path (each once). */
  *keys(): IterableIterator<string> {
    yield* this.map.keys();
    const run = this.run;
    if (run) for (const path of run.paths) if (!this.map.has(path)) yield path;
  }

  /** Every touched path with its value: a blob id, null, or a partial read as stored (set() takes it back as it is). */
  *entries(): IterableIterator<[string, string | null]> {
    for (const [path, v] of this.map) yield [path, v === null || isBlobId(v) || isPartial(v) ? v : this.resolved(path, v, -1)];
    const run = this.run;
    if (!run) return;
    for (let i = 0; i < run.paths.length; i++) {
      const path = run.paths[i] as string;
      if (this.map.has(path)) continue;
      const v = run.values[i] as string | null;
      yield [path, v === null || isBlobId(v) || isPartial(v) ? v : this.resolved(path, v, i)];
    }
  }

  [Symbol.iterator](): IterableIterator<[string, string | null]> {
    return this.entries();
  }

  /** The value as stored, map first. */
  private raw(path: string): string | null | undefined {
    const v = this.map.get(path);
    if (v !== undefined) return v;
    const i = this.inRun(path);
    return i < 0 ? undefined : (this.run!.values[i] as string | null);
  }

  private put(path: string, value: string | null): void {
    if (this.run !== null && !this.map.has(path) && this.inRun(path) >= 0) this.shadowed++;
    this.map.set(path, value);
  }

  private inRun(path: string): number {
    return this.run === null ? -1 : searchExact(this.run.paths, path);
  }

  /** The sha256 blob id of a git id recorded at `path` (at run index `at`, or in the map when -1), kept in its place. */
  private resolved(path: string, gitOid: string, at: number): string {
    const blob = this.resolve(gitOid);
    if (blob === undefined) throw internal(`the blob store no longer knows git blob ${gitOid}, read at ${path}`, { path });
    if (at < 0) this.map.set(path, blob);
    else this.run!.values[at] = blob;
    return blob;
  }
}

/**
 * Whether `paths` are in strictly ascending order, a check on the caller's sort: the runtime's comparison (UTF-16
 * order), and compareUtf8 where it says no. UTF-16 order and byte order differ only where one path has a surrogate
 * and the other a unit of U+E000 or above at the first difference; a search's walk order, the one run there is,
 * is checked in byte order by the grep engine as it takes each file.
 */
function ascending(paths: readonly string[]): boolean {
  for (let i = 1; i < paths.length; i++) {
    const a = paths[i - 1] as string;
    const b = paths[i] as string;
    if (!(a < b) && compareUtf8(a, b) >= 0) return false;
  }
  return true;
}

/** The index of `path` in byte-ordered `paths`, or -1. */
function searchExact(paths: readonly string[], path: string): number {
  const i = searchUtf8(paths, path, identity);
  return i < paths.length && paths[i] === path ? i : -1;
}

const identity = (p: string) => p;

/** Two runs as one, byte-ordered; a path in both takes the newer value. */
function mergeRuns(older: { paths: string[]; values: (string | null)[] }, newer: { paths: string[]; values: (string | null)[] }) {
  const paths: string[] = [];
  const values: (string | null)[] = [];
  let i = 0;
  let j = 0;
  while (i < older.paths.length || j < newer.paths.length) {
    const c = i === older.paths.length ? 1 : j === newer.paths.length ? -1 : compareUtf8(older.paths[i] as string, newer.paths[j] as string);
    if (c < 0) {
      paths.push(older.paths[i] as string);
      values.push(older.values[i++] as string | null);
    } else {
      if (c === 0) i++;
      paths.push(newer.paths[j] as string);
      values.push(newer.values[j++] as string | null);
    }
  }
  return { paths, values };
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
