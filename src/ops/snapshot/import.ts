import { closeSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { compareUtf8 } from "../../core/byte-order";
import { invalidArgument, notFound, type WorksnapError } from "../../core/errors";
import { hexOfBlobId, isBlobId, type BlobId } from "../../core/hash";
import { ROOT, ancestorsOf, isReservedPath, parseRepoPath } from "../../core/repo-path";
import { bundleEntryName, bundleManifestJson, BUNDLE_MANIFEST } from "../../repo/bundle";
import type { Fingerprint } from "../../repo/fingerprint";
import { manifestJson, snapshotIdOf, type ManifestEntry, type SnapshotId } from "../../repo/manifest";
import { CREATE_OPEN, type DirHandle, TreeHandles } from "../../repo/dir-handle";
import { FileBatches } from "../../repo/file-batches";
import { FsBlobStore } from "../../repo/fs-blob-store";
import { randomId128 } from "../../core/hash";
import { TarFormatError, TarReader, type TarEntryHeader } from "../../repo/tar";
import type { Workspace } from "../workspace";

export interface ImportArgs {
  /** Absolute path of the bundle: a file, a pipe or a character device (read as a stream from start to end). */
  file: string;
  /** A descriptor of the process to read the bundle from instead (the CLI's stdin for `import -`); `file` names it. */
  fd?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export interface ImportResult {
  snapshot_id: SnapshotId;
  cache_hint: "immutable";
  fingerprint: Fingerprint;
  files: number;
  bytes: number;
  /** False when this store already held the snapshot (it was verified all the same). */
  created: boolean;
}

const MANIFEST_MAX = 512 * 1024 * 1024;
/** Staged blobs are created read-only, as the loose store keeps them. */
const BLOB_PERM = 0o444;

/**
 * `worksnap snapshot import`: reads an export bundle, verifies the snapshot id
 * against the manifest and fingerprint it carries and every file against its
 * blob id, and only then stores the blobs and the snapshot. Files are staged in
 * `.mcp/tmp/` while reading; a bundle with any bad entry is refused, naming the
 * first one, and leaves the stores exactly as they were. Staging and storing
 * go through directories held open beneath the root (`.mcp` is never followed
 * through a symlink: repo/dir-handle.ts), so a `.mcp` swapped meanwhile
 * cannot carry the bundle's files out of the root.
 */
export async function importBundle(ws: Workspace, args: ImportArgs): Promise<ImportResult> {
  if (args.fd === undefined) {
    try {
      const st = statSync(args.file);
      // read from start to end once: a pipe or a character device (/dev/stdin) does as well as a file
      if (!st.isFile() && !st.isFIFO() && !st.isCharacterDevice()) throw invalidArgument(`${args.file} is ${st.isDirectory() ? "a directory" : "not a file"}`, { file: args.file });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notFound(`bundle ${args.file} does not exist`, { file: args.file });
      throw err;
    }
  }
  const handles = TreeHandles.open(ws.repo.root);
  let tmp: DirHandle;
  let staging: DirHandle;
  const stagingName = `${process.pid}-${randomId128().slice(0, 12)}-import`;
  try {
    tmp = handles.ensureDir(".mcp/tmp");
    tmp.mkdir(stagingName);
    staging = tmp.openDir(stagingName);
  } catch (err) {
    handles.close();
    throw err;
  }
  const reader = new TarReader(bundleStream(args.file, args.fd));
  const area = new StagingArea(staging, ws, handles);
  try {
    const bundle = await readManifest(reader);
    const staged = await readFiles(reader, bundle, area, args);
    const end = await reader.next();
    if (end !== null) throw refuse(end.path, `unexpected entry after the last file of the manifest`);
    if (!(await reader.trailingDataIsZero())) throw refuse("(end of archive)", "data follows the end-of-archive marker");
    const created = !ws.snapshots.has(bundle.id);
    area.publish(staged);
    await ws.snapshots.save(
      {
        snapshot_id: bundle.id,
        fingerprint: bundle.fingerprint,
        created_at: new Date().toISOString(),
        manifest_stats: { files: bundle.entries.length, bytes: staged.bytes },
        paths: [],
      },
      bundle.manifest,
    );
    return { snapshot_id: bundle.id, cache_hint: "immutable", fingerprint: bundle.fingerprint, files: bundle.entries.length, bytes: staged.bytes, created };
  } catch (err) {
    if (err instanceof TarFormatError) throw refuse(`entry #${err.entryIndex}`, err.message);
    throw err;
  } finally {
    await reader.close();
    await area.close();
    try {
      rmSync(tmp.removalPath(stagingName), { recursive: true, force: true });
    } finally {
      handles.close();
    }
  }
}

/** Bytes of the bundle read at once. */
const READ_CHUNK = 1 << 20;

/**
 * Up to a buffer of the bundle; 0 at its end. A pipe someone set non-blocking (a stdin the bundle comes
 * through) answers EAGAIN until its writer writes: wait for it. A pipe's read may return less than a buffer.
 */
async function readSome(fd: number, buf: Uint8Array): Promise<number> {
  for (;;) {
    try {
      return readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EAGAIN" || code === "EWOULDBLOCK") await Bun.sleep(2);
      else if (code !== "EINTR") throw err;
    }
  }
}

/**
 * The bundle's bytes, read on demand into three buffers taken in turn: the
 * import consumes each chunk (hashed and written, or copied) before it asks
 * for the next, and the reader copies what it keeps across chunks, so no
 * gigabyte of fresh memory is faulted in and collected for a gigabyte read.
 */
function bundleStream(file: string, given?: number): ReadableStream<Uint8Array> {
  const fd = given ?? openSync(file, "r");
  // plain Uint8Arrays, not Buffers: a Buffer's slice() is a view, and the reader's copies must be copies
  const buffers = [new Uint8Array(READ_CHUNK), new Uint8Array(READ_CHUNK), new Uint8Array(READ_CHUNK)];
  let turn = 0;
  let open = true;
  const done = () => {
    if (open && given === undefined) closeSync(fd);
    open = false;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const buf = buffers[turn++ % buffers.length] as Uint8Array;
        let n: number;
        try {
          n = await readSome(fd, buf);
        } catch (err) {
          done();
          throw err;
        }
        if (n === 0) {
          done();
          controller.close();
        } else controller.enqueue(buf.subarray(0, n));
      },
      cancel: done,
    },
    { highWaterMark: 0 },
  );
}

