/**
 * The bundle's manifest.json: built from the manifest's text (import checks a bundle's against it) or from its
 * bytes, in two pieces (export writes those); both must be the same bytes.
 */
import { describe, expect, test } from "bun:test";
import { bundleManifestJson, bundleManifestPieces } from "../../src/repo/bundle";
import type { Fingerprint } from "../../src/repo/fingerprint";
import { manifestJson, snapshotIdOf } from "../../src/repo/manifest";

const FP: Fingerprint = { head_oid: "0".repeat(40), index_oid: "1".repeat(40), status_hash: `sha256:${"2".repeat(64)}` };
const enc = new TextEncoder();

describe("the bundle's manifest.json", () => {
  test("from the manifest's bytes, the two pieces are the bytes of the text built from its text", () => {
    for (const entries of [[], [{ path: "a.txt", blob: `sha256:${"a".repeat(64)}` as const }, { path: "ünï/ç \"q\".txt", blob: `sha256:${"b".repeat(64)}` as const, mode: "100755" as const }]]) {
      const manifest = manifestJson(entries);
      const id = snapshotIdOf(FP, manifest);
      const bytes = enc.encode(manifest);
      const [head, tail] = bundleManifestPieces(bytes, FP, id);
      expect(head.buffer).toBe(bytes.buffer); // a view of the manifest's bytes, not a copy
      expect(Buffer.concat([head, tail]).toString("utf8")).toBe(bundleManifestJson(manifest, FP, id));
      expect(JSON.parse(Buffer.concat([head, tail]).toString("utf8")).snapshot_id).toBe(id);
    }
  });

  test("a manifest not in canonical form is refused either way", () => {
    const id = `sha256:${"c".repeat(64)}` as const;
    for (const bad of ['{"entries":[]', '{"entries": []}', '["entries"]', "", '{"entries":[]} ']) {
      expect(() => bundleManifestJson(bad, FP, id)).toThrow("not a canonical manifest");
      expect(() => bundleManifestPieces(enc.encode(bad), FP, id)).toThrow("not a canonical manifest");
    }
  });
});
