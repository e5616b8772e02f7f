import type { FileMode } from "../../core/file-mode";
import { posix } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound, permissionDenied, repoChanged } from "../../core/errors";
import { blobIdOf, blobMatches, type BlobId } from "../../core/hash";
import { ROOT, ancestorsOf, isReservedPath, isWithin, refuseReserved, type RepoPath } from "../../core/repo-path";
import { type ManifestEntry, type SnapshotId, manifestJson, snapshotIdOf } from "../../repo/manifest";
import { manifestStats, type SnapshotMeta, type StoredSnapshot } from "../../repo/snapshot-store";
import type { PathState } from "../write/edit-recorder";
import type { AppliedChange, ChangeStatus, WriteChange } from "../write/write-path";
import type { Workspace } from "../workspace";

/**
 * Snapshot mode of the workspace writes: the same change vocabulary as the
 * work-tree write path, applied to a stored manifest and the blob store,
 * producing a new snapshot. The disk outside `.mcp/` is never touched.
 *
 * A derived snapshot carries the fingerprint of its base snapshot: the
 * fingerprint names the git state the content was derived from, and keeping it
 * makes the derived id depend only on (base state, resulting manifest), so the
 * same edits to the same snapshot always give the same id. Its `paths` are the
 * base's plus the paths the edit created.
 *
 * Symlinks are manifest entries (mode 120000, the blob is the link text) and
 * are resolved like the work tree resolves them: directory links on the way
 * are followed, a final link is followed only for write_file; a link that
 * leaves the root (absolute, or `..` past it) is PERMISSION_DENIED.
 */
const MAX_LINK_HOPS = 40;

export interface SnapshotTarget {
  requested: RepoPath;
  path: RepoPath;
  kind: "missing" | "file" | "symlink" | "dir";
  entry: ManifestEntry | null;
}

export class SnapshotTree {
  readonly entries: Map<string, ManifestEntry>;
  private dirs: Set<string> | null = null;

  constructor(
    private readonly ws: Workspace,
    readonly base: StoredSnapshot,
  ) {
    this.entries = new Map(base.entries.map((e) => [e.path, e]));
  }

  get snapshotId(): SnapshotId {
    return this.base.meta.snapshot_id;
  }

  isDir(path: string): boolean {
    if (path === ROOT) return true;
    if (!this.dirs) {
      this.dirs = new Set();
      for (const p of this.entries.keys()) for (const a of ancestorsOf(p)) this.dirs.add(a);
    }
    return this.dirs.has(path);
  }

  /** Files under a directory (resolved path), sorted by bytes. */
  filesUnder(dir: RepoPath): RepoPath[] {
    const out: RepoPath[] = [];
    for (const p of this.entries.keys()) if (p !== dir && isWithin(p, dir)) out.push(p as RepoPath);
    return out.sort(compareUtf8);
  }

  async read(path: RepoPath): Promise<PathState> {
    const e = this.entries.get(path);
    if (!e) return null;
    return { bytes: await this.ws.blobs.read(e.blob), mode: (e.mode ?? "100644") as FileMode };
  }