interface Bundle {
  id: SnapshotId;
  fingerprint: Fingerprint;
  manifest: string;
  entries: ManifestEntry[];
}

function refuse(entry: string, reason: string): WorksnapError {
  return invalidArgument(`bundle refused at ${entry}: ${reason}; nothing was imported`, { entry, reason });
}

async function readManifest(reader: TarReader): Promise<Bundle> {
  const h = await reader.next();
  if (!h) throw refuse(BUNDLE_MANIFEST, "the archive is empty");
  if (h.path !== BUNDLE_MANIFEST || h.typeflag !== "0") throw refuse(h.path, `the first entry must be the file ${BUNDLE_MANIFEST}`);
  if (h.size > MANIFEST_MAX) throw refuse(BUNDLE_MANIFEST, `${h.size} bytes is too large for a manifest`);
  const chunks: Uint8Array[] = [];
  for await (const c of reader.body(h.size)) chunks.push(c.slice());
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
    parsed = JSON.parse(text);
  } catch {
    throw refuse(BUNDLE_MANIFEST, "not valid UTF-8 JSON");
  }
  const bad = (why: string) => refuse(BUNDLE_MANIFEST, why);
  if (!isRecord(parsed)) throw bad("not a JSON object");
  const { entries: rawEntries, fingerprint: rawFp, snapshot_id: rawId } = parsed;
  if (!Array.isArray(rawEntries)) throw bad("entries is not an array");
  if (!isFingerprint(rawFp)) throw bad("fingerprint is not {head_oid, index_oid, status_hash}");
  if (typeof rawId !== "string" || !/^sha256:[0-9a-f]{64}$/.test(rawId)) throw bad("snapshot_id is not sha256:<64 hex>");
  const entries = rawEntries.map((e, i) => checkEntry(e, i));
  checkTree(entries);
  const manifest = manifestJson(entries);
  const fingerprint: Fingerprint = { head_oid: rawFp.head_oid, index_oid: rawFp.index_oid, status_hash: rawFp.status_hash };
  if (bundleManifestJson(manifest, fingerprint, rawId as SnapshotId) !== text) throw bad("not in canonical form (it was edited after export)");
  const id = snapshotIdOf(fingerprint, manifest);
  if (id !== rawId) throw bad(`snapshot_id ${rawId} does not match its manifest and fingerprint (they hash to ${id})`);
  return { id, fingerprint, manifest, entries };
}

