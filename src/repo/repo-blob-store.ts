import { notFound } from "../core/errors";
import { hexOfBlobId, type BlobId } from "../core/hash";
import type { BlobStore } from "./blob-store";
import { FsBlobStore } from "./fs-blob-store";
import { GitBlobMap } from "./git-blob-map";
import { GitObjectStore } from "./git-object-store";

/**
 * The store a repository's snapshots read from: loose blobs first, then
 * blobs held in the private git object store (found through the GitBlobMap).
 * Writes always go to the loose store.
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

  async has(id: BlobId): Promise<boolean> {
    return (await this.loose.has(id)) || this.gitMap.oidOf(hexOfBlobId(id)) !== undefined;
  }

  async read(id: BlobId): Promise<Uint8Array> {
    if (await this.loose.has(id)) return this.loose.read(id);
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    if (!oid) throw notFound(`blob ${id} is not in the store`, { blob: id });
    return this.gitObjects.read(oid);
  }

  async stream(id: BlobId): Promise<ReadableStream<Uint8Array>> {
    if (await this.loose.has(id)) return this.loose.stream(id);
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    if (!oid) throw notFound(`blob ${id} is not in the store`, { blob: id });
    return this.gitObjects.stream(oid);
  }

  write(bytes: Uint8Array): Promise<BlobId> {
    return this.loose.write(bytes);
  }

  async size(id: BlobId): Promise<number | null> {
    const s = await this.loose.size(id);
    if (s !== null) return s;
    const oid = this.gitMap.oidOf(hexOfBlobId(id));
    return oid ? (this.gitMap.get(oid)?.size ?? null) : null;
  }

  close(): void {
    this.gitObjects.close();
  }
}
