import { compareUtf8, searchUtf8 } from "../../core/byte-order";
import { WorksnapError, invalidArgument, notFound } from "../../core/errors";
import { type BlobId, blobIdFromHex, sha256Hex } from "../../core/hash";
import { ROOT, isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import type { FileMode } from "../../core/file-mode";
import { captureEntries } from "../../repo/capture";
import { isShallow } from "../../repo/common-dir";
import { absentSkipWorktree, type SparseEntry } from "../../repo/sparse-entries";
import type { Fingerprint } from "../../repo/fingerprint";
import { type GitResult, git } from "../../repo/git";
import { checkoutForms, pathsDifferingFromWorkTree, pathsWithContentFilters, resolveCommit } from "../../repo/git-revision";
import { ConversionCheck } from "../../repo/content-conversion";
import { mergeSorted, startIndexListing, type TreeEntry } from "../../repo/tree-scan";
import type { ManifestEntry, SnapshotId } from "../../repo/manifest";
import type { Lease } from "../live/leases";
import { readLiveTree } from "../live/live-tree";
import { refuseNamedUnreadable, withoutUnreadable } from "./unreadable";
import type { Workspace } from "../workspace";
import { type CommitFiles, IndexedBlobs, commitFiles, commitListed, revisionBlobs, revisionEntries, revisionTree } from "./revision-side";
import type { RevisionEntry } from "../../repo/git-revision";
import { indexRead, revisionViaIndex } from "../../repo/revision-via-index";
import { acquireLease } from "../live/stale-lease";

/** One file of a side: its content is in the blob store under `blob`. */
export interface SideEntry {
  path: string;
  blob: BlobId;
  mode: FileMode;
}

export type TreeSide =
  | { kind: "snapshot"; id: SnapshotId; fingerprint: Fingerprint; entries: SideEntry[] }
  | { kind: "revision"; commit: string; entries: SideEntry[] }
  | { kind: "worktree"; fingerprint: Fingerprint; entries: SideEntry[] };

/** What a side argument names, before anything is read. */
export type SideRef = { kind: "worktree" } | { kind: "snapshot"; id: SnapshotId } | { kind: "revision"; commit: string };

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
 * unique prefix), a git revision, or "worktree". Snapshot sides cost a
 * manifest read, revisions a tree listing from git's objects; the work tree
 * is scanned and captured once (blobs stored, so later reads see exactly the
 * bytes that were hashed) under a lease validated or issued here.
 */
