/** Text for the page: HTML escaping, short ids, times, counts. No DOM, so tests run it as it is. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text for HTML, attribute values included. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export const shortId = (id: string) => id.slice(0, 8);

/** "conv_1795316276355_e898fa9d25a9" -> "conv_…e898fa9d25a9"; other ids stay as they are when short. */
export function shortConv(id: string): string {
  const m = /^conv_\d+_([0-9a-f]+)$/.exec(id);
  if (m) return `conv…${m[1]!.slice(0, 8)}`;
  return id.length > 28 ? `${id.slice(0, 26)}…` : id;
}

/** The history's microsecond timestamps as a Date (milliseconds are enough here). */
export function when(ts: string): Date {
  return new Date(`${ts.slice(0, 23)}Z`);
}

export function ago(ts: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - when(ts).getTime()) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  return d < 30 ? `${d} d ago` : when(ts).toISOString().slice(0, 10);
}

export function fullTime(ts: string): string {
  return `${ts.slice(0, 19).replace("T", " ")} UTC`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
