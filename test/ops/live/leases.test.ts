import { describe, expect, test } from "bun:test";
import { LeaseStore, touch } from "../../../src/ops/live/leases";

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