  async resolve(requested: RepoPath, follow: boolean): Promise<SnapshotTarget> {
    if (requested === ROOT) throw invalidArgument("the repository root is not a file; name a path inside it", { path: requested });
    refuseReserved(requested);
    let segs = requested.split("/");
    let hops = 0;
    const hop = async (linkPath: string, rest: string[]): Promise<string[]> => {
      if (++hops > MAX_LINK_HOPS) throw permissionDenied(`${requested}: too many levels of symlinks`, { path: requested });
      const entry = this.entries.get(linkPath) as ManifestEntry;
      const text = new TextDecoder().decode(await this.ws.blobs.read(entry.blob));
      const joined = posix.normalize(posix.join(posix.dirname(linkPath), text));
      if (text.startsWith("/") || joined === ".." || joined.startsWith("../")) {
        throw permissionDenied(`${requested} resolves outside the repository root (through the symlink ${linkPath})`, { path: requested, symlink: linkPath });
      }
      const base = joined === "." ? [] : joined.split("/").filter((s) => s !== "");
      return [...base, ...rest];
    };
    for (let i = 0; i < segs.length - 1; i++) {
      const prefix = segs.slice(0, i + 1).join("/");
      const e = this.entries.get(prefix);
      if (e?.mode === "120000") {
        segs = await hop(prefix, segs.slice(i + 1));
        i = -1;
      }
    }
    let path = segs.join("/");
    let entry = this.entries.get(path) ?? null;
    if (follow && entry?.mode === "120000") {
      const target = (await hop(path, [])).join("/");
      if (target === "") throw invalidArgument(`${requested} resolves to the repository root`, { path: requested });
      const resolved = await this.resolve(target as RepoPath, true);
      if (resolved.kind === "missing") throw permissionDenied(`${requested} is a symlink whose target does not exist`, { path: requested });
      return { ...resolved, requested };
    }
    if (path === "") throw invalidArgument(`${requested} resolves to the repository root`, { path: requested });
    if (isReservedPath(path)) {
      throw permissionDenied(`${requested} resolves into ${path}, which is reserved for git and worksnap state`, { path: requested, resolved: path });
    }
    const kind: SnapshotTarget["kind"] = entry ? (entry.mode === "120000" ? "symlink" : "file") : this.isDir(path) ? "dir" : "missing";
    if (!entry) entry = null;
    return { requested, path: path as RepoPath, kind, entry };
  }
}

export interface DerivedSnapshot {
  snapshotId: SnapshotId;
  baseSnapshotId: SnapshotId;
  changes: AppliedChange[];
}

/**
 * Applies a change set to a snapshot with the work-tree write path's rules
 * (compare-and-swap, no-overwrite moves, no file where a directory must be)
 * and stores the result as a new snapshot. All or nothing: any failed check
 * throws before a snapshot is stored.
 */
export async function applyToSnapshot(ws: Workspace, tree: SnapshotTree, changes: WriteChange[]): Promise<DerivedSnapshot> {
  const next = new Map(tree.entries);
  const touched = new Set<string>();
  const claim = (t: SnapshotTarget) => {
    if (touched.has(t.path)) throw invalidArgument(`the change set touches ${t.path} more than once`, { path: t.path });
    touched.add(t.path);
  };
  const applied: AppliedChange[] = [];
  const pending: { path: RepoPath; bytes: Uint8Array; mode: FileMode }[] = [];
  for (const c of changes) {
    if (c.kind === "write") {
      const t = await tree.resolve(c.path, c.follow === true);
      claim(t);
      if (t.kind === "dir") throw invalidArgument(`${c.path} is a directory, not a file`, { path: c.path });
      const before = await tree.read(t.path);
      checkExpect(t.path, before, c.expect);
      const mode = c.mode ?? (before && before.mode !== "120000" ? before.mode : "100644");
      pending.push({ path: t.path, bytes: c.bytes, mode });
      applied.push(change(before ? "modified" : "created", t, before, { bytes: c.bytes, mode }));
    } else if (c.kind === "delete") {
      const t = await tree.resolve(c.path, false);
      claim(t);
      if (t.kind === "missing") throw notFound(`${c.path} is not in snapshot ${tree.snapshotId}`, { path: c.path, snapshot_id: tree.snapshotId });
      if (t.kind === "dir") throw invalidArgument(`${c.path} is a directory that is not empty; delete it with recursive: true`, { path: c.path });
      const before = await tree.read(t.path);
      next.delete(t.path);
      applied.push(change("deleted", t, before, null));
    } else {
      const src = await tree.resolve(c.from, false);
      if (src.kind === "missing") throw notFound(`${c.from} is not in snapshot ${tree.snapshotId}`, { path: c.from, snapshot_id: tree.snapshotId });
      if (src.kind === "dir") throw invalidArgument(`${c.from} is a directory; move its files one by one`, { path: c.from });
      const dest = await tree.resolve(c.path, false);
      if (dest.path === src.path) throw invalidArgument(`cannot move ${c.from} onto itself`, { from: c.from, to: c.path });
      claim(src);
      claim(dest);
      if (dest.kind === "dir") throw invalidArgument(`${c.path} is a directory; name the destination file path`, { path: c.path });
      const destBefore = await tree.read(dest.path);
      if (destBefore && c.overwrite !== true) {
        throw invalidArgument(`${c.path} already exists; pass overwrite: true to replace it`, { path: c.path, blob: blobIdOf(destBefore.bytes) });
      }
      const before = (await tree.read(src.path)) as NonNullable<PathState>;
      const after = { bytes: c.bytes ?? before.bytes, mode: c.mode ?? before.mode };
      next.delete(src.path);
      pending.push({ path: dest.path, ...after });
      applied.push({ ...change("renamed", dest, before, after), from: src.path });
    }
  }
  for (const p of pending) {
    const blob = await ws.blobs.write(p.bytes);
    next.set(p.path, p.mode === "100644" ? { path: p.path, blob } : { path: p.path, blob, mode: p.mode });
  }
  checkShape(next, pending.map((p) => p.path));
  const entries = [...next.values()].sort((a, b) => compareUtf8(a.path, b.path));
  const snapshotId = await store(ws, tree, next, entries, pending.map((p) => p.path));
  return { snapshotId, baseSnapshotId: tree.snapshotId, changes: applied.sort((a, b) => compareUtf8(a.path, b.path)) };
}

