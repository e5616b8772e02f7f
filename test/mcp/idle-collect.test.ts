import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HEAVY_CALL_BYTES, HEAVY_CALL_CPU_MS, IdleCollector, processWork, type Work } from "../../src/mcp/idle-collect";
import { WorkspacePool } from "../../src/mcp/roots";
import { nativeModule } from "../../src/repo/native";
import { mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

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

  test("a heavy call's garbage is collected at once, and before the next call at the latest; a light call's waits for the idle time", async () => {
    let idleWork = 0;
    let prompt = 0;
    const told: { fresh: boolean | null } = { fresh: null };
    // the work the calls do, as the meter reads it
    const work: Work = { cpuMs: 0, residentBytes: 100 << 20 };
    const idle = new IdleCollector(
      200,
      (fresh) => {
        idleWork++;
        told.fresh = fresh;
      },
      () => {
        prompt++;
        work.residentBytes = 100 << 20; // the garbage gone
      },
      () => ({ ...work }),
    );
    idle.begin();
    work.cpuMs += HEAVY_CALL_CPU_MS - 1;
    work.residentBytes += HEAVY_CALL_BYTES - 1;
    idle.end(); // light, however long it took
    await Bun.sleep(20);
    expect(prompt).toBe(0);
    idle.begin();
    work.cpuMs += HEAVY_CALL_CPU_MS;
    idle.end();
    idle.begin(); // the next call, before the loop turned: collected first
    expect(prompt).toBe(1);
    await Bun.sleep(30);
    expect(prompt).toBe(1);
    idle.end(); // light: nothing at once
    idle.begin();
    work.residentBytes += HEAVY_CALL_BYTES; // memory grown without much CPU (buffers read by other threads)
    idle.end();
    await until(() => prompt > 1);
    expect(prompt).toBe(2);
    expect(idleWork).toBe(0); // the idle work still waits for the idle time
    await until(() => idleWork > 0);
    expect(idleWork).toBe(1);
    expect(told.fresh).toBe(true); // nothing left garbage since: the idle work need not collect again
    idle.settled(); // background work that ended leaves garbage: the next idle work collects
    await until(() => idleWork > 1);
    expect(told.fresh).toBe(false);
  });

  test("concurrent calls are heavy by what they did together, from the first one's start to the last one's end", async () => {
    let prompt = 0;
    const work: Work = { cpuMs: 0, residentBytes: 0 };
    const idle = new IdleCollector(10_000, () => undefined, () => prompt++, () => ({ ...work }));
    idle.begin();
    work.cpuMs += HEAVY_CALL_CPU_MS / 2;
    idle.begin();
    idle.end(); // one still runs: nothing yet
    work.cpuMs += HEAVY_CALL_CPU_MS / 2;
    idle.end();
    await until(() => prompt > 0);
    expect(prompt).toBe(1);
  });

  test("regression (a write waiting on git counted as heavy): the process's own meter calls a wait light, the thread's CPU and grown memory heavy", async () => {
    const run = async (call: () => Promise<void> | void) => {
      let prompt = 0;
      const idle = new IdleCollector(10_000, () => undefined, () => prompt++, processWork);
      idle.begin();
      await call();
      idle.end();
      await Bun.sleep(20); // the loop turns: a heavy call's collection has run
      return prompt;
    };
    // a call that waits (for git, for the disk) as long as a heavy one works: no collection for the next call to wait for
    expect(await run(() => Bun.sleep(HEAVY_CALL_CPU_MS + 50))).toBe(0);
    // the thread busy for longer than the threshold (asking the meter is the work)
    expect(
      await run(() => {
        const start = processWork().cpuMs;
        while (processWork().cpuMs - start < HEAVY_CALL_CPU_MS + 10);
      }),
    ).toBe(1);
    // memory grown past the threshold (touched: resident), with little CPU; held until the call's end is measured
    const held: Uint8Array[] = [];
    expect(
      await run(() => {
        const grown = new Uint8Array(HEAVY_CALL_BYTES + (8 << 20));
        for (let i = 0; i < grown.length; i += 4096) grown[i] = 1;
        held.push(grown);
      }),
    ).toBe(1);
    held.length = 0;
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

describe.skipIf(nativeModule() === null)("a server's pool of workspaces", () => {
  test("tells its listener once a workspace's background index has indexed something, and not after a pass with nothing new", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 20; i++) repo.write(`src/f${i}.ts`, `export const handleRequest${i} = ${i};\n`);
    repo.commit();
    const pool = new WorkspacePool();
    let told = 0;
    pool.onIndexed = () => told++;
    try {
      const ws = pool.get(repo.root);
      await until(() => told > 0, 20_000);
      expect(told).toBe(1);
      expect(ws.trigrams.hasOid(repo.git("rev-parse", ":src/f0.ts").trim())).toBe(true);
      pool.kickIndexers(); // nothing new: indexes nothing, tells nobody
      await ws.indexer!.idle();
      expect(told).toBe(1);
      repo.write("src/new.ts", "export const x = 1;\n");
      repo.commit("new");
      pool.kickIndexers();
      await until(() => told > 1, 20_000);
      expect(told).toBe(2);
    } finally {
      pool.closeAll();
    }
  }, 60_000);
});

describe("a server's idle work, through the compiled binary", () => {
  test("after a call that found git's index changed, git's untracked cache is built in the new copy of the index before the next call", async () => {
    // Linux only (the copy is used on file systems known to keep directory mtimes): elsewhere there is no copy to prime
    if (process.platform !== "linux") return;
    await using repo = await tmpRepo();
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.write("notes/todo.txt", "untracked\n");
    repo.commit();
    repo.write("build/out.txt", "untracked too\n");
    await using s = await mcpSession(repo.root);
    const dir = join(repo.root, ".mcp", "git");
    const copy = () => (existsSync(dir) ? readdirSync(dir).find((n) => n.startsWith("status-index-")) : undefined);
    const cached = () => {
      const name = copy();
      return name !== undefined && readFileSync(join(dir, name)).includes("UNTR");
    };
    await s.call("snapshot_grep", { pattern: "const", fixed_strings: true }); // no copy yet: made after this call's status
    await until(() => cached(), 10_000);
    expect(copy()).toBeDefined();
    expect(cached()).toBe(true);
  }, 30_000);
});
