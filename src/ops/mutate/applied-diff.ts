import type { LineChange } from "../../core/line-change";
import { recordDiff } from "../history/record-diff";
import { renderUnits, splitFileDiff } from "../snapshot/diff-split";
import type { AppliedChange } from "../write/write-path";

/** Diff text a write's answer carries; past it, whole hunks are left out and counted. */
export const APPLIED_DIFF_CHARS = 6_000;

export interface AppliedDiff {
  /** git-style unified diff of what the write changed, in path order; "" when nothing changed. */
  diff: string;
  /** Changed files whose diff is left out of `diff`, wholly or in part (the cap). */
  omitted: number;
}

/**
 * The change a write made, as the unified diff the edit history records for
 * it (3 lines of context; a patch's placed hunks rendered as they are, no
 * diff of the files), so the model sees what happened without reading the
 * files again. Diffs are made file by file only until the cap is reached:
 * a file that does not fit whole is cut at a hunk boundary, and the files
 * after it are only counted.
 */
export function appliedDiff(changes: AppliedChange[], lines: Map<string, LineChange[]>, cap = APPLIED_DIFF_CHARS): AppliedDiff {
  let diff = "";
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as AppliedChange;
    const text = recordDiff(c.from ?? c.path, c.before, c.path, c.after, lines.get(c.path)).diff;
    if (diff.length + text.length <= cap) {
      diff += text;
      continue;
    }
    const split = splitFileDiff(text);
    let units = 0;
    while (units < split.units && diff.length + renderUnits(split, 0, units + 1).length <= cap) units++;
    if (units > 0) diff += renderUnits(split, 0, units);
    return { diff, omitted: changes.length - i - (units === split.units ? 1 : 0) };
  }
  return { diff, omitted: 0 };
}