function checkEntry(raw: unknown, i: number): ManifestEntry {
  const bad = (why: string) => refuse(BUNDLE_MANIFEST, `entries[${i}] ${why}`);
  if (!isRecord(raw)) throw bad("is not an object");
  const { path, blob, mode } = raw;
  if (Object.keys(raw).some((k) => k !== "path" && k !== "blob" && k !== "mode")) throw bad("has unknown keys");
  if (typeof path !== "string") throw bad("has no path");
  let norm: string;
  try {
    norm = parseRepoPath(path, "path");
  } catch {
    throw bad(`path ${JSON.stringify(path)} is not a valid repo-relative path`);
  }
  if (norm !== path || norm === ROOT || isReservedPath(norm)) throw bad(`path ${JSON.stringify(path)} is not a normalised file path`);
  if (!isBlobId(blob)) throw bad("blob is not sha256:<64 hex>");
  if (mode !== undefined && mode !== "100755" && mode !== "120000") throw bad(`mode ${JSON.stringify(mode)} is not 100755 or 120000`);
  return mode === undefined ? { path, blob } : { path, blob, mode };
}

/** Strictly sorted, unique, and no file is also the directory of another. */
function checkTree(entries: ManifestEntry[]): void {
  const files = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as ManifestEntry;
    if (i > 0 && compareUtf8((entries[i - 1] as ManifestEntry).path, e.path) >= 0) {
      throw refuse(BUNDLE_MANIFEST, `entries are not strictly sorted by path at ${JSON.stringify(e.path)}`);
    }
    files.add(e.path);
  }
  for (const e of entries) {
    for (const a of ancestorsOf(e.path)) if (files.has(a)) throw refuse(BUNDLE_MANIFEST, `${a} is both a file and the directory of ${e.path}`);
  }
}

interface Staged {
  /** Blobs that are new to this store, staged in the staging directory under their loose store place (fan-out/name). */
  blobs: Map<BlobId, { dir: string; name: string }>;
  bytes: number;
}

/**
 * The staging area of one import, laid out as the loose store is
 * (`<2 hex>/<62 hex>`), so that a fan-out directory the store does not have
 * yet is published whole, in one rename.
 */
class StagingArea {
  private readonly fanouts = new Map<string, DirHandle>();
  /** small blobs, written on the native threads while the bundle is read (null without the module) */
  private readonly batches: FileBatches | null;
  /** fan-out directories of the store, by their place: absent from the store when this import looked */
  private readonly absent = new Map<string, boolean>();
  /** the loose store's `blobs/sha256` directory, once looked up (null: absent) */
  private storeDir: DirHandle | null | undefined;

  constructor(
    readonly dir: DirHandle,
    private readonly ws: Workspace,
    private readonly handles: TreeHandles,
  ) {
    ws.blobs.gitMap.reload(); // once: the lookups below do not look for records added meanwhile
    this.batches = FileBatches.open(dir, BLOB_PERM);
  }

