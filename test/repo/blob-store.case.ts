import { expect, test } from "bun:test";
import { blobIdOf } from "../../src/core/hash";
import type { BlobStore } from "../../src/repo/blob-store";

/** The conformance suite every BlobStore implementation runs (hono's common.case.test.ts pattern). */
export function blobStoreCases(name: string, make: () => Promise<{ store: BlobStore } & AsyncDisposable>): void {
  test(`${name}: write returns the sha256 id and read returns the exact bytes`, async () => {
    await using h = await make();
    const bytes = new Uint8Array([0, 1, 2, 255, 10, 13, 10]);
    const id = await h.store.write(bytes);
    expect(id).toBe(blobIdOf(bytes));
    expect(await h.store.has(id)).toBe(true);
    expect(await h.store.read(id)).toEqual(bytes);
    expect(await h.store.size(id)).toBe(bytes.length);
  });

  test(`${name}: writes are deduplicated and stored bytes are immutable`, async () => {
    await using h = await make();
    const bytes = new TextEncoder().encode("same content\n");
    const a = await h.store.write(bytes);
    bytes[0] = 0x53;
    const b = await h.store.write(new TextEncoder().encode("same content\n"));
    expect(a).toBe(b);
    expect(new TextDecoder().decode(await h.store.read(a))).toBe("same content\n");
  });

  test(`${name}: the empty blob`, async () => {
    await using h = await make();
    const id = await h.store.write(new Uint8Array());
    expect(await h.store.read(id)).toEqual(new Uint8Array());
    expect(await h.store.size(id)).toBe(0);
  });

  test(`${name}: an unknown blob is NOT_FOUND naming it, and has/size say absent`, async () => {
    await using h = await make();
    const missing = blobIdOf("never stored");
    expect(await h.store.has(missing)).toBe(false);
    expect(await h.store.size(missing)).toBeNull();
    const err = await h.store.read(missing).catch((e) => e);
    expect(err.code).toBe("NOT_FOUND");
    expect(err.details.blob).toBe(missing);
  });

  test(`${name}: stream yields the same bytes as read`, async () => {
    await using h = await make();
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) & 255);
    const id = await h.store.write(bytes);
    const streamed = new Uint8Array(await new Response(await h.store.stream(id)).arrayBuffer());
    expect(streamed).toEqual(bytes);
  });
}
