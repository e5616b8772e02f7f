/**
 * How many lines a unified diff adds and removes. Hunk bodies are counted by
 * the lengths their headers give, so a removed line that reads "-- x" or an
 * added "++ y" is never taken for a file header.
 */
export interface DiffStat {
  added: number;
  removed: number;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

export function diffStat(diff: string): DiffStat {
  let added = 0;
  let removed = 0;
  let oldLeft = 0;
  let newLeft = 0;
  let at = 0;
  while (at < diff.length) {
    let end = diff.indexOf("\n", at);
    if (end < 0) end = diff.length;
    const first = diff.charCodeAt(at);
    if (oldLeft > 0 || newLeft > 0) {
      if (first === 43 /* + */) {
        added++;
        newLeft--;
      } else if (first === 45 /* - */) {
        removed++;
        oldLeft--;
      } else if (first === 32 /* space */ || end === at) {
        oldLeft--;
        newLeft--;
      }
      // "\ No newline at end of file" belongs to the line before it and counts as nothing.
    } else if (first === 64 /* @ */) {
      const m = HUNK.exec(diff.slice(at, Math.min(end, at + 80)));
      if (m) {
        oldLeft = m[1] === undefined ? 1 : Number(m[1]);
        newLeft = m[2] === undefined ? 1 : Number(m[2]);
      }
    }
    at = end + 1;
  }
  return { added, removed };
}
