import { describe, expect, test } from "bun:test";
import { Semaphore } from "../../src/core/semaphore";

/** A task that runs until released, recording when it starts. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Semaphore", () => {
  test("never more than `limit` at once; waiters start in arrival order", async () => {
    const s = new Semaphore(3);
    const started: number[] = [];
    const gates = Array.from({ length: 10 }, () => gate());
    let running = 0;
    let peak = 0;
    const all = gates.map((g, i) =>
      s.run(async () => {
        started.push(i);
        running++;
        peak = Math.max(peak, running);
        await g.opened;
        running--;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(s.queued).toBe(7);
    // finish out of order: the next waiter in line gets each freed slot
    gates[1]!.open();
    await tick();
    gates[0]!.open();
    await tick();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    for (const g of gates) g.open();
    await Promise.all(all);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(s.inUse).toBe(0);
  });

  test("a waiter cancelled while queued leaves the queue, never runs, and rejects with the signal's reason", async () => {
    const s = new Semaphore(1);
    const first = gate();
    const ran: string[] = [];
    const holding = s.run(async () => {
      ran.push("first");
      await first.opened;
    });
    const ac = new AbortController();
    const cancelled = s.run(async () => void ran.push("cancelled"), ac.signal);
    const after = s.run(async () => void ran.push("after"));
    await tick();
    expect(s.queued).toBe(2);
    ac.abort(new Error("cancelled by the client"));
    await expect(cancelled).rejects.toThrow("cancelled by the client");
    expect(s.queued).toBe(1);
    first.open();
    await Promise.all([holding, after]);
    expect(ran).toEqual(["first", "after"]);
    // an already aborted signal never queues
    await expect(s.acquire(AbortSignal.abort(new Error("late")))).rejects.toThrow("late");
    expect(s.queued).toBe(0);
  });

  test("idle() waits for every holder and waiter; nextRelease() for the next slot given back; release is idempotent", async () => {
    const s = new Semaphore(2);
    await s.idle();
    const release = await s.acquire();
    const g = gate();
    const other = s.run(() => g.opened);
    let idle = false;
    const idling = s.idle().then(() => (idle = true));
    const released = s.nextRelease();
    release();
    release(); // a second call gives back nothing more
    await released;
    expect(s.inUse).toBe(1);
    expect(idle).toBe(false);
    g.open();
    await other;
    await idling;
    expect(idle).toBe(true);
    expect(s.inUse).toBe(0);
  });

  test("thousands of waiters, half cancelled: the rest all run, in order", async () => {
    const s = new Semaphore(4);
    const order: number[] = [];
    const controllers: AbortController[] = [];
    const runs: Promise<unknown>[] = [];
    for (let i = 0; i < 5000; i++) {
      const ac = new AbortController();
      controllers.push(ac);
      runs.push(
        s
          .run(async () => {
            order.push(i);
            await tick();
          }, ac.signal)
          .catch(() => undefined),
      );
    }
    for (let i = 10; i < 5000; i += 2) controllers[i]!.abort();
    await Promise.all(runs);
    const expected = [...Array(5000).keys()].filter((i) => i < 10 || i % 2 === 1);
    expect(order).toEqual(expected);
    expect(s.queued).toBe(0);
    expect(s.inUse).toBe(0);
  });
});
