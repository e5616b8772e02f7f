import { closeSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync, type Stats } from "node:fs";
import { join } from "node:path";
import { permissionDenied } from "../core/errors";
import { blobIdFromHex, type BlobId } from "../core/hash";
import { fileChunks } from "./file-chunks";
import type { HashItem, HashOutcome } from "./hash-files";
import { hashInParallel } from "./hash-pool";
import type { RepoBlobStore } from "./repo-blob-store";
import type { RepoRoot } from "./root";
import { StatCache } from "./stat-cache";
import { tempPath } from "./state-dir";
import type { TreeEntry } from "./tree-scan";

export type EntryMode = "100644" | "100755" | "120000";

export interface CapturedEntry {
  path: string;
  blob: BlobId;
  mode: EntryMode;
  size: number;
}

export interface CaptureResult {
  entries: CapturedEntry[];
  /** Candidates that disappeared between the walk and the read. */
  vanished: string[];
}

export interface CaptureOptions {
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Turns candidates into manifest entries, storing every blob.
 * - Clean tracked files whose git blob id is in the map cost a lookup.
 * - Other clean tracked files are read once on every core and hashed with
 *   sha256 and git's blob hash; meanwhile their git objects are copied into
 *   the private store. Only files whose bytes hash to their index blob id are
 *   entered in the map, so eol conversion or filters never confuse the two.
 * - Everything else goes through the stat cache and the loose store.
 */
export async function captureEntries(repo: RepoRoot, store: RepoBlobStore, candidates: TreeEntry[], opts: CaptureOptions = {}): Promise<CaptureResult> {
  const statCache = new StatCache(repo.stateDir);
  const slots: (CapturedEntry | null)[] = new Array(candidates.length).fill(null);
  const vanished: string[] = [];
  const toRead: HashItem[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const cand = candidates[i] as TreeEntry;
    if (cand.gitOid) {
      const known = store.gitMap.get(cand.gitOid);
      if (known) slots[i] = { path: cand.path, blob: blobIdFromHex(known.sha256), mode: cand.mode as EntryMode, size: known.size };
      else toRead.push({ index: i, path: cand.path, gitOid: cand.gitOid, mode: cand.mode });
      continue;
    }
    const cached = cachedEntry(repo, store, statCache, cand.path);
    if (cached === "vanished") vanished.push(cand.path);
    else if (cached) slots[i] = cached;
    else toRead.push({ index: i, path: cand.path });
  }
  const alreadyKnown = candidates.length - toRead.length;
  opts.onProgress?.(alreadyKnown, candidates.length);
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");

  const gitItems = toRead.filter((t) => t.gitOid);
  const importing = store.gitObjects.importFrom(repo, [...new Set(gitItems.map((t) => t.gitOid as string))]);
  const outcomes = await hashInParallel(repo.root, repo.stateDir, toRead, (n) => opts.onProgress?.(alreadyKnown + n, candidates.length));
  const imports: { oid: string; sha256: string; size: number }[] = [];
  for (const o of outcomes) {
    const cand = candidates[o.index] as TreeEntry;
    if (o.kind === "vanished") {
      vanished.push(cand.path);
      continue;
    }
    if (o.kind === "denied") throw permissionDenied(`cannot read ${cand.path}: permission denied`, { path: cand.path });
    const done = o.kind === "large" ? await hashLargeFile(repo, store, cand) : o;
    if (done === null) {
      vanished.push(cand.path);
      continue;
    }
    slots[o.index] = { path: cand.path, blob: blobIdFromHex(done.sha256), mode: done.mode, size: done.size };
    if (cand.gitOid && done.gitOid === cand.gitOid) imports.push({ oid: cand.gitOid, sha256: done.sha256, size: done.size });
    else statCache.record(cand.path, done, done.sha256, done.hashedAt);
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
  }
  await importing;
  store.gitMap.add(imports);
  statCache.save();
  opts.onProgress?.(candidates.length, candidates.length);
  vanished.sort();
  return { entries: slots.filter((s): s is CapturedEntry => s !== null), vanished };
}

function cachedEntry(repo: RepoRoot, store: RepoBlobStore, statCache: StatCache, path: string): CapturedEntry | "vanished" | null {
  let st: Stats;
  try {
    st = lstatSync(join(repo.root, path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "vanished";
    if (code === "EACCES" || code === "EPERM") throw permissionDenied(`cannot read ${path}: permission denied`, { path });
    throw err;
  }
  const mode: EntryMode | null = st.isSymbolicLink() ? "120000" : st.isFile() ? (st.mode & 0o111 ? "100755" : "100644") : null;
  if (mode === null) return "vanished";
  const hex = statCache.lookup(path, st);
  if (!hex || !existsLoose(store, hex)) return null;
  return { path, blob: blobIdFromHex(hex), mode, size: st.size };
}

function existsLoose(store: RepoBlobStore, hex: string): boolean {
  try {
    lstatSync(store.loose.pathOf(blobIdFromHex(hex)));
    return true;
  } catch {
    return false;
  }
}

type Hashed = Extract<HashOutcome, { kind: "ok" }>;

/**
 * Streams a large file: both hashes in one pass. A clean tracked file whose
 * bytes are its index blob needs nothing more (git holds it); anything else is
 * copied into the loose store by a second, verified pass.
 */
async function hashLargeFile(repo: RepoRoot, store: RepoBlobStore, cand: TreeEntry): Promise<Hashed | null> {
  const abs = join(repo.root, cand.path);
  let st: Stats;
  try {
    st = lstatSync(abs);
  } catch {
    return null;
  }
  const hashedAt = Date.now();
  const sha = new Bun.CryptoHasher("sha256");
  const gh = cand.gitOid ? new Bun.CryptoHasher(cand.gitOid.length === 64 ? "sha256" : "sha1") : null;
  gh?.update(`blob ${st.size}\0`);
  let size = 0;
  try {
    for (const chunk of fileChunks(abs)) {
      sha.update(chunk);
      gh?.update(chunk);
      size += chunk.length;
    }
  } catch (err) {
    return readFailure(err, cand.path);
  }
  const sha256 = sha.digest("hex");
  const gitOid = gh && size === st.size ? gh.digest("hex") : "";
  const id = blobIdFromHex(sha256);
  if (gitOid !== cand.gitOid && !(await store.loose.has(id))) {
    const copied = await copyIntoLooseStore(repo, store, abs, id);
    if (!copied) return null; // changed while being read: the next capture sees it
  }
  const mode = st.mode & 0o111 ? "100755" : "100644";
  return { index: -1, kind: "ok", sha256, gitOid, mode, size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hashedAt };
}

/** Copies a file into the loose store under `id`, only if the copied bytes really hash to it. */
async function copyIntoLooseStore(repo: RepoRoot, store: RepoBlobStore, abs: string, id: BlobId): Promise<boolean> {
  const tmp = tempPath(repo.stateDir, "blob");
  const fd = openSync(tmp, "w", 0o444);
  const sha = new Bun.CryptoHasher("sha256");
  try {
    for (const chunk of fileChunks(abs)) {
      sha.update(chunk);
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
    }
  } finally {
    closeSync(fd);
  }
  if (`sha256:${sha.digest("hex")}` !== id) {
    rmSync(tmp, { force: true });
    return false;
  }
  const dest = store.loose.pathOf(id);
  mkdirSync(join(dest, ".."), { recursive: true });
  renameSync(tmp, dest);
  return true;
}

function readFailure(err: unknown, path: string): null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return null;
  if (code === "EACCES" || code === "EPERM") throw permissionDenied(`cannot read ${path}: permission denied`, { path });
  throw err;
}
