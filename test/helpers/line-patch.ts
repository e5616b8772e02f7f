/** Numbered text files and one-hunk patches over them, for tests that edit through the tools. */

/** n unique lines: "name 1" ... "name n". */
export const numbered = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name} ${i + 1}`);

export const text = (lines: string[]) => `${lines.join("\n")}\n`;

/** A one-hunk patch: at 0-based `at`, remove `remove` lines of `lines` and insert `insert`, with 3 lines of context. */
export function patch(path: string, lines: string[], at: number, remove: number, insert: string[]): string {
  const lo = Math.max(0, at - 3);
  const hi = Math.min(lines.length, at + remove + 3);
  const before = lines.slice(lo, at).map((l) => ` ${l}`);
  const removed = lines.slice(at, at + remove).map((l) => `-${l}`);
  const added = insert.map((l) => `+${l}`);
  const after = lines.slice(at + remove, hi).map((l) => ` ${l}`);
  const oldCount = hi - lo;
  const newCount = oldCount - remove + insert.length;
  return `--- a/${path}\n+++ b/${path}\n@@ -${lo + 1},${oldCount} +${lo + 1},${newCount} @@\n${[...before, ...removed, ...added, ...after].join("\n")}\n`;
}

/** `lines` with the edit `patch` makes. */
export function edited(lines: string[], at: number, remove: number, insert: string[]): string[] {
  const out = [...lines];
  out.splice(at, remove, ...insert);
  return out;
}