export async function openSides(ws: Workspace, args: SideArgs, scope: RepoPath[]): Promise<OpenedSides> {
  const [fromRef, toRef] = await Promise.all([resolveSideRef(ws, args.from, "from"), resolveSideRef(ws, args.to, "to")]);
  const needsTree = fromRef.kind === "worktree" || toRef.kind === "worktree";
  if (!needsTree && args.lease_id !== undefined) {
    throw invalidArgument('lease_id applies only when a side is "worktree"', { arg: "lease_id" });
  }
  let live: { fingerprint: Fingerprint; entries: SideEntry[] } | null = null;
  let candidates: TreeEntry[] = [];
  let listing: Promise<GitResult> | undefined;
  let viaIndex: Promise<RevisionEntry[] | null> | undefined;
  let indexed: IndexedBlobs | undefined;
  let lease: Lease | null = null;
  let unreadable: string[] = [];
  if (needsTree) {
    // the index listing the live tree reads is the one the sparse entries are read from too (one `git ls-files`),
    // and a commit's files are told from (revision-via-index.ts)
    const commit = fromRef.kind === "revision" ? fromRef.commit : toRef.kind === "revision" ? toRef.commit : null;
    const before = commit === null || commitListed(ws, commit, scope) ? null : indexRead(ws.repo);
    listing = ws.repo.gitDir ? startIndexListing(ws.repo, scope) : undefined;
    listing?.catch(() => undefined); // a failure is the live tree's to report
    if (listing && before && commit !== null) {
      viaIndex = revisionViaIndex(ws.repo, commit, scope, listing, before);
      viaIndex.catch(() => undefined); // the commit's tree is listed instead (commitFiles)
    }
    const tree = await readLiveTree(ws, scope, listing);
    // read again where the index changed meanwhile: the listing the tree was read from is the one to go on with
    listing = tree.listing ?? listing;
    candidates = tree.entries;
    lease = await acquireLease(ws, args.lease_id, tree.fingerprint);
    refuseNamedUnreadable(ws.repo, scope, tree.unreadable);
    const captured = await captureEntries(ws.repo, ws.blobs, tree.entries, {
      signal: args.signal,
      onProgress: args.onProgress,
      gitComparedAt: tree.gitComparedAt,
    });
    refuseNamedUnreadable(ws.repo, scope, captured.unreadable);
    unreadable = [...tree.unreadable, ...captured.unreadable].sort(compareUtf8);
    live = { fingerprint: tree.fingerprint, entries: captured.entries.map((e) => ({ path: e.path, blob: e.blob, mode: e.mode })) };
    indexed = new IndexedBlobs(tree.entries, live.entries, captured.notAsIndexed);
  }
  const refs = [fromRef, toRef] as const;
  const sides: (TreeSide | null)[] = refs.map((ref) =>
    ref.kind === "worktree" ? { kind: "worktree", ...(live as NonNullable<typeof live>) } : ref.kind === "snapshot" ? snapshotSide(ws, ref.id, scope) : null,
  );
  let sparse: SparseEntry[] | null = null;
  for (const i of [0, 1]) {
    const ref = refs[i] as SideRef;
    if (ref.kind !== "revision") continue;
    const other = sides[1 - i];
    if (refs[1 - i]?.kind === "revision" || !other) {
      sides[i] = { kind: "revision", commit: ref.commit, entries: await revisionSide(ws, ref.commit, scope, args.signal) };
      continue;
    }
    sparse ??= await absentSkipWorktree(ws.repo, scope, listing);
    const fromTree = other.kind === "worktree" ? { viaIndex, indexed } : {};
    const compared = await againstCheckout(ws, ref.commit, scope, other.entries, sparse, args.signal, fromTree);
    const revision = other.kind === "worktree" ? await asGitCompares(ws, ref.commit, compared.revision, compared.checkout, candidates, wholeIndex(ws, scope, listing)) : compared.revision;
    sides[i] = { kind: "revision", commit: ref.commit, entries: revision };
    sides[1 - i] = { ...other, entries: compared.checkout } as TreeSide;
  }
  const [from, to] = sides.map((side) => {
    const stored = side as TreeSide;
    return stored.kind === "worktree" || unreadable.length === 0 ? stored : { ...stored, entries: withoutUnreadable(stored.entries, unreadable) };
  }) as [TreeSide, TreeSide];
  return { from, to, lease, unreadable };
}

/**
 * A commit's files under `scope`: only their blobs are read (the whole tree's kept per commit when the scope is all
 * of it).
 */
async function revisionSide(ws: Workspace, commit: string, scope: RepoPath[], signal?: AbortSignal, fromTree: FromWorkTree = {}): Promise<SideEntry[]> {
  if (scope.length === 1 && scope[0] === ROOT) return revisionEntries(ws, commit, signal, fromTree.viaIndex, fromTree.indexed);
  const tree = await commitFiles(ws, commit, scope, fromTree.viaIndex);
  return revisionBlobs(ws, scoped(tree.entries, scope), signal, conversionScope(ws, commit, tree), fromTree.indexed);
}

/**
 * What a read of the work tree tells of a commit compared with it: its files, from the index listing
 * (revision-via-index.ts), and the blobs of those the capture took as their index blobs (IndexedBlobs).
 */
interface FromWorkTree {
  viaIndex?: Promise<RevisionEntry[] | null>;
  indexed?: IndexedBlobs;
}

/** Where a commit's blobs new to the blob map may be checked out: its whole tree, listed only when asked for (revisionBlobs). */
function conversionScope(ws: Workspace, commit: string, tree: CommitFiles, ...more: RevisionEntry[][]): () => Promise<RevisionEntry[][]> {
  return async () => [tree.whole ? tree.entries : await revisionTree(ws, commit), ...more];
}