  /**
   * True when the store holds the blob: in the private git store, or loose (which refreshes its age for gc's
   * grace). Answered at once when no I/O is needed (a fan-out directory the store lacks: every blob of a first
   * import), else by a promise.
   */
  stored(id: BlobId): boolean | Promise<boolean> {
    if (this.ws.blobs.gitMap.oidKnown(hexOfBlobId(id)) !== undefined) return true;
    const { dir } = FsBlobStore.placeOf(id);
    let absent = this.absent.get(dir);
    if (absent === undefined) {
      // looked at from the store's fan-out parent: no descriptor held per fan-out directory
      const slash = dir.lastIndexOf("/");
      if (this.storeDir === undefined) this.storeDir = this.handles.dir(`.mcp/${dir.slice(0, slash)}`);
      absent = this.storeDir === null || this.storeDir.lstat(dir.slice(slash + 1)) === null;
      this.absent.set(dir, absent);
    }
    return absent ? false : this.ws.blobs.has(id);
  }

  /** A new file for the blob in its fan-out directory here, created read-only as blobs are stored. */
  create(id: BlobId): { fd: number; place: { dir: string; name: string } } {
    const { place, fanout } = this.fanoutOf(id);
    return { fd: (this.fanouts.get(fanout) as DirHandle).openFile(place.name, CREATE_OPEN, BLOB_PERM), place };
  }

  /**
   * Room for a new blob of `size` bytes in the batch being filled (FileBatches), or null when it is written
   * through create() instead (no native module, or a large blob). Fill it with put(), then commit() or drop().
   */
  reserve(id: BlobId, size: number): { place: { dir: string; name: string } } | null {
    if (!this.batches || !FileBatches.fits(size)) return null;
    const { place, fanout } = this.fanoutOf(id);
    this.batches.reserve(`${fanout}/${place.name}`, size);
    return { place };
  }

  /** Bytes of the reserved blob, `at` bytes from its start. */
  put(bytes: Uint8Array, at: number): void {
    (this.batches as FileBatches).put(bytes, at);
  }

  /** The reserved blob is to be written: null, or a promise to wait for; throws what failed in an earlier batch (a full disk). */
  commit(): Promise<void> | null {
    return (this.batches as FileBatches).commit();
  }

  drop(): void {
    this.batches?.drop();
  }

  /** Every reserved blob written; throws the first failure. */
  async finish(): Promise<void> {
    await this.batches?.finish();
  }

  /** The blob's place, its fan-out directory made here if it is the first of it. */
  private fanoutOf(id: BlobId): { place: { dir: string; name: string }; fanout: string } {
    const place = FsBlobStore.placeOf(id);
    const fanout = place.dir.slice(place.dir.lastIndexOf("/") + 1);
    if (!this.fanouts.has(fanout)) {
      this.dir.mkdir(fanout);
      this.fanouts.set(fanout, this.dir.openDir(fanout));
    }
    return { place, fanout };
  }

  /**
   * Moves the verified blobs into the loose store: a fan-out directory the
   * store lacks in one rename (never over one that appeared meanwhile), the
   * others blob by blob (write-temp -> rename-to-hash, directory to directory).
   */
  publish(staged: Staged): void {
    const byFanout = new Map<string, { dir: string; name: string }[]>();
    for (const place of staged.blobs.values()) {
      const list = byFanout.get(place.dir);
      if (list) list.push(place);
      else byFanout.set(place.dir, [place]);
    }
    let parent: DirHandle | null = null;
    for (const [dir, places] of byFanout) {
      const fanout = dir.slice(dir.lastIndexOf("/") + 1);
      const from = this.fanouts.get(fanout) as DirHandle;
      if (this.absent.get(dir)) {
        parent ??= this.handles.ensureDir(`.mcp/${dir.slice(0, dir.lastIndexOf("/"))}`);
        try {
          this.dir.rename(fanout, parent, fanout, true);
          continue;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST" && (err as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw err;
          this.handles.forget(`.mcp/${dir}`);
        }
      }
      const to = this.handles.ensureDir(`.mcp/${dir}`);
      for (const place of places) {
        if (to.lstat(place.name)) continue;
        from.rename(place.name, to, place.name);
      }
    }
  }

