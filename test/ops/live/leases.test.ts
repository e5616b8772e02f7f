import { describe, expect, test } from "bun:test";
import { compareUtf8 } from "../../../src/core/byte-order";
import { LeaseStore, TouchedPaths, touch } from "../../../src/ops/live/leases";

const FP = { head_oid: "h", index_oid: "i", status_hash: "s" };

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

describe("LeaseStore limits", () => {
  test("issued leases validate against their fingerprint; unknown and malformed ids are refused", () => {
    const store = new LeaseStore();
    const lease = store.issue(FP);
    expect(lease.id).toMatch(/^lease_[0-9a-f]{32}$/);
    expect(store.acquire(lease.id, FP)).toBe(lease);
    expect(code(() => store.acquire(lease.id, { ...FP, status_hash: "t" }))).toBe("STALE_LEASE");
    expect(code(() => store.get(`lease_${"0".repeat(32)}`))).toBe("STALE_LEASE");
    expect(code(() => store.get("lease_1"))).toBe("INVALID_ARGUMENT");
  });

  test("a lease is found by `lease_` and 12 or more of its hex digits, as answers show it; a prefix two leases share is refused", () => {
    const store = new LeaseStore();
    const lease = store.issue(FP);
    for (const n of [12, 20, 32]) expect(store.acquire(lease.id.slice(0, 6 + n), FP)).toBe(lease);
    expect(code(() => store.get(lease.id.slice(0, 6 + 11)))).toBe("INVALID_ARGUMENT");
    expect(code(() => store.get(lease.id.slice(6, 18)))).toBe("INVALID_ARGUMENT");
    expect(code(() => store.get(`lease_${lease.id.slice(6, 18) === "0".repeat(12) ? "1" : "0"}${"0".repeat(11)}`))).toBe("STALE_LEASE");
    const stale = (() => {
      try {
        store.acquire(lease.id.slice(0, 18), { ...FP, status_hash: "t" });
      } catch (err) {
        return err as { code: string; details: { lease_id: string } };
      }
    })();
    expect(stale?.code).toBe("STALE_LEASE");
    expect(stale?.details.lease_id).toBe(lease.id);
    // Two leases sharing 12 digits (48 bits) is a coincidence a server never meets; it is refused, never guessed.
    const twins = new LeaseStore();
    const a = twins.issue(FP);
    const b = twins.issue(FP);
    (twins as unknown as { leases: Map<string, unknown> }).leases.delete(b.id);
    const forged = { ...b, id: `${a.id.slice(0, 18)}${"0".repeat(14)}` };
    (twins as unknown as { leases: Map<string, unknown> }).leases.set(forged.id, forged);
    (twins as unknown as { byPrefix: Map<string, string[]> }).byPrefix.set(a.id.slice(0, 18), [a.id, forged.id]);
    expect(code(() => twins.get(a.id.slice(0, 18)))).toBe("INVALID_ARGUMENT");
    expect(twins.get(a.id)).toBe(a);
  });

  test("too many leases: the oldest go first and are STALE_LEASE afterwards", () => {
    const store = new LeaseStore({ leases: 3, touched: 1_000 });
    const ids = Array.from({ length: 5 }, () => store.issue(FP).id);
    expect(code(() => store.get(ids[0] as string))).toBe("STALE_LEASE");
    expect(code(() => store.get(ids[1] as string))).toBe("STALE_LEASE");
    for (const id of ids.slice(2)) expect(store.get(id).id).toBe(id);
  });

  test("regression: whole-tree reads no longer grow a server's memory without bound (touched paths are capped over all leases)", () => {
    const store = new LeaseStore({ leases: 10_000, touched: 250 });
    const big = Array.from({ length: 3 }, () => {
      const l = store.issue(FP);
      for (let i = 0; i < 100; i++) touch(l, `f${i}`, `sha256:${i}`);
      return l.id;
    });
    // 300 touched paths are over the cap: the next lease pushes the oldest out, never itself.
    const fresh = store.issue(FP);
    expect(code(() => store.get(big[0] as string))).toBe("STALE_LEASE");
    expect(store.get(big[1] as string).touched.size).toBe(100);
    expect(store.get(big[2] as string).touched.size).toBe(100);
    expect(store.get(fresh.id)).toBe(fresh);
  });
});

