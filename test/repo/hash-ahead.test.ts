/** Many arrays hashed at once on several threads: each digest is the array's SHA-256, remembered for later asks. */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { knowsSha256, sha256Of } from "../../src/core/content-hash";
import { hashAhead } from "../../src/repo/hash-ahead";
import { nativeModule } from "../../src/repo/native";
import { rng } from "../ops/patch/fixtures";

const native = nativeModule();
const reference = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function arrays(seed: number, count: number, maxSize: number): Uint8Array[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => {
    const b = new Uint8Array(r.int(maxSize + 1));
    for (let i = 0; i < b.length; i += 97) b[i] = r.int(256);
    return b;
  });
}

describe.skipIf(native === null)("sha256Many", () => {
  test("each digest equals the array's SHA-256, for every thread count, with empty, tiny, odd-sized and repeated arrays", () => {
    const list = [new Uint8Array(0), ...arrays(7, 40, 70_000), new Uint8Array(1), new Uint8Array(64), new Uint8Array(65)];
    list.push(list[3]!); // the same array twice
    for (const threads of [1, 2, 3, 8, 16, 64, 0]) {
      const digests = native!.sha256Many(list, threads);
      expect(digests.length).toBe(32 * list.length);
      for (let k = 0; k < list.length; k++) expect(digests.toString("hex", 32 * k, 32 * k + 32)).toBe(reference(list[k]!));
    }
    expect(native!.sha256Many([], 4).length).toBe(0);
    expect(() => native!.sha256Many([new Uint8Array(1), "x" as unknown as Uint8Array], 2)).toThrow(/Uint8Array/);
  });
});

describe.skipIf(native === null)("hashAhead", () => {
  test("a change set's states are hashed together and remembered: the later asks get each array's own digest", () => {
    const states = arrays(11, 60, 60_000); // about 1.8 MB
    hashAhead([...states, null, undefined, states[0]]);
    for (const b of states) {
      expect(knowsSha256(b)).toBe(true);
      expect(sha256Of(b)).toBe(reference(b));
    }
  });

  test("a small set is left to be hashed when asked", () => {
    const small = arrays(12, 5, 1000);
    hashAhead(small);
    for (const b of small) expect(knowsSha256(b)).toBe(false);
    for (const b of small) expect(sha256Of(b)).toBe(reference(b));
  });
});
