/**
 * The history's clock. Every entry and every review gets a timestamp that is
 * strictly greater than any handed out before in this repository (the last
 * one is kept in `clock`, read and written under the work-tree lock), with
 * microseconds, so sorting by timestamp is the one global order of edits
 * across conversations and processes, even when the system clock steps back.
 */
import type { HistoryStore } from "./store";

export function formatMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString(); // 2026-01-01T00:00:00.123Z
  return `${iso.slice(0, 23)}${String(us % 1000).padStart(3, "0")}Z`;
}

export function parseMicros(ts: string): number | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(ts);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(ms)) return null;
  return ms * 1000 + Number((m[2] ?? "").padEnd(6, "0"));
}

function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** `n` increasing timestamps after everything handed out so far; `floor` is a timestamp known to be in use. */
export async function nextTimestamps(store: HistoryStore, n: number, floor?: string): Promise<string[]> {
  const last = Math.max(parseMicros((await store.readClock()) ?? "") ?? 0, floor ? (parseMicros(floor) ?? 0) : 0);
  let t = Math.max(nowMicros(), last + 1);
  const out: string[] = [];
  // consecutive microseconds share their millisecond's ISO text: one Date per millisecond, not per timestamp
  let ms = -1;
  let prefix = "";
  for (let i = 0; i < n; i++, t++) {
    if (Math.floor(t / 1000) !== ms) {
      ms = Math.floor(t / 1000);
      prefix = formatMicros(t).slice(0, 23);
    }
    out.push(`${prefix}${String(t % 1000).padStart(3, "0")}Z`);
  }
  if (n > 0) await store.writeClock(out[n - 1]!);
  return out;
}
