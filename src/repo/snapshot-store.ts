import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical-json";
import { invalidArgument, isMissingPath, notFound } from "../core/errors";
import { StagedFile, writeFilesAtomic } from "./atomic-write";
import { AtomicFileWriter } from "./atomic-stream";
import type { CapturedEntry } from "./capture";
import type { Fingerprint } from "./fingerprint";
import { ManifestEncoder, snapshotIdPrefix, type ManifestEntry, type SnapshotId } from "./manifest";
import { parseManifestEntries } from "./manifest-parse";

/** A manifest being encoded and written as its entries come (SnapshotStore.manifestWriter). */
export interface ManifestWriter {
  /** The next entry, in path order. */
  add(entry: CapturedEntry): void;
  /** No more entries: the file staged for save, and the snapshot's id. */
  end(): { staged: StagedFile; id: Promise<SnapshotId> };
  /** Drops what was written. */
  abort(): void;
}

/** Bytes of a manifest encoded before they are handed to the writer thread. */
const MANIFEST_CHUNK = 1 << 20;
/** Bytes of a manifest the writer thread writes between two syncs (AtomicFileWriter's durableSteps). */
const MANIFEST_SYNC_STEP = 2 << 20;

/**
 * What a manifest holds. `unreadable` is there (and above 0) only when the
 * capture skipped files it could not read (permission denied, FIFOs...), so
 * such a snapshot is never taken for a full capture of its paths.
 */
export interface ManifestStats {
  files: number;
  bytes: number;
  unreadable?: number;
}

export function manifestStats(files: number, bytes: number, unreadable = 0): ManifestStats {
  return unreadable > 0 ? { files, bytes, unreadable } : { files, bytes };
}

export interface SnapshotMeta {
  snapshot_id: SnapshotId;
  fingerprint: Fingerprint;
  created_at: string;
  manifest_stats: ManifestStats;
  /** The paths the snapshot was asked to capture. */
  paths: string[];
}

/** A loaded snapshot: its metadata and its entries (the manifest's text stays on disk: SnapshotStore.manifest). */
export interface StoredSnapshot {
  meta: SnapshotMeta;
  entries: ManifestEntry[];
}

/**
 * Loaded snapshots a store keeps, counted in entries: a server that reads a
 * few snapshots of a 100k-file tree keeps them, one that goes through many
 * large ones does not keep them all (an entry costs about 200 bytes of heap:
 * 9 snapshots of 90k files held 430 MB).
 */
const CACHE_ENTRIES = 300_000;

/**
 * Manifests and their metadata in `.mcp/snapshots/`: `<hex>.manifest` holds
 * the canonical manifest bytes, `<hex>.json` the metadata. The metadata file
 * is written last and marks the snapshot as complete. Both are immutable: a
 * second capture of the same state keeps the first `created_at`.
 */
export class SnapshotStore {
  private readonly dir: string;
  private readonly cache = new Map<string, StoredSnapshot>();
  private cachedEntries = 0;

  /** `cacheEntries`: entries of loaded snapshots kept at most (CACHE_ENTRIES; the most recently loaded is always kept). */
  constructor(
    private readonly stateDir: string,
    private readonly cacheEntries = CACHE_ENTRIES,
  ) {
    this.dir = join(stateDir, "snapshots");
  }

  has(id: SnapshotId): boolean {
    return existsSync(this.metaPath(hex(id)));
  }

  /**
   * Saves both files, flushed together; the metadata is renamed into place after the manifest
   * (writeFilesAtomic). A manifest staged with manifestWriter is used as it is, or removed when the snapshot
   * exists already.
   */
  async save(meta: SnapshotMeta, manifest: string | Uint8Array | StagedFile): Promise<SnapshotMeta> {
    const h = hex(meta.snapshot_id);
    if (existsSync(this.metaPath(h))) {
      if (manifest instanceof StagedFile) await manifest.discard();
      this.freshen(meta.snapshot_id);
      return this.loadMeta(h);
    }
    mkdirSync(this.dir, { recursive: true });
    await writeFilesAtomic(this.stateDir, [
      { target: this.manifestPath(h), bytes: typeof manifest === "string" ? new TextEncoder().encode(manifest) : manifest },
      { target: this.metaPath(h), bytes: new TextEncoder().encode(canonicalJson(meta)) },
    ]);
    return meta;
  }

  /**
   * A manifest encoded as its entries come, in path order, and written a megabyte at a time by the writer
   * thread, which hashes it for the snapshot's id as it goes and syncs it every 2 MiB (src/native/sink.h): the
   * fsync that save waits for has little left to do. `end` gives the staged file for save and the snapshot's id
   * (snapshotIdOf); `abort` drops it.
   */
  manifestWriter(fingerprint: Fingerprint): ManifestWriter {
    const file = new AtomicFileWriter(this.stateDir, "manifest", 0o644, {
      hashPrefix: new TextEncoder().encode(snapshotIdPrefix(fingerprint)),
      writebackStep: MANIFEST_SYNC_STEP,
      durableSteps: true,
    });
    const encoder = new ManifestEncoder((bytes) => file.write(bytes), MANIFEST_CHUNK);
    return {
      add: (entry) => encoder.add(entry),
      end: () => {
        encoder.end();
        const { staged, sha256 } = file.stage();
        return { staged, id: sha256.then((hex): SnapshotId => `sha256:${hex}`) };
      },
      abort: () => file.abort(),
    };
  }

