/**
 * Generated file edits for the round-trip tests: hand-picked edge cases plus
 * seeded random edits. Each case is a list of (from, to) file pairs.
 */
import type { DiffSide } from "../../../src/ops/diff/unified";
import type { FileMode } from "../../../src/core/file-mode";
import { enc, rng, type Tree } from "./fixtures";

export interface FilePair {
  from: DiffSide | null;
  to: DiffSide | null;
}
export interface EditCase {
  name: string;
  pairs: FilePair[];
  /** RepoPath refuses the path (a backslash), so only git can apply it. */
  gitOnly?: boolean;
}

const side = (path: string, text: string | Uint8Array, mode: FileMode = "100644"): DiffSide => ({
  path,
  bytes: typeof text === "string" ? enc(text) : text,
  mode,
});
const lines = (n: number, eol = "\n", tag = "line") => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}${eol}`).join("");

export function edgeCases(): EditCase[] {
  const ten = lines(10);
  return [
    { name: "insert at start", pairs: [{ from: side("a.txt", ten), to: side("a.txt", "new first\n" + ten) }] },
    { name: "insert at end", pairs: [{ from: side("a.txt", ten), to: side("a.txt", ten + "new last\n") }] },
    { name: "delete everything", pairs: [{ from: side("a.txt", ten), to: side("a.txt", "") }] },
    { name: "fill an empty file", pairs: [{ from: side("a.txt", ""), to: side("a.txt", ten) }] },
    { name: "replace every line", pairs: [{ from: side("a.txt", ten), to: side("a.txt", lines(7, "\n", "other")) }] },
    { name: "crlf edit", pairs: [{ from: side("w.txt", lines(12, "\r\n")), to: side("w.txt", lines(12, "\r\n").replace("line 6\r\n", "six\r\n")) }] },
    { name: "crlf to lf", pairs: [{ from: side("w.txt", lines(5, "\r\n")), to: side("w.txt", lines(5)) }] },
    { name: "mixed endings", pairs: [{ from: side("m.txt", "a\r\nb\nc\r\nd\n"), to: side("m.txt", "a\r\nB\nc\r\nd\r\n") }] },
    { name: "old side without final newline", pairs: [{ from: side("n.txt", "a\nb\nc"), to: side("n.txt", "a\nb\nc\nd\n") }] },
    { name: "new side without final newline", pairs: [{ from: side("n.txt", "a\nb\nc\n"), to: side("n.txt", "a\nb\nc") }] },
    { name: "both without final newline", pairs: [{ from: side("n.txt", "a\nb\nc"), to: side("n.txt", "a\nB\nc") }] },
    { name: "unchanged last line without newline", pairs: [{ from: side("n.txt", ten + "tail"), to: side("n.txt", "head\n" + ten + "tail") }] },
    { name: "single line no newline to other", pairs: [{ from: side("n.txt", "x"), to: side("n.txt", "y") }] },
    { name: "unicode", pairs: [{ from: side("ü/naïve €.txt", "grüße\n日本語\n🙂 emoji\n"), to: side("ü/naïve €.txt", "grüße\n中文\n🙂 emoji\n\u{1F600}\n") }] },
    { name: "byte order mark", pairs: [{ from: side("bom.txt", "\uFEFFa\nb\n"), to: side("bom.txt", "\uFEFFa\nc\n") }] },
    { name: "create empty file", pairs: [{ from: null, to: side("empty.txt", "") }] },
    { name: "delete empty file", pairs: [{ from: side("empty.txt", ""), to: null }] },
    { name: "create", pairs: [{ from: null, to: side("dir/new.txt", ten) }] },
    { name: "create without newline", pairs: [{ from: null, to: side("new.txt", "only") }] },
    { name: "delete", pairs: [{ from: side("old.txt", ten), to: null }] },
    { name: "delete without newline", pairs: [{ from: side("old.txt", "a\nb"), to: null }] },
    { name: "mode change only", pairs: [{ from: side("run.sh", "#!/bin/sh\n"), to: side("run.sh", "#!/bin/sh\n", "100755") }] },
    { name: "mode change and edit", pairs: [{ from: side("run.sh", "#!/bin/sh\necho\n", "100755"), to: side("run.sh", "#!/bin/sh\necho hi\n") }] },
    { name: "create executable", pairs: [{ from: null, to: side("bin/tool", "#!/bin/sh\n", "100755") }] },
    { name: "rename", pairs: [{ from: side("old/name.txt", ten), to: side("new/name.txt", ten) }] },
    { name: "rename and edit", pairs: [{ from: side("a.txt", ten), to: side("b.txt", ten.replace("line 5", "five")) }] },
    { name: "rename with mode change", pairs: [{ from: side("s.sh", "x\n"), to: side("bin/t.sh", "x\ny\n", "100755") }] },
    { name: "path with space", pairs: [{ from: side("sp ace.txt", "a\n"), to: side("sp ace.txt", "b\n") }] },
    { name: "path with tab and quote", pairs: [{ from: side('t\tab "q".txt', "a\n"), to: side('t\tab "q".txt', "b\n") }] },
    { name: "path with backslash", gitOnly: true, pairs: [{ from: null, to: side("back\\slash.txt", "x\n") }] },
    { name: "symlink create", pairs: [{ from: null, to: side("link", "target/file.txt", "120000") }] },
    { name: "symlink retarget", pairs: [{ from: side("link", "a.txt", "120000"), to: side("link", "b.txt", "120000") }] },
    { name: "file becomes symlink", pairs: [{ from: side("x", "content\n"), to: side("x", "elsewhere", "120000") }] },
    { name: "two distant changes", pairs: [{ from: side("a.txt", lines(40)), to: side("a.txt", lines(40).replace("line 3\n", "3\n").replace("line 37\n", "37\n")) }] },
    { name: "changes whose contexts touch", pairs: [{ from: side("a.txt", lines(20)), to: side("a.txt", lines(20).replace("line 3\n", "3\n").replace("line 10\n", "10\n")) }] },
    { name: "changes one line further apart", pairs: [{ from: side("a.txt", lines(20)), to: side("a.txt", lines(20).replace("line 3\n", "3\n").replace("line 11\n", "11\n")) }] },
    { name: "repeated lines", pairs: [{ from: side("r.txt", "}\n}\n}\nx\n}\n}\n"), to: side("r.txt", "}\n}\nx\n}\n}\n}\n}\n") }] },
    {
      name: "several files",
      pairs: [
        { from: side("a.txt", ten), to: side("a.txt", ten.replace("line 2", "two")) },
        { from: null, to: side("b.txt", "bee\n") },
        { from: side("c.txt", "sea\n"), to: null },
        { from: side("d.txt", "dee\n"), to: side("e.txt", "dee\n") },
      ],
    },
  ];
}

const POOL = ["alpha", "beta", "", "  indented", "}", "{", "€uro ünïcode", "🙂", "\t tabbed", "return x;", "// comment", "a b c"];

/** Seeded random edits of random files: the pairs of one case use distinct paths. */
export function randomCases(seed: number, count: number): EditCase[] {
  const r = rng(seed);
  const cases: EditCase[] = [];
  for (let c = 0; c < count; c++) {
    const crlf = r.next() < 0.2;
    const eol = () => (crlf ? "\r\n" : r.next() < 0.05 ? "\r\n" : "\n");
    const n = r.int(40);
    let old: string[] = [];
    for (let i = 0; i < n; i++) old.push(r.next() < 0.5 ? r.pick(POOL) : `line ${r.int(30)}`);
    let edited = [...old];
    const edits = 1 + r.int(5);
    for (let e = 0; e < edits; e++) {
      const at = r.int(edited.length + 1);
      const kind = r.int(3);
      const len = 1 + r.int(4);
      const fresh = Array.from({ length: len }, () => (r.next() < 0.5 ? r.pick(POOL) : `new ${r.int(1000)}`));
      if (kind === 0) edited.splice(at, 0, ...fresh);
      else if (kind === 1) edited.splice(at, len);
      else edited.splice(at, len, ...fresh);
    }
    const render = (xs: string[], final: boolean) => {
      const ends = xs.map(() => eol());
      let s = xs.map((x, i) => x + ends[i]).join("");
      if (!final && s.length > 0) s = s.replace(/\r?\n$/, "");
      return s;
    };
    const oldText = render(old, r.next() < 0.85);
    let newText = render(edited, r.next() < 0.85);
    if (oldText === newText) newText += "changed\n";
    cases.push({ name: `random ${seed}/${c}`, pairs: [{ from: side(`r${c}.txt`, oldText), to: side(`r${c}.txt`, newText) }] });
    old = [];
    edited = [];
  }
  return cases;
}

export function treesOf(pairs: FilePair[]): { from: Tree; to: Tree } {
  const from: Tree = new Map();
  const to: Tree = new Map();
  for (const p of pairs) {
    if (p.from) from.set(p.from.path, { bytes: p.from.bytes, mode: p.from.mode });
    if (p.to) to.set(p.to.path, { bytes: p.to.bytes, mode: p.to.mode });
  }
  return { from, to };
}
