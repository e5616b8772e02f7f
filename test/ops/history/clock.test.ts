/**
 * The history's clock (src/ops/history/clock.ts): a change set's timestamps, one microsecond apart, strictly after
 * the last one the store handed out, each the ISO text of its microsecond.
 */
import { describe, expect, test } from "bun:test";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { formatMicros, nextTimestamps, parseMicros } from "../../../src/ops/history/clock";
import { tmpDir } from "../../helpers/tmp-repo";

describe("nextTimestamps", () => {
  test("a large change set's timestamps cross milliseconds one microsecond apart, each as formatMicros writes it, after the last ones", async () => {
    await using d = tmpDir("ws-clock-");
    const store = new FsHistoryStore(`${d.path}/.mcp`);
    let last = 0;
    for (const n of [1, 2_500, 3, 1_001]) {
      const out = await nextTimestamps(store, n);
      expect(out.length).toBe(n);
      const first = parseMicros(out[0]!)!;
      expect(first).toBeGreaterThan(last);
      out.forEach((ts, i) => {
        expect(ts).toBe(formatMicros(first + i));
        expect(parseMicros(ts)).toBe(first + i);
      });
      last = parseMicros(out[n - 1]!)!;
    }
    // 2,500 microseconds span at least two millisecond boundaries
    expect(new Set((await nextTimestamps(store, 2_500)).map((ts) => ts.slice(0, 23))).size).toBeGreaterThanOrEqual(3);
  });

  test("a floor later than the clock (a conversation's last entry) is passed", async () => {
    await using d = tmpDir("ws-clock-");
    const store = new FsHistoryStore(`${d.path}/.mcp`);
    const floor = formatMicros(Date.now() * 1000 + 3_600_000_000_999);
    const [ts] = await nextTimestamps(store, 1, floor);
    expect(parseMicros(ts!)).toBe(parseMicros(floor)! + 1);
  });
});
