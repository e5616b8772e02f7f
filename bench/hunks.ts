/** Generated patches for the patch benchmarks: hunks over generated files, as `git diff` would write them. */
import type { Rng } from "./gen-repo.ts";

/** `count` hunks spread over the file, 3 lines of context, the stated lines shifted by `skew` (0 = exact). */
export function hunksFor(r: Rng, lines: string[], count: number, skew: () => number): string {
  let out = "";
  let delta = 0;
  const segment = Math.floor(lines.length / count);
  for (let h = 0; h < count; h++) {
    const at = h * segment + 4 + r.int(Math.max(1, segment - 12));
    const kind = r.int(3); // 0 replace, 1 insert, 2 delete
    const removed = kind === 1 ? 0 : 1 + r.int(2);
    const added = kind === 2 ? [] : Array.from({ length: 1 + r.int(2) }, (_, k) => `  // edited ${h}.${k}: ${r.u32().toString(36)}\n`);
    const before = lines.slice(at - 3, at);
    const old = lines.slice(at, at + removed);
    const after = lines.slice(at + removed, at + removed + 3);
    const oldCount = before.length + old.length + after.length;
    const newCount = before.length + added.length + after.length;
    // git anchors a hunk stated at line 1 to the start of the file, so a skew never lands there.
    const exact = at - 3 + 1;
    const shift = skew();
    const oldStart = exact + shift >= 2 ? exact + shift : exact + Math.abs(shift);
    out += `@@ -${oldStart},${oldCount} +${oldStart + delta},${newCount} @@\n`;
    for (const l of before) out += " " + l;
    for (const l of old) out += "-" + l;
    for (const l of added) out += "+" + l;
    for (const l of after) out += " " + l;
    delta += added.length - removed;
  }
  return out;
}