describe("TouchedPaths: a search's run of touches beside the one-by-one touches", () => {
  const resolve = (oid: string) => (oid.startsWith("dead") ? undefined : `sha256:${oid}`);
  const oid = (n: number) => (n % 7 === 0 ? "dead" : "") + n.toString(16).padStart(40, "0").slice(-40);

  /** What the lease must answer: a plain Map of the newest value per path, git ids resolved when read. */
  function observed(model: Map<string, string | null>, path: string): string | null | undefined {
    const v = model.get(path);
    if (v === undefined || v === null || v.startsWith("sha256:")) return v;
    if (v.startsWith("part:")) return undefined;
    return resolve(v) ?? "THROWS";
  }

  test("random sequences of touches, runs and reads answer as one Map of the newest touch per path would", () => {
    // paths whose runtime order differs from their byte order (a surrogate pair against U+E000 and above) among plain ones
    const names = ["a", "a/b", "b", "b\u0000c", "é", "\uffff", "\u{10000}", "z/\ue000", "z/\u{1f600}", "zz"];
    const sorted = [...names].sort(compareUtf8);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const t = new TouchedPaths(resolve);
      const model = new Map<string, string | null>();
      for (let step = 0; step < 12; step++) {
        const path = names[rand(names.length)] as string;
        const op = rand(5);
        if (op === 0) {
          const v = rand(3) === 0 ? null : `sha256:${rand(100)}`;
          t.set(path, v);
          model.set(path, v);
        } else if (op === 1) {
          const g = oid(rand(50));
          t.addRun([path], [g]); // a clean tracked file recorded by its git blob id
          model.set(path, g);
        } else if (op === 2) {
          t.setPartial(path, { bytes: 3, sha256: "ab" });
          model.set(path, "part:3:ab");
        } else {
          const paths = sorted.filter(() => rand(2) === 0);
          const values = paths.map(() => [null, `sha256:${rand(100)}`, oid(rand(50))][rand(3)] as string | null);
          t.addRun(paths, values);
          paths.forEach((p, i) => model.set(p, values[i] as string | null));
        }
        expect(t.size).toBe(model.size);
        expect([...t.keys()].sort(compareUtf8)).toEqual([...model.keys()].sort(compareUtf8));
        for (const p of names) {
          expect(t.has(p)).toBe(model.has(p));
          const want = observed(model, p);
          if (want === "THROWS") expect(() => t.get(p)).toThrow(/no longer knows/);
          else expect(t.get(p)).toBe(want);
          expect(t.partialRead(p)).toEqual(model.get(p) === "part:3:ab" ? { bytes: 3, sha256: "ab" } : undefined);
        }
      }
      const live = [...model].filter(([, v]) => v === null || !v.startsWith("dead"));
      if (live.length === model.size) {
        expect(new Map(t.entries())).toEqual(new Map([...model].map(([p, v]) => [p, v === null || v.startsWith("sha256:") || v.startsWith("part:") ? v : `sha256:${v}`])));
      }
    }
  });

  test("a run given out of order is kept one path at a time, still found", () => {
    const t = new TouchedPaths(resolve);
    t.addRun(["b", "a", "c"], ["sha256:1", "sha256:2", null]);
    expect([t.get("a"), t.get("b"), t.get("c"), t.size]).toEqual(["sha256:2", "sha256:1", null, 3]);
  });

  test("a run leaves the caller's arrays in place and resolves a git id once, in place", () => {
    let asked = 0;
    const t = new TouchedPaths((g) => {
      asked++;
      return `sha256:${g}`;
    });
    const paths = ["a", "b"];
    const values: (string | null)[] = ["0".repeat(40), null];
    t.addRun(paths, values);
    expect(t.get("a")).toBe(`sha256:${"0".repeat(40)}`);
    expect(t.get("a")).toBe(`sha256:${"0".repeat(40)}`);
    expect(asked).toBe(1);
    expect(t.changedSince("a", null)).toEqual({ read_blob: `sha256:${"0".repeat(40)}`, current_blob: null });
    expect(t.changedSince("b", new Uint8Array([1]))).toBeNull();
  });
});
