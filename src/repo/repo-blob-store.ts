import { hexOfBlobId, type BlobId } from "../core/hash";
import type { BlobStore } from "./blob-store";
import { FsBlobStore } from "./fs-blob-store";
import { GitBlobMap } from "./git-blob-map";
import { GitObjectStore } from "./git-object-store";

/**
 * The store a repository's snapshots read from: blobs held in the private git
 * object store (found through the GitBlobMap, in memory), then loose blobs.
 * Both hold exactly the bytes the id names, so the order only decides the
 * cost: most blobs of a tree are clean tracked files, and asking the map
 * first spares a file-system lookup per blob. Writes always go to the loose store.
 */
export class RepoBlobStore implements BlobStore {
  readonly loose: FsBlobStore;
  readonly gitMap: GitBlobMap;
  readonly gitObjects: GitObjectStore;

  constructor(stateDir: string) {
    this.loose = new FsBlobStore(stateDir);
    this.gitMap = new GitBlobMap(stateDir);
    this.gitObjects = new GitObjectStore(stateDir);
  }

  /** The SHA-256 (hex) of a git blob id's bytes, when a capture verified the pair; for the trigram index's checks. */
  knownSha256(gitOid: string): string | undefined {
    return this.gitMap.get(gitOid)?.sha256;
  }

  async has(id: BlobId): Promise<boolean> {
    return this.gitMap.oidOf(hexOfBlobId(id)) !== undefined || (await this.loose.has(id));
  }

  async read(id: BlobId): Promise<Uint8Array> {
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    if (oid) return this.gitObjects.read(oid);
    return this.loose.read(id);
  }

  async stream(id: BlobId): Promise<ReadableStream<Uint8Array>> {
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    if (oid) return this.gitObjects.stream(oid);
    return this.loose.stream(id);
  }

  write(bytes: Uint8Array): Promise<BlobId> {
    return this.loose.write(bytes);
  }

  async size(id: BlobId): Promise<number | null> {
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    const known = oid ? this.gitMap.get(oid)?.size : undefined;
    return known ?? this.loose.size(id);
  }

  /**
   * size() of each of `ids`: the map read again for other processes' records once, not on every blob it lacks
   * (an export of a tree with loose blobs opened the map's file once for each of them), and the sizes looked up
   * all at once (GitBlobMap.sizesKnown).
   */
  async sizes(ids: BlobId[]): Promise<(number | null)[]> {
    this.gitMap.reload();
    const known = this.gitMap.sizesKnown(ids);
    const out: (number | null)[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const size = known[i] as number;
      out[i] = size >= 0 ? size : await this.loose.size(ids[i] as BlobId);
    }
    return out;
  }

  close(): void {
    this.gitMap.flush();
    this.gitObjects.close();
  }
}
