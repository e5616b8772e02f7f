/**
 * Splits one file's unified diff text (as unifiedDiff renders it) into
 * units, so a diff too large for one answer can be paged at hunk boundaries.
 * A unit is one hunk, or a whole header-only block (mode change, empty file,
 * binary). A part that starts after a block's first hunk gets a plain
 * `diff --git`/`---`/`+++` header (mode and new/deleted lines belong to the
 * first part only) and its old-side line numbers are shifted by what the
 * earlier hunks added or removed, so each part applies exactly to the result
 * of applying the parts before it.
 */
interface Block {
  header: string;
  plainHeader: string;
  hunks: string[];
}

export interface SplitDiff {
  blocks: Block[];
  /** Units over all blocks: a block's hunks, or 1 for a block without hunks. */
  units: number;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function splitFileDiff(text: string): SplitDiff {
  const blocks: Block[] = [];
  let cur: Block | null = null;
  let hunk: string[] | null = null;
  let header: string[] = [];
  const flush = () => {
    if (cur && hunk) cur.hunks.push(hunk.join(""));
    hunk = null;
  };
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, end);
    pos = end;
    if (line.startsWith("diff --git ")) {
      flush();
      if (cur && cur.header === "") cur.header = header.join("");
      cur = { header: "", plainHeader: "", hunks: [] };
      blocks.push(cur);
      header = [line];
    } else if (line.startsWith("@@ ") && cur) {
      if (cur.header === "") cur.header = header.join("");
      flush();
      hunk = [line];
    } else if (hunk) {
      hunk.push(line);
    } else {
      header.push(line);
    }
  }
  flush();
  if (cur && cur.header === "") cur.header = header.join("");
  let units = 0;
  for (const b of blocks) {
    b.plainHeader = b.header
      .split("\n")
      .filter((l) => l.startsWith("diff --git ") || l.startsWith("--- ") || l.startsWith("+++ "))
      .map((l) => `${l}\n`)
      .join("");
    units += Math.max(1, b.hunks.length);
  }
  return { blocks, units };
}

/**
 * An upper bound of each unit's size as escaped JSON when it starts a part
 * (its header included, plus room for shifted line numbers).
 */
export function unitCosts(split: SplitDiff, measure: (s: string) => number): number[] {
  const costs: number[] = [];
  for (const block of split.blocks) {
    if (block.hunks.length === 0) costs.push(measure(block.header));
    block.hunks.forEach((h, j) => costs.push(measure(h) + measure(j === 0 ? block.header : block.plainHeader) + 16));
  }
  return costs;
}

/** Units [from, to) as diff text. */
export function renderUnits(split: SplitDiff, from: number, to: number): string {
  let out = "";
  let k = 0;
  for (const block of split.blocks) {
    if (block.hunks.length === 0) {
      if (k >= from && k < to) out += block.header;
      k++;
      continue;
    }
    let delta = 0;
    for (let j = 0; j < block.hunks.length; j++, k++) {
      const hunk = block.hunks[j] as string;
      if (k >= from && k < to) {
        if (j === 0) out += block.header;
        else if (k === from) out += block.plainHeader;
        out += delta === 0 ? hunk : shiftOld(hunk, delta);
      }
      if (k < from) delta += lineDelta(hunk);
    }
  }
  return out;
}

function lineDelta(hunk: string): number {
  const m = HUNK_HEADER.exec(hunk);
  if (!m) return 0;
  return Number(m[4] ?? 1) - Number(m[2] ?? 1);
}

function shiftOld(hunk: string, delta: number): string {
  return hunk.replace(HUNK_HEADER, (_all, os: string, oc: string | undefined, ns: string, nc: string | undefined) => {
    const old = `${Number(os) + delta}${oc === undefined ? "" : `,${oc}`}`;
    return `@@ -${old} +${ns}${nc === undefined ? "" : `,${nc}`} @@`;
  });
}
