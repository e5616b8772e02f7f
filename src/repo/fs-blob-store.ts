import { existsSync, mkdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { internal, isMissingPath, notFound } from "../core/errors";
import { blobIdOf, hexOfBlobId, sha256Hex, type BlobId } from "../core/hash";
import type { BlobStore } from "./blob-store";
import { fileStream } from "./file-chunks";
import { writeFileUnflushed, writeFileUnflushedAsync } from "./atomic-write";

/**
 * How long `worksnap gc` spares a loose blob no snapshot references: one a
 * capture in progress has written or found already stored, but not yet
 * entered in a saved manifest, is younger than this. A capture that relies on
 * an older stored blob refreshes its mtime first (freshen), so it counts as
 * young again for the time the capture takes.
 */
export const LOOSE_GRACE_MS = 60 * 60 * 1000;

/** Marks a stored blob as in use now (its mtime) when it is older than half the grace; best effort. */
export function freshen(path: string, mtimeMs: number): void {
  const now = Date.now();
  if (now - mtimeMs < LOOSE_GRACE_MS / 2) return;
  try {
    utimesSync(path, now / 1000, now / 1000);
  } catch {
    // another user's store, or gone: gc's grace still spares a blob written during the capture
  }
}

/**
 * Loose blobs: `.mcp/blobs/sha256/<2 hex>/<62 hex>`, written temp -> rename to
 * the hash name, never modified afterwards. Blobs are not fsynced one by one
 * (that would cost a journal commit per file); instead every read verifies the
 * hash, and a blob torn by a crash is removed and reported, never returned.
 */
export class FsBlobStore implements BlobStore {
  /** Fan-out directories known to exist (a capture writes many blobs; one mkdir each would cost more than the write). */
  private readonly made = new Set<string>();

  constructor(private readonly stateDir: string) {}

  pathOf(id: BlobId): string {
    const { dir, name } = FsBlobStore.placeOf(id);
    return join(this.stateDir, dir, name);
  }

  /** Where a blob lives, relative to the state directory: its fan-out directory and its name there. */
  static placeOf(id: BlobId): { dir: string; name: string } {
    const hex = hexOfBlobId(id);
    return { dir: `blobs/sha256/${hex.slice(0, 2)}`, name: hex.slice(2) };
  }

  async has(id: BlobId): Promise<boolean> {
    const p = this.pathOf(id);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st) freshen(p, st.mtimeMs);
    return st !== undefined;
  }

  async read(id: BlobId): Promise<Uint8Array> {
    const p = this.pathOf(id);
    let bytes: Uint8Array;
    try {
      bytes = await Bun.file(p).bytes();
    } catch (err) {
      // only a missing file is a missing blob; a descriptor shortage is reported as that (BUSY, the call runs again)
      if (isMissingPath(err)) throw notFound(`blob ${id} is not in the store`, { blob: id });
      throw err;
    }
    if (`sha256:${sha256Hex(bytes)}` !== id) {
      rmSync(p, { force: true });
      throw internal(`blob ${id} was corrupt and has been removed`, { blob: id });
    }
    return bytes;
  }

  async stream(id: BlobId): Promise<ReadableStream<Uint8Array>> {
    const p = this.pathOf(id);
    if (!existsSync(p)) throw notFound(`blob ${id} is not in the store`, { blob: id });
    return fileStream(p);
  }

  async write(bytes: Uint8Array): Promise<BlobId> {
    const id = blobIdOf(bytes);
    this.writeKnown(id, bytes);
    return id;
  }

  /** Stores bytes whose id the caller already computed (the capture hot path). */
  writeKnown(id: BlobId, bytes: Uint8Array): void {
    const p = this.placeFor(id);
    if (p === null) return;
    try {
      writeFileUnflushed(this.stateDir, p, bytes, 0o444);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      // the fan-out directory went away since it was made (a cleanup): make it again
      mkdirSync(join(p, ".."), { recursive: true });
      writeFileUnflushed(this.stateDir, p, bytes, 0o444);
    }
  }

  /** Where a blob not stored yet goes, its fan-out directory made; null when it is stored (its mtime freshened). */
  private placeFor(id: BlobId): string | null {
    const p = this.pathOf(id);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st) {
      freshen(p, st.mtimeMs);
      return null;
    }
    const dir = join(p, "..");
    if (!this.made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
    return p;
  }

  /**
   * writeKnown with the write on the I/O threads: settled once the blob is in place (undefined when it was
   * already). `bytes` must not change meanwhile.
   */
  writeKnownAsync(id: BlobId, bytes: Uint8Array): Promise<void> | undefined {
    const p = this.placeFor(id);
    if (p === null) return undefined;
    return writeFileUnflushedAsync(this.stateDir, p, bytes, 0o444).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
      // the fan-out directory went away since it was made (a cleanup): make it again
      mkdirSync(join(p, ".."), { recursive: true });
      return writeFileUnflushedAsync(this.stateDir, p, bytes, 0o444);
    });
  }

  async size(id: BlobId): Promise<number | null> {
    return statSync(this.pathOf(id), { throwIfNoEntry: false })?.size ?? null;
  }
}
