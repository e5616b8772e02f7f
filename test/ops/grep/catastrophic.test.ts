/**
 * Runaway regexes. Known exponential shapes are refused up front; anything
 * else that is not provably cheap runs on a worker under the call's time
 * budget, so a pathological pattern on a long line comes back (timed out) while
 * the main thread keeps serving other work.
 */
import { describe, expect, test } from "bun:test";
import { WorksnapError } from "../../../src/core/errors";
import { compileQuery, grep } from "../../../src/ops/grep";
import { planRegex } from "../../../src/ops/grep/regex-analysis";
import { grepAll, memCandidates, positions } from "./fixtures";

function refusal(pattern: string): WorksnapError | null {
  try {
    compileQuery({ pattern, queryKey: "" });
    return null;
  } catch (err) {
    return err as WorksnapError;
  }
}

describe("catastrophic backtracking", () => {
  test.each(["(a+)+", "(a*)*", "(a|a)*", "(.*a){20}", "(\\w+\\s?)*$", "^(a+)+$", "(x+x+)+y", "(a|aa)+b", "(\\d|\\w)+!", "(?:.*,)*x", "((ab)*)+c", "(a?a)+b"])(
    "%s is refused with the reason",
    (pattern) => {
      const err = refusal(pattern);
      expect(err?.code).toBe("INVALID_ARGUMENT");
      expect(err?.details.reason).toBe("catastrophic_backtracking");
      expect(err?.message).toContain("catastrophic backtracking");
    },
  );

  test.each([
    "TODO|FIXME",
    "function\\s+\\w+\\s*\\(",
    "import .* from ['\"]react['\"]",
    "\\bclass\\s+[A-Z]\\w*",
    "(\\d+\\.){3}\\d+",
    "\\(\\s*\\w+(?:\\s*,\\s*\\w+)*\\s*\\)",
    "\"(?:[^\"\\\\]|\\\\.)*\"",
    "(?:foo|for)+",
    "(a|ab)*c",
    "^\\s*#include\\s*<[^>]+>",
    "[A-Z_]{3,}",
    "https?://[^\\s)]+",
    "(?<=\\.)then\\(",
    "(\\w+)\\s*=\\s*\\1",
  ])("%s is accepted", (pattern) => {
    expect(refusal(pattern)).toBeNull();
  });

  test("a pathological pattern on a long line times out without blocking the main thread, and the process keeps working", async () => {
    const longLine = `${"a".repeat(30_000)}!=\n`;
    const tree = { "a.txt": "x = 1\n", "min.js": longLine, "z.txt": "y = 2\n" };
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const r = await grepAll(tree, { pattern: "\\w*\\w*\\w*\\w*=", timeBudgetMs: 1500 });
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(5); // timers ran while the regex was stuck
    expect(r).toMatchObject({ timed_out: true, truncated: true, searched_paths: ["a.txt"] });
    expect(positions(r)).toEqual(["a.txt:1:3"]);
    expect(r.note).toContain("min.js");

    // the runaway worker was terminated: the process is idle, not burning a core. The least of up to three windows
    // of 400 ms: other work of this test process (an earlier file's background work, a collection) can take much
    // of one window on a slow machine, never all three, while a worker still running takes all of each.
    let least = Infinity;
    for (let w = 0; w < 3 && least >= 200; w++) {
      const before = process.cpuUsage();
      await Bun.sleep(400);
      const used = process.cpuUsage(before);
      least = Math.min(least, (used.user + used.system) / 1000);
    }
    expect(least).toBeLessThan(200);

    // other work still runs, on the main thread and on a fresh worker
    expect(positions(await grepAll(tree, { pattern: "y = 2", fixedStrings: true }))).toEqual(["z.txt:1:1"]);
    expect(positions(await grepAll(tree, { pattern: "\\w+ = \\d+" }))).toEqual(["a.txt:1:1", "z.txt:1:1"]);
    const resumed = await grep(memCandidates({ "min.js": "b = 3\n", "z.txt": "y = 2\n" }), { pattern: "\\w*\\w*\\w*\\w*=", queryKey: "test", cursor: r.cursor });
    expect(positions(resumed)).toEqual(["min.js:1:3", "z.txt:1:3"]);
  }, 30_000);

  test("a quadratic pattern runs in-process on short lines only: on a long line it is in the child, and times out there", async () => {
    const tree = { "a.txt": "12x 34 x\n", "data.txt": `${"1".repeat(200_000)} x\n`, "z.txt": "5x\n" };
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const r = await grepAll(tree, { pattern: "\\d+x", timeBudgetMs: 500 });
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(5);
    expect(r).toMatchObject({ timed_out: true, searched_paths: ["a.txt"] });
    expect(positions(r)).toEqual(["a.txt:1:1"]);
    expect(positions(await grepAll({ "a.txt": tree["a.txt"], "z.txt": tree["z.txt"] }, { pattern: "\\d+x" }))).toEqual(["a.txt:1:1", "z.txt:1:1"]);
  }, 30_000);

  test("two searches at once: one stuck, one quick; each has its own regex processes, so the quick one is not held up", async () => {
    const stuck = grepAll({ "min.js": `${"a".repeat(30_000)}!=\n` }, { pattern: "\\w*\\w*\\w*\\w*=", timeBudgetMs: 1_000 });
    const quick = await grepAll({ "a.txt": "foo(bar)\n" }, { pattern: "\\w+\\s*\\(", timeBudgetMs: 60_000 });
    expect(planRegex("\\w+\\s*\\(", false)).toMatchObject({ inline: false, quadraticWays: null }); // runs in a child
    expect(positions(quick)).toEqual(["a.txt:1:1"]);
    expect((await stuck).timed_out).toBe(true);
  }, 30_000);
});
