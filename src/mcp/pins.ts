import type { BlobId } from "../core/hash";
import type { PinLookup } from "../ops/write/pin-check";
import { caseKey, foldsCase } from "../repo/name-case";

/**
 * Per-file provenance for one MCP session and one root (spec 004's lesson:
 * never one "last seen" marker, which a fresh listing would re-bless): for
 * each path, the blob of the content the session last showed the model. A
 * worktree write without lease_id hands these to the write path, which
 * refuses (or, for a patch, warns about) a pinned file whose content on disk
 * is no longer the pinned one.
 *
 * Only answers that show content move a pin: snapshot_file and grep matches
 * in worktree mode pin the blob read, a successful write pins what it wrote
 * (null: the path was removed), a refusal whose diff showed the whole change
 * pins the current blob. Listings, snapshot_info, diff headers and ids move
 * nothing. Updates are merge-only: a path absent from an answer keeps its
 * older pin. A path never shown has no pin and passes through unchecked
 * (never a guess).
 *
 * Bounded: the most recently pinned PIN_LIMIT paths are kept (about 150 bytes
 * each); an evicted path has no pin again, never a wrong one.
 */
export const PIN_LIMIT = 10_000;

export class Pins {
  /** Insertion order is pin order: a path pinned again moves to the end; the oldest go first. */
  private readonly map = new Map<string, BlobId | null>();

  /**
   * `key`: how the root's file system tells paths apart (on one that folds
   * case, `Foo.txt` read and `foo.txt` written are one file, one pin).
   */
  constructor(
    private readonly limit = PIN_LIMIT,
    private readonly key: (path: string) => string = (p) => p,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(path: string): BlobId | null | undefined {
    return this.map.get(this.key(path));
  }

  /** Pins each path to its blob; paths not named keep theirs. */
  merge(entries: Iterable<readonly [string, BlobId | null]>): void {
    for (const [path, blob] of entries) {
      const k = this.key(path);
      this.map.delete(k);
      this.map.set(k, blob);
    }
    for (const path of this.map.keys()) {
      if (this.map.size <= this.limit) break;
      this.map.delete(path);
    }
  }

  /** The pinned paths' keys, least recently pinned first. */
  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** The pins as the write path reads them (read-only; live, not a copy). */
  view(): PinLookup {
    return this;
  }
}

/**
 * A session's pins, one set per root (two roots never share a pin, even for
 * the same relative path). The most recently used MAX_ROOTS roots are kept.
 */
export class PinStore {
  private readonly roots = new Map<string, Pins>();
  static readonly MAX_ROOTS = 16;

  constructor(private readonly limit = PIN_LIMIT) {}

  forRoot(root: string): Pins {
    let pins = this.roots.get(root);
    if (pins) {
      this.roots.delete(root);
    } else {
      pins = new Pins(this.limit, foldsCase(root) ? caseKey : undefined);
      for (const oldest of this.roots.keys()) {
        if (this.roots.size < PinStore.MAX_ROOTS) break;
        this.roots.delete(oldest);
      }
    }
    this.roots.set(root, pins);
    return pins;
  }
}