/**
 * A commit compared with the work tree or a snapshot of it, where a sparse checkout leaves files out of the work
 * tree: each absent skip-worktree entry of the index (`sparse`) the checkout side does not hold is taken for what
 * the index holds, as git's status and `git diff HEAD` take it. One the commit holds alike is left out of both
 * sides (neither its blob read nor, in a partial clone, fetched); one the index holds otherwise, or the commit
 * lacks, joins the checkout side with the index's blob.
 */
async function againstCheckout(
  ws: Workspace,
  commit: string,
  scope: RepoPath[],
  checkout: SideEntry[],
  sparse: SparseEntry[],
  signal?: AbortSignal,
  fromTree: FromWorkTree = {},
): Promise<{ revision: SideEntry[]; checkout: SideEntry[] }> {
  const held = sparse.length === 0 ? null : new Set(checkout.map((e) => e.path));
  const outside = held === null ? [] : sparse.filter((e) => !held.has(e.path));
  if (outside.length === 0) return { revision: await revisionSide(ws, commit, scope, signal, fromTree), checkout };
  const tree = await commitFiles(ws, commit, scope, fromTree.viaIndex);
  const byPath = new Map(outside.map((e) => [e.path, e]));
  const alike = new Set<string>();
  const compared = scoped(tree.entries, scope).filter((e) => {
    const o = byPath.get(e.path);
    if (!o || o.oid !== e.oid || o.mode !== e.mode) return true;
    alike.add(e.path);
    return false;
  });
  const indexed = outside.filter((e) => !alike.has(e.path));
  const blobs = await revisionBlobs(ws, [...compared, ...indexed], signal, conversionScope(ws, commit, tree, indexed), fromTree.indexed);
  const added = blobs.slice(compared.length);
  return { revision: blobs.slice(0, compared.length), checkout: added.length === 0 ? checkout : mergeSorted(checkout, added) };
}

/**
 * A commit's entries against the work tree's, where git converts content between the two (eol conversion, a
 * clean filter such as Git LFS's): a tracked file whose bytes differ from the commit's, but which git compares
 * equal through its conversion (`git diff <commit>` names it not), is no change, as `git diff` and `git status`
 * take it; the commit's entry is given the work tree's blob so that the two compare equal. Only the files whose
 * bytes differ are asked about, only where conversion is possible for them, and only those holding a CR or under
 * a filter, `ident` or an encoding: elsewhere bytes decide alone, as before. Files git names are compared by
 * their bytes, as everywhere.
 */
async function asGitCompares(
  ws: Workspace,
  commit: string,
  revision: SideEntry[],
  worktree: SideEntry[],
  candidates: readonly TreeEntry[],
  index?: Promise<Uint8Array>,
): Promise<SideEntry[]> {
  const tracked = (path: string) => {
    const k = searchUtf8(candidates, path, (e) => e.path);
    return k < candidates.length && (candidates[k] as TreeEntry).path === path && (candidates[k] as TreeEntry).mode !== "";
  };
  const modified: SideEntry[] = [];
  for (let i = 0, j = 0; i < revision.length && j < worktree.length; ) {
    const a = revision[i] as SideEntry;
    const b = worktree[j] as SideEntry;
    const c = a.path === b.path ? 0 : compareUtf8(a.path, b.path);
    if (c < 0) i++;
    else if (c > 0) j++;
    else {
      if (a.blob !== b.blob && a.mode === b.mode && tracked(b.path)) modified.push(b);
      i++;
      j++;
    }
  }
  if (modified.length === 0 || !(await new ConversionCheck(ws.repo, index).possibleFor(modified))) return revision;
  // git's eol conversion only turns CR LF into LF on the way in: a file holding no CR is changed whatever it says of
  // line endings, unless a filter, `ident` or an encoding applies to it (one `git check-attr`, not a `git diff`,
  // which reads the whole index and the commit's tree: about 70 ms on 100k files)
  // (past LOOK_MAX files, as where core.autocrlf converts every file of the tree, one `git diff` over the whole tree
  // answers sooner than reading each)
  let asked = modified;
  if (modified.length <= LOOK_MAX) {
    const withCr: SideEntry[] = [];
    const withoutCr: SideEntry[] = [];
    for (const e of modified) ((await holdsCr(ws, e.blob)) ? withCr : withoutCr).push(e);
    const filtered = withoutCr.length === 0 ? new Set<string>() : await pathsWithContentFilters(ws.repo, withoutCr.map((e) => e.path));
    asked = [...withCr, ...withoutCr.filter((e) => filtered.has(e.path))];
  }
  if (asked.length === 0) return revision;
  const differing = await pathsDifferingFromWorkTree(ws.repo, commit, asked.map((e) => e.path));
  const alike = new Map(asked.filter((e) => !differing.has(e.path)).map((e) => [e.path, e.blob]));
  const changed = asked.filter((e) => differing.has(e.path));
  const checkedOut = changed.length === 0 ? new Map<string, BlobId>() : await asCheckedOut(ws, commit, revision, changed);
  if (alike.size === 0 && checkedOut.size === 0) return revision;
  return revision.map((e) => {
    const blob = alike.get(e.path) ?? checkedOut.get(e.path);
    return blob === undefined ? e : { ...e, blob };
  });
}

