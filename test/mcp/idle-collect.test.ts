import { describe, expect, test } from "bun:test";
import { IdleCollector } from "../../src/mcp/idle-collect";

/** Waits until `cond` holds (timers may fire late on a loaded machine, never early). */
async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await Bun.sleep(5);
}

describe("IdleCollector", () => {
  test("one collection once no call has run for the idle time; none while a call runs, none without a call", async () => {
    let collections = 0;
    const idle = new IdleCollector(30, () => collections++);
    await Bun.sleep(60);
    expect(collections).toBe(0); // nothing ran yet
    idle.begin();
    idle.begin();
    idle.end();
    await Bun.sleep(60);
    expect(collections).toBe(0); // one call still runs
    idle.end();
    await Bun.sleep(10);
    expect(collections).toBe(0); // not idle long enough
    await until(() => collections > 0);
    expect(collections).toBe(1);
    await Bun.sleep(60);
    expect(collections).toBe(1); // once per idle period
  });

  test("a call that starts before the idle time is up puts the collection off until after it", async () => {
    let collections = 0;
    const idle = new IdleCollector(40, () => collections++);
    idle.begin();
    idle.end();
    await Bun.sleep(10);
    idle.begin();
    await Bun.sleep(80);
    expect(collections).toBe(0);
    idle.end();
    await until(() => collections > 0);
    expect(collections).toBe(1);
  });

  test("background work that ended asks for one collection once no call has run for the idle time; after the call that runs", async () => {
    let collections = 0;
    const idle = new IdleCollector(30, () => collections++);
    idle.settled();
    await until(() => collections > 0);
    expect(collections).toBe(1);
    idle.begin();
    idle.settled(); // ended while a call runs: waits for it
    await Bun.sleep(80);
    expect(collections).toBe(1);
    idle.end();
    await until(() => collections > 1);
    expect(collections).toBe(2);
    await Bun.sleep(60);
    expect(collections).toBe(2);
  });
});