  /** Resolves a full id or a unique prefix of at least 8 hex digits. */
  resolve(ref: string, argName = "snapshot_id"): SnapshotId {
    if (typeof ref !== "string") throw invalidArgument(`${argName} must be a string`, { arg: argName });
    const h = ref.startsWith("sha256:") ? ref.slice(7) : ref;
    if (!/^[0-9a-f]{8,64}$/.test(h)) {
      throw invalidArgument(`${argName} ${JSON.stringify(ref)} is not a snapshot id (sha256:<hex>, or a prefix of at least 8 hex digits)`, {
        arg: argName,
        snapshot_id: ref,
      });
    }
    if (h.length === 64) {
      if (!existsSync(this.metaPath(h))) throw notFound(`snapshot ${ref} does not exist`, { snapshot_id: ref });
      return `sha256:${h}`;
    }
    const matches = this.allHex().filter((x) => x.startsWith(h));
    if (matches.length === 0) throw notFound(`no snapshot id starts with ${h}`, { snapshot_id: ref });
    if (matches.length > 1) {
      throw invalidArgument(`snapshot prefix ${h} is ambiguous; use more digits`, {
        arg: argName,
        snapshot_id: ref,
        candidates: matches.slice(0, 20).map((m) => `sha256:${m}`),
      });
    }
    return `sha256:${matches[0]}`;
  }

  load(id: SnapshotId): StoredSnapshot {
    const h = hex(id);
    const hit = this.cache.get(h);
    if (hit) {
      this.cache.delete(h);
      this.cache.set(h, hit); // most recently used last
      return hit;
    }
    return this.parsed(h, this.readStored(h, this.manifestPath(h), null));
  }

  /**
   * A stored snapshot and its canonical manifest bytes, the file read once (an export wants both: the entries to
   * walk and the bytes to write; reading the 15 MB manifest of a 100k-file snapshot twice and encoding its text
   * again cost an export a third of a second before its first file).
   */
  loadWithManifest(id: SnapshotId): { snapshot: StoredSnapshot; manifest: Uint8Array } {
    const h = hex(id);
    const bytes = this.readStored(h, this.manifestPath(h), null);
    const hit = this.cache.get(h);
    if (hit) return { snapshot: this.load(id), manifest: bytes };
    return { snapshot: this.parsed(h, bytes), manifest: bytes };
  }

  /** A snapshot's manifest parsed and kept in the cache. */
  private parsed(h: string, bytes: Uint8Array): StoredSnapshot {
    const meta = this.loadMeta(h);
    const entries = parseManifestEntries(bytes);
    const snap = { meta, entries };
    this.cache.set(h, snap);
    this.cachedEntries += entries.length;
    for (const [key, old] of this.cache) {
      if (this.cachedEntries <= this.cacheEntries || old === snap) break;
      this.cache.delete(key);
      this.cachedEntries -= old.entries.length;
    }
    return snap;
  }

  /** The canonical manifest bytes of a stored snapshot, as text (read from disk each time: exports want it, little else). */
  manifest(id: SnapshotId): string {
    const h = hex(id);
    return this.readStored(h, this.manifestPath(h));
  }

  loadMeta(h: string): SnapshotMeta {
    const text = this.readStored(h, this.metaPath(h));
    try {
      return JSON.parse(text) as SnapshotMeta;
    } catch {
      throw notFound(`snapshot sha256:${h} does not exist`, { snapshot_id: `sha256:${h}` });
    }
  }

  /**
   * A file of a stored snapshot. Only a missing file means the snapshot does not exist: any other failure (no
   * descriptor free, permission) is thrown as it is, so a server out of descriptors answers BUSY and runs the
   * call again instead of calling a snapshot missing (regression: the starved flood's snapshot_info).
   */
  private readStored(h: string, path: string): string;
  private readStored(h: string, path: string, encoding: null): Buffer;
  private readStored(h: string, path: string, encoding: "utf8" | null = "utf8"): string | Buffer {
    try {
      return encoding === null ? readFileSync(path) : readFileSync(path, encoding);
    } catch (err) {
      if (isMissingPath(err)) throw notFound(`snapshot sha256:${h} does not exist`, { snapshot_id: `sha256:${h}` });
      throw err;
    }
  }

  /**
   * Marks a stored snapshot as just used (its metadata file's mtime): a capture that finds its state stored
   * already hands out the id again, and `gc --snapshots-older-than` keeps what was used since its cutoff.
   */
  freshen(id: SnapshotId): void {
    const now = new Date();
    try {
      utimesSync(this.metaPath(hex(id)), now, now);
    } catch {
      // gone, or not ours to touch (a read-only .mcp): nothing to keep fresh
    }
  }

  /** When the snapshot was last captured or handed out again (freshen), in ms; null when it is not stored. */
  lastUsed(id: SnapshotId): number | null {
    return statSync(this.metaPath(hex(id)), { throwIfNoEntry: false })?.mtimeMs ?? null;
  }

  /** The files a stored snapshot is kept in: its metadata, then its manifest. */
  files(id: SnapshotId): string[] {
    const h = hex(id);
    return [this.metaPath(h), this.manifestPath(h)];
  }

  /** Removes a stored snapshot: its metadata first (from then on it does not exist), then its manifest. */
  remove(id: SnapshotId): void {
    const h = hex(id);
    for (const f of this.files(id)) rmSync(f, { force: true });
    const cached = this.cache.get(h);
    if (cached) {
      this.cache.delete(h);
      this.cachedEntries -= cached.entries.length;
    }
  }

  list(): SnapshotMeta[] {
    return this.allHex().map((h) => this.loadMeta(h));
  }

  private allHex(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((n) => n.endsWith(".json"))
      .map((n) => n.slice(0, -5));
  }

  private metaPath(h: string): string {
    return join(this.dir, `${h}.json`);
  }

  private manifestPath(h: string): string {
    return join(this.dir, `${h}.manifest`);
  }
}

function hex(id: string): string {
  return id.startsWith("sha256:") ? id.slice(7) : id;
}