/** More changed files than this git converts are compared as their bytes. */
const CHECKOUT_FORM_MAX = 256;

/**
 * The commit's side of files git converts and names as changed, as git would check them out here (checkoutForms):
 * the blob of a `*.bat eol=crlf` file holds LF line ends, its file in the work tree CR LF, so the bytes differ in
 * every line, and a diff of the two showed every line changed, where `git diff` shows the edited ones. Compared in
 * the work tree's form, the diff shows what was edited and applies to the work tree as it is, and its reverse
 * gives back the file git would check out. Where the commit's blob is what git checks out (no conversion for that
 * file), or the form is the work tree's file itself, nothing changes; the form's bytes go to the loose store.
 */
async function asCheckedOut(ws: Workspace, commit: string, revision: SideEntry[], changed: SideEntry[]): Promise<Map<string, BlobId>> {
  const out = new Map<string, BlobId>();
  if (changed.length > CHECKOUT_FORM_MAX) return out;
  const forms = await checkoutForms(ws.repo, commit, changed.map((e) => e.path));
  const stored = new Map(revision.filter((e) => forms.has(e.path)).map((e) => [e.path, e.blob]));
  for (const e of changed) {
    const bytes = forms.get(e.path);
    if (bytes === undefined) continue;
    const id = blobIdFromHex(sha256Hex(bytes));
    if (id === e.blob || id === stored.get(e.path)) continue;
    ws.blobs.loose.writeKnown(id, bytes);
    out.set(e.path, id);
  }
  return out;
}

/**
 * The listing of the whole index, where the work tree's read made one (the scope is all of a root at the top of the
 * work tree): the conversion check looks for tracked attributes files in it instead of asking git over the index.
 */
function wholeIndex(ws: Workspace, scope: RepoPath[], listing: Promise<GitResult> | undefined): Promise<Uint8Array> | undefined {
  if (!listing || ws.repo.gitPrefix !== "" || scope.length !== 1 || scope[0] !== ROOT) return undefined;
  return listing.then((r) => r.stdout);
}

/** More changed files than this are put to git without being looked into first. */
const LOOK_MAX = 256;

/** Larger files are asked about without being looked into. */
const CR_LOOK_MAX = 8 << 20;

/**
 * Whether a stored blob holds a carriage return (true, unread, past CR_LOOK_MAX bytes). A changed file's blob is
 * in the loose store, where a capture puts what git does not vouch for; a lookup by sha256 in the blob map would
 * first index all of it (some 100 ms for 100k blobs).
 */
async function holdsCr(ws: Workspace, blob: BlobId): Promise<boolean> {
  const size = await ws.blobs.loose.size(blob);
  if (size === null || size > CR_LOOK_MAX) return true;
  return (await ws.blobs.loose.read(blob)).includes(13);
}


/**
 * What a side argument names, in this order: "worktree"; a snapshot id or
 * unique prefix (8+ hex digits; `sha256:` makes it a snapshot and nothing
 * else); a git revision (`git rev-parse --verify <rev>^{commit}`: HEAD,
 * HEAD~2, a branch, a tag, a commit or its prefix). A hex string that is both
 * a snapshot prefix and a commit is refused rather than guessed at, with how
 * to say which one was meant.
 */
