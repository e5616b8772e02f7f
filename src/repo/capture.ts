import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, writeSync, type Stats } from "node:fs";
import { join } from "node:path";
import { permissionDenied } from "../core/errors";
import { blobIdFromHex, type BlobId } from "../core/hash";
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

/** Files above this are hashed and stored as streams, never loaded whole. */
const STREAM_THRESHOLD = 32 * 1024 * 1024;

/**
 * Turns candidates into manifest entries, storing every blob. Clean tracked
 * files whose git blob id is already known cost a map lookup; other clean
 * tracked files are read once, hashed with both sha256 and git's blob hash
 * (so files rewritten by git filters or eol conversion are never confused
 * with their index blob) and then copied out of git in one pack; everything
 * else goes through the stat cache and the loose store.
 */
export async function captureEntries(
  repo: RepoRoot,
  store: RepoBlobStore,
  candidates: TreeEntry[],
  opts: CaptureOptions = {},
): Promise<CaptureResult> {
  const statCache = new StatCache(repo.stateDir);
  const entries: CapturedEntry[] = [];
  const vanished: string[] = [];
  const imports: { oid: string; sha256: string; size: number }[] = [];
  const total = candidates.length;
  let lastProgress = 0;
  for (let i = 0; i < total; i++) {
    const cand = candidates[i] as TreeEntry;
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
    if (opts.onProgress && i - lastProgress >= 2000) {
      opts.onProgress(i, total);
      lastProgress = i;
    }
    if (cand.gitOid) {
      const known = store.gitMap.get(cand.gitOid);
      if (known) {
        entries.push({ path: cand.path, blob: blobIdFromHex(known.sha256), mode: cand.mode as EntryMode, size: known.size });
        continue;
      }
    }
    const abs = join(repo.root, cand.path);
    let st: Stats;
    try {
      st = lstatSync(abs);
    } catch (err) {
      if (isVanished(err)) {
        vanished.push(cand.path);
        continue;
      }
      throw fsError(err, cand.path);
    }
    const mode: EntryMode | null = st.isSymbolicLink() ? "120000" : st.isFile() ? (st.mode & 0o111 ? "100755" : "100644") : null;
    if (mode === null) {
      vanished.push(cand.path);
      continue;
    }
    if (!cand.gitOid) {
      const cached = statCache.lookup(cand.path, st);
      if (cached && (await store.loose.has(blobIdFromHex(cached)))) {
        entries.push({ path: cand.path, blob: blobIdFromHex(cached), mode, size: st.size });
        continue;
      }
    }
    const hashedAt = Date.now();
    let sha256: string;
    let gitOid: string;
    try {
      ({ sha256, gitOid } =
        mode !== "120000" && st.size > STREAM_THRESHOLD
          ? await hashLargeFile(repo, store, abs, st.size, cand.gitOid)
          : hashSmall(store, readSmall(abs, mode), cand.gitOid));
    } catch (err) {
      if (isVanished(err)) {
        vanished.push(cand.path);
        continue;
      }
      throw fsError(err, cand.path);
    }
    if (cand.gitOid && gitOid === cand.gitOid) imports.push({ oid: gitOid, sha256, size: st.size });
    else statCache.record(cand.path, st, sha256, hashedAt);
    entries.push({ path: cand.path, blob: blobIdFromHex(sha256), mode, size: st.size });
  }
  if (imports.length > 0) {
    await store.gitObjects.importFrom(repo.root, imports.map((i) => i.oid));
    store.gitMap.add(imports);
  }
  statCache.save();
  opts.onProgress?.(total, total);
  return { entries, vanished };
}

function readSmall(abs: string, mode: EntryMode): Uint8Array {
  return mode === "120000" ? readlinkSync(abs, { encoding: "buffer" }) : readFileSync(abs);
}

function gitHasher(oidHint: string | undefined): Bun.CryptoHasher {
  return new Bun.CryptoHasher(oidHint && oidHint.length === 64 ? "sha256" : "sha1");
}

/**
 * Hashes small content. When the candidate is a clean tracked file the git
 * blob hash decides whether git's object can stand for it; otherwise the
 * bytes go to the loose store.
 */
function hashSmall(store: RepoBlobStore, bytes: Uint8Array, oidHint: string | undefined): { sha256: string; gitOid: string } {
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  let gitOid = "";
  if (oidHint) {
    const h = gitHasher(oidHint);
    h.update(`blob ${bytes.length}\0`);
    h.update(bytes);
    gitOid = h.digest("hex");
  }
  if (gitOid !== oidHint) store.loose.writeKnown(blobIdFromHex(sha256), bytes);
  return { sha256, gitOid };
}

/** Streams a large file once: both hashes, and a copy into the loose store unless git holds it. */
async function hashLargeFile(
  repo: RepoRoot,
  store: RepoBlobStore,
  abs: string,
  size: number,
  oidHint: string | undefined,
): Promise<{ sha256: string; gitOid: string }> {
  const sha = new Bun.CryptoHasher("sha256");
  const gh = oidHint ? gitHasher(oidHint) : null;
  gh?.update(`blob ${size}\0`);
  const tmp = tempPath(repo.stateDir, "blob");
  const fd = openSync(tmp, "w", 0o444);
  let written = 0;
  try {
    for await (const chunk of Bun.file(abs).stream()) {
      sha.update(chunk);
      gh?.update(chunk);
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
      written += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  const sha256 = sha.digest("hex");
  const gitOid = gh && written === size ? gh.digest("hex") : "";
  const id = blobIdFromHex(sha256);
  if (gitOid === oidHint || (await store.loose.has(id))) rmSync(tmp, { force: true });
  else {
    const dest = store.loose.pathOf(id);
    mkdirSync(join(dest, ".."), { recursive: true });
    renameSync(tmp, dest);
  }
  return { sha256, gitOid };
}

function isVanished(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP";
}

function fsError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "EACCES" || code === "EPERM") return permissionDenied(`cannot read ${path}: permission denied`, { path });
  return err;
}
