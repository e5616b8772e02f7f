import { describe, expect, test } from "bun:test";
import { Fifo } from "../../src/core/fifo";

describe("Fifo", () => {
  test("gives items back in the order they came, through compactions, against an array's push and shift", () => {
    const q = new Fifo<number>();
    const model: number[] = [];
    let seed = 11;
    let next = 0;
    for (let step = 0; step < 50_000; step++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      // bursts of pushes then of shifts, so the queue grows past the compaction threshold and empties again
      const pushing = Math.floor(step / 3000) % 2 === 0 ? seed % 4 !== 0 : seed % 4 === 0;
      if (pushing) {
        q.push(next);
        model.push(next++);
      } else expect(q.shift()).toBe(model.shift());
      expect(q.length).toBe(model.length);
    }
    while (model.length > 0) expect(q.shift()).toBe(model.shift());
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  test("holds nothing it gave out", () => {
    const q = new Fifo<object>();
    for (let i = 0; i < 10; i++) q.push({ i });
    for (let i = 0; i < 9; i++) q.shift();
    const slots = (q as unknown as { items: unknown[] }).items;
    expect(slots.filter((x) => x !== undefined)).toEqual([{ i: 9 }]);
  });
});