export async function resolveSideRef(ws: Workspace, ref: unknown, argName: string): Promise<SideRef> {
  if (ref === WORKTREE) return { kind: "worktree" };
  if (typeof ref !== "string" || ref === "") {
    throw invalidArgument(`${argName} must be a snapshot id, "worktree" or a git revision`, { arg: argName });
  }
  let snapshot: SnapshotId | null = null;
  if (/^(sha256:)?[0-9a-f]{8,64}$/.test(ref)) {
    try {
      snapshot = ws.snapshots.resolve(ref, argName);
    } catch (err) {
      if (!(err instanceof WorksnapError && err.code === "NOT_FOUND") || ref.startsWith("sha256:")) throw err;
    }
    if (ref.startsWith("sha256:")) return { kind: "snapshot", id: snapshot as SnapshotId };
  }
  const commit = await resolveCommit(ws.repo, ref);
  if (snapshot !== null && commit !== null) {
    throw invalidArgument(
      `${argName} ${ref} is both a snapshot id prefix (${snapshot}) and a git commit (${commit}); pass "sha256:${ref}" for the snapshot or "${ref}^{commit}" for the commit`,
      { arg: argName, snapshot_id: snapshot, commit },
    );
  }
  if (snapshot !== null) return { kind: "snapshot", id: snapshot };
  if (commit !== null) return { kind: "revision", commit };
  const git = ws.repo.gitDir ? "a git revision" : "a git revision (this is not a git repository)";
  if (ws.repo.gitDir && (ref === "HEAD" || ref === "@") && (await unborn(ws))) {
    throw notFound(`${argName} "${ref}" names no commit yet: the repository has none (its branch is unborn); compare with a snapshot id or "worktree", or commit first`, {
      arg: argName,
      side: ref,
      reason: "unborn_head",
    });
  }
  if (ws.repo.gitDir && /[~^]|^[0-9a-f]{4,}$/.test(ref) && isShallow(ws.repo.gitDir)) {
    // CI checkouts fetch one commit by default: HEAD~1 is then no commit of this clone, though it is one of the project's
    throw notFound(
      `${argName} ${JSON.stringify(ref)} names no commit this clone holds: it is a shallow clone, and the history before its oldest commit was not fetched; fetch more of it (git fetch --deepen=N, or git fetch --unshallow) or compare with a commit it holds`,
      { arg: argName, side: ref, reason: "shallow_clone" },
    );
  }
  throw notFound(`${argName} ${JSON.stringify(ref)} names no snapshot and no commit: pass a snapshot id, "worktree" or ${git}`, { arg: argName, side: ref });
}

/** A snapshot's entries under `scope`; a manifest read, no file reads. */
export function snapshotSide(ws: Workspace, id: SnapshotId, scope: RepoPath[]): TreeSide {
  const snap = ws.snapshots.load(id);
  return { kind: "snapshot", id, fingerprint: snap.meta.fingerprint, entries: sideEntries(snap.entries, scope) };
}

/** Entries (path-sorted) under `scope`. */
function scoped<E extends { path: string }>(entries: E[], scope: RepoPath[]): E[] {
  if (scope.length === 1 && scope[0] === ROOT) return entries;
  return entries.filter((e) => inScope(e.path, scope));
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

/** A side in an answer: "worktree", the full snapshot id, or the full commit id a revision named. */
export function sideName(side: TreeSide): string {
  return side.kind === "worktree" ? WORKTREE : side.kind === "snapshot" ? side.id : side.commit;
}

/** Whether HEAD names a branch with no commit yet (a repository before its first commit). */
async function unborn(ws: Workspace): Promise<boolean> {
  const branch = await git(["symbolic-ref", "-q", "HEAD"], { cwd: ws.repo.root, okCodes: [1, 128] });
  if (branch.code !== 0) return false; // detached: HEAD names a commit, present or not
  const name = new TextDecoder().decode(branch.stdout).trim();
  return (await git(["show-ref", "-q", "--verify", name], { cwd: ws.repo.root, okCodes: [1, 128] })).code !== 0;
}
