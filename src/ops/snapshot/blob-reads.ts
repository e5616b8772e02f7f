import { closeSync } from "node:fs";
import { sha256Hex, type BlobId } from "../../core/hash";
import { openRegular, readAll } from "../../repo/file-chunks";
import type { Workspace } from "../workspace";

/** Bytes of blobs kept at once for the later paths of the same search that hold them. */
const SHARED_BYTES_MAX = 64 << 20;
/** Blobs up to this size are looked for in the work tree first. */
const WORK_TREE_COPY_MAX = 4 << 20;

/**
 * How a search over a stored snapshot reads its blobs. Most of a snapshot's
 * blobs are held by git's object store, whose reads go through one `git
 * cat-file` process that inflates them one by one (and resolves their deltas):
 * about a millisecond a blob. Two things spare most of those reads:
 *
 * - the work tree usually still holds the same bytes at the same path: the
 *   file is read (a regular file only, never through a final symlink, never
 *   a FIFO) and taken when its SHA-256 is the blob's, so what is searched is
 *   always exactly the snapshot's bytes, whatever happened to the file since;
 * - a blob held by several paths (release trees side by side, vendored
 *   copies) is read once per search and its bytes shared by the later paths,
 *   within a memory bound (SHARED_BYTES_MAX); past it, a blob is read again.
 */
export class SnapshotBlobReads {
  /** reads still to come of each blob */
  private readonly left = new Map<BlobId, number>();
  private readonly kept = new Map<BlobId, { bytes: Promise<Uint8Array>; size: number }>();
  private keptBytes = 0;
  private readonly root: string;

  constructor(
    private readonly ws: Workspace,
    /** every blob the search will read, once per path that holds it */
    uses: Iterable<BlobId>,
  ) {
    for (const b of uses) this.left.set(b, (this.left.get(b) ?? 0) + 1);
    this.root = ws.repo.root.endsWith("/") ? ws.repo.root : `${ws.repo.root}/`;
  }

  read(blob: BlobId, path: string, size: number): Promise<Uint8Array> {
    const left = (this.left.get(blob) ?? 1) - 1;
    if (left > 0) this.left.set(blob, left);
    else this.left.delete(blob);
    const known = this.kept.get(blob);
    if (known) {
      if (left === 0) this.forget(blob);
      return known.bytes;
    }
    const copy = size <= WORK_TREE_COPY_MAX ? this.fromWorkTree(blob, path, size) : null;
    const bytes = copy ? Promise.resolve(copy) : this.ws.blobs.read(blob);
    if (left > 0 && this.keptBytes + size <= SHARED_BYTES_MAX) {
      this.kept.set(blob, { bytes, size });
      this.keptBytes += size;
      // a failed read is not kept: the next path asks the store again
      bytes.catch(() => this.forget(blob));
    }
    return bytes;
  }

  private forget(blob: BlobId): void {
    const k = this.kept.get(blob);
    if (!k) return;
    this.kept.delete(blob);
    this.keptBytes -= k.size;
  }

  /** The work tree file at `path` when it holds exactly the blob's bytes; null otherwise (or on any failure). */
  private fromWorkTree(blob: BlobId, path: string, size: number): Uint8Array | null {
    let opened: ReturnType<typeof openRegular>;
    try {
      opened = openRegular(this.root + path);
    } catch {
      return null;
    }
    try {
      if (opened.stat.size !== size) return null;
      const bytes = readAll(opened.fd, size);
      return bytes.length === size && sha256Hex(bytes) === blob.slice(7) ? bytes : null;
    } catch {
      return null;
    } finally {
      closeSync(opened.fd);
    }
  }
}