function change(status: ChangeStatus, t: SnapshotTarget, before: PathState, after: PathState): AppliedChange {
  return { status, path: t.path, requested: t.requested, before, after, blob: after ? blobIdOf(after.bytes) : null };
}

function checkExpect(path: string, before: PathState, expect: BlobId | null | undefined): void {
  if (expect === undefined) return;
  const current = before ? blobIdOf(before.bytes) : null;
  if (expect === null ? current === null : blobMatches(current, expect)) return;
  if (expect === null) {
    throw repoChanged(`${path} already exists in the snapshot (blob ${current}); create_only refuses to overwrite it`, { path, current_blob: current, expected_blob: null });
  }
  throw repoChanged(
    current === null ? `${path} is not in the snapshot, but expected_blob ${expect} was given` : `${path} has blob ${current} in the snapshot, not the expected ${expect}`,
    { path, current_blob: current, expected_blob: expect },
  );
}

/** A new path cannot sit below a file, nor be a file where files sit below. */
function checkShape(next: Map<string, ManifestEntry>, written: RepoPath[]): void {
  let dirs: Set<string> | null = null;
  for (const p of written) {
    for (const a of ancestorsOf(p)) {
      if (next.has(a)) throw invalidArgument(`cannot write ${p}: ${a} is a file, not a directory`, { path: p, blocking: a });
    }
    if (!dirs) {
      dirs = new Set();
      for (const k of next.keys()) for (const a of ancestorsOf(k)) dirs.add(a);
    }
    if (dirs.has(p)) throw invalidArgument(`${p} is a directory, not a file`, { path: p });
  }
}

async function store(ws: Workspace, tree: SnapshotTree, next: Map<string, ManifestEntry>, entries: ManifestEntry[], written: RepoPath[]): Promise<SnapshotId> {
  const manifest = manifestJson(entries);
  const fingerprint = tree.base.meta.fingerprint;
  const snapshotId = snapshotIdOf(fingerprint, manifest);
  if (ws.snapshots.has(snapshotId)) return snapshotId;
  // The base's byte count, corrected for every entry that changed.
  let bytes = tree.base.meta.manifest_stats.bytes;
  const sizeOf = async (e: ManifestEntry | undefined) => (e ? ((await ws.blobs.size(e.blob)) ?? 0) : 0);
  for (const [path, old] of tree.entries) {
    const now = next.get(path);
    if (now?.blob !== old.blob) bytes -= await sizeOf(old);
  }
  for (const [path, now] of next) {
    if (tree.entries.get(path)?.blob !== now.blob) bytes += await sizeOf(now);
  }
  const paths = [...new Set([...tree.base.meta.paths, ...written.filter((p) => !tree.base.meta.paths.some((b) => isWithin(p, b as RepoPath)))])].sort(compareUtf8);
  const meta: SnapshotMeta = {
    snapshot_id: snapshotId,
    fingerprint,
    created_at: new Date().toISOString(),
    // a derived snapshot still lacks what its base could not read
    manifest_stats: manifestStats(entries.length, bytes, tree.base.meta.manifest_stats.unreadable),
    paths,
  };
  await ws.snapshots.save(meta, manifest);
  return snapshotId;
}
