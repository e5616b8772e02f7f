/**
 * One change between two versions of a text, in lines: old lines
 * [oldStart, oldEnd) became new lines [newStart, newEnd) (0-based). The diff
 * computes them, the patch engine reports the ones it placed, and the history
 * renders its diffs from them.
 */
export interface LineChange {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}