  /** Waits for blobs being written (nothing writes here after it), then lets the directories go. */
  async close(): Promise<void> {
    await this.batches?.close();
    for (const d of this.fanouts.values()) d.close();
    this.fanouts.clear();
    this.dir.close();
  }
}

async function readFiles(reader: TarReader, bundle: Bundle, staging: StagingArea, args: ImportArgs): Promise<Staged> {
  const staged: Staged = { blobs: new Map(), bytes: 0 };
  const total = bundle.entries.length;
  for (let i = 0; i < total; i++) {
    if (args.signal?.aborted) throw args.signal.reason ?? new Error("aborted");
    if (args.onProgress && i % 2000 === 0) args.onProgress(i, total);
    const e = bundle.entries[i] as ManifestEntry;
    const want = bundleEntryName(e.path);
    const h = await reader.next();
    if (!h) throw refuse(want, "the archive ends before this file");
    if (h.path !== want) throw refuse(h.path, `expected ${want} here (files must follow the manifest's order)`);
    checkHeader(h, e);
    let fresh = !staged.blobs.has(e.blob);
    if (fresh) {
      const stored = staging.stored(e.blob);
      fresh = !(typeof stored === "boolean" ? stored : await stored);
    }
    const size = h.typeflag === "2" ? h.linkTarget.length : h.size;
    // a small blob is copied into a batch the native threads write; a large one is written here as it is read
    const batched = fresh ? staging.reserve(e.blob, size) : null;
    const out = fresh && !batched ? staging.create(e.blob) : null;
    try {
      // a body that lies whole in the chunk read (most files) is hashed at once, without a hasher object
      const whole = h.typeflag === "2" ? h.linkTarget : reader.wholeBody();
      let hex: string;
      if (whole) {
        hex = Bun.CryptoHasher.hash("sha256", whole, "hex");
        if (batched) staging.put(whole, 0);
        else if (out) writeChunk(out.fd, whole);
      } else {
        const hasher = new Bun.CryptoHasher("sha256");
        let at = 0;
        for await (const chunk of reader.body(h.size)) {
          hasher.update(chunk);
          if (batched) staging.put(chunk, at);
          else if (out) writeChunk(out.fd, chunk);
          at += chunk.length;
        }
        hex = hasher.digest("hex");
      }
      if (`sha256:${hex}` !== e.blob) throw refuse(want, `content hashes to sha256:${hex}, not the manifest's ${e.blob}`);
    } catch (err) {
      staging.drop();
      throw err;
    } finally {
      if (out) closeSync(out.fd);
    }
    if (batched) {
      const wait = staging.commit();
      if (wait) await wait;
    }
    const place = batched?.place ?? out?.place;
    if (place) staged.blobs.set(e.blob, place);
    staged.bytes += size;
  }
  await staging.finish();
  args.onProgress?.(total, total);
  return staged;
}

function checkHeader(h: TarEntryHeader, e: ManifestEntry): void {
  const symlink = e.mode === "120000";
  if (symlink ? h.typeflag !== "2" : h.typeflag !== "0") throw refuse(h.path, `entry type ${JSON.stringify(h.typeflag)} does not match the manifest's ${symlink ? "symlink" : "file"}`);
  const mode = symlink ? 0o777 : e.mode === "100755" ? 0o755 : 0o644;
  if ((h.mode & 0o7777) !== mode) throw refuse(h.path, `mode ${(h.mode & 0o7777).toString(8)} does not match the manifest's ${mode.toString(8)}`);
}

function writeChunk(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isFingerprint(v: unknown): v is Fingerprint {
  return (
    isRecord(v) &&
    Object.keys(v).length === 3 &&
    typeof v.head_oid === "string" &&
    typeof v.index_oid === "string" &&
    typeof v.status_hash === "string"
  );
}
