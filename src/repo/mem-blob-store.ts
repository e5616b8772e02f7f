import { notFound } from "../core/errors";
import { blobIdOf, type BlobId } from "../core/hash";
import type { BlobStore } from "./blob-store";

export class MemBlobStore implements BlobStore {
  private readonly blobs = new Map<string, Uint8Array>();

  async has(id: BlobId): Promise<boolean> {
    return this.blobs.has(id);
  }

  async read(id: BlobId): Promise<Uint8Array> {
    const b = this.blobs.get(id);
    if (!b) throw notFound(`blob ${id} is not in the store`, { blob: id });
    return b;
  }

  async stream(id: BlobId): Promise<ReadableStream<Uint8Array>> {
    const bytes = await this.read(id);
    return new Blob([bytes]).stream();
  }

  async write(bytes: Uint8Array): Promise<BlobId> {
    const id = blobIdOf(bytes);
    if (!this.blobs.has(id)) this.blobs.set(id, bytes.slice());
    return id;
  }

  async size(id: BlobId): Promise<number | null> {
    return this.blobs.get(id)?.length ?? null;
  }
}
