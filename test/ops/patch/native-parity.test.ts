/**
 * The native hunk reader and apply (src/native/patch_hunks.c) against the
 * TypeScript ones: on random files and patches bent every way a model or an
 * editor bends them (hunks moved off their stated line, counts that lie,
 * blank lines stripped or added, garbage, signatures, "\ No newline", CRLF,
 * insertions, hunks that match nowhere or at several places), the parse and
 * the apply give the same result, byte for byte and reject for reject. The
 * native side must also have done the work in most cases, or this proves
 * nothing.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { knowsSha256, rememberSha256, sha256Of } from "../../../src/core/content-hash";
import { applyHunks, applyHunksMany } from "../../../src/ops/patch/apply";
import { byteStringToBytes } from "../../../src/ops/patch/byte-string";
import { parsePatch, type ParsedPatch } from "../../../src/ops/patch/parse";
import type { PatchHunk } from "../../../src/ops/patch/types";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { nativeModule } from "../../../src/repo/native";
import { rng } from "./fixtures";

const native = nativeModule();

/** A few distinct lines, so that old sides repeat and the nearest match and its ties matter. */
const WORDS = ["a", "b", "c", "}", "  x = 1;", "", "\t", "é", "a\r", "dup", "dup", "dup"];

type Rng = ReturnType<typeof rng>;

function randomFile(r: Rng): string {
  const n = r.int(40);
  const eol = r.int(5) === 0 ? "\r\n" : "\n";
  const lines = Array.from({ length: n }, () => r.pick(WORDS));
  const text = lines.map((l) => l + eol).join("");
  return r.int(6) === 0 && text !== "" ? text.slice(0, -eol.length) : text;
}

function edited(r: Rng, text: string): string {
  const lines = text.split("\n");
  for (let e = r.int(5) + 1; e > 0; e--) {
    const at = r.int(lines.length + 1);
    lines.splice(at, r.int(4), ...Array.from({ length: r.int(4) }, () => r.pick(WORDS) + r.pick(["", "", "!", "?"])));
  }
  return lines.join("\n");
}

const latin1 = (s: string) => Buffer.from(s, "utf8").toString("latin1");

/** The patch's lines bent: each way picked now and then, several at once. */
function bend(r: Rng, patch: string): string {
  let lines = patch.split("\n");
  const hunkHeaders = () => lines.flatMap((l, i) => (l.startsWith("@@ ") ? [i] : []));
  for (let k = r.int(4); k > 0; k--) {
    const heads = hunkHeaders();
    const h = heads.length > 0 ? r.pick(heads) : -1;
    switch (r.int(13)) {
      case 0: // the hunk moved: its stated line off by a few lines or by many
        if (h >= 0) lines[h] = lines[h]!.replace(/^@@ -(\d+)/, (_, n) => `@@ -${Math.max(0, Number(n) + r.pick([-3, -1, 1, 2, 7, 40, 1000]))}`);
        break;
      case 1: // a count that lies
        if (h >= 0) lines[h] = lines[h]!.replace(/,(\d+) @@/, (_, n) => `,${Number(n) + r.pick([-1, 1, 3])} @@`);
        break;
      case 2: // a context line's space stripped by an editor
        lines = lines.map((l) => (l === " " ? "" : l));
        break;
      case 3: // garbage after a hunk line
        if (h >= 0) lines.splice(h + 1 + r.int(3), 0, r.pick(["garbage", "", "@@ broken", "-- ", "\\ No newline at end of file"]));
        break;
      case 4: // a context line that is not in the file
        if (h >= 0 && lines[h + 1]?.startsWith(" ")) lines[h + 1] = " not in the file";
        break;
      case 5: // a signature after the patch
        lines.push("-- ", "2.43.0", "");
        break;
      case 6: // blank lines between hunks or at the end
        if (h >= 0) lines.splice(h, 0, "");
        break;
      case 7: // CRLF header lines
        lines = lines.map((l) => (l.startsWith("@@") || l.startsWith("---") || l.startsWith("+++") ? l + "\r" : l));
        break;
      case 8: // a header without counts, or with absurd ones
        if (h >= 0) lines[h] = r.pick(["@@ -1 +1 @@", "@@ -0,0 +1 @@", "@@ -0,0 +0,0 @@", "@@ -1234567890,1 +1 @@", "@@ -3,0 +4,2 @@ fn", "@@"]);
        break;
      case 9: // no final newline on the patch
        while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
        break;
      case 10: // a line restated: removed and added back unchanged at the edge of a change
        if (h >= 0 && lines[h + 1]?.startsWith(" ")) lines.splice(h + 1, 1, "-" + lines[h + 1]!.slice(1), "+" + lines[h + 1]!.slice(1));
        break;
      case 11: // the same file patched twice: the second section again
        lines = [...lines, ...lines.slice(lines.findIndex((l) => l.startsWith("--- ")))];
        break;
      default: // a hunk swapped with the next
        if (heads.length >= 2) {
          const i = r.int(heads.length - 1);
          const a = lines.slice(heads[i]!, heads[i + 1]!);
          const end = heads[i + 2] ?? lines.length;
          const b = lines.slice(heads[i + 1]!, end);
          lines.splice(heads[i]!, end - heads[i]!, ...b, ...a);
        }
    }
  }
  return lines.join("\n");
}

/** The file the patch meets: as it was diffed, or drifted since (lines added or gone, the final newline changed, doubled). */
function drifted(r: Rng, text: string): string {
  switch (r.int(6)) {
    case 0:
      return text.endsWith("\n") ? text.slice(0, -1) : text + "\n";
    case 1: {
      const lines = text.split("\n");
      for (let k = r.int(3) + 1; k > 0; k--) lines.splice(r.int(lines.length + 1), r.int(2), ...Array.from({ length: r.int(3) }, () => r.pick(WORDS)));
      return lines.join("\n");
    }
    case 2:
      return text + text;
    default:
      return text;
  }
}

/** A parse as plain data: every hunk's lines read, the native body pointer left out. */
function plain(p: ParsedPatch): unknown {
  const hunk = (h: PatchHunk) => ({ index: h.index, oldStart: h.oldStart, oldLines: h.oldLines, newStart: h.newStart, newLines: h.newLines, header: h.header, lines: h.lines });
  return { files: p.files.map((f) => ({ ...f, hunks: f.hunks.map(hunk) })), warnings: p.warnings, rejects: p.rejects };
}

/** The patch bytes, line starts and hunk triples of a one-file parse, as patchApply takes them. */
function sourceOf(p: ParsedPatch): [Uint8Array, Uint32Array, Int32Array] {
  const hunks = p.files[0]!.hunks;
  const { bytes, starts } = hunks[0]!.body!.patch;
  return [bytes, starts, new Int32Array(hunks.flatMap((h) => [h.body!.from, h.body!.to, h.oldStart]))];
}

describe.skipIf(native === null)("the native hunk reader and apply", () => {
  test("parse and apply as the TypeScript does on 4,000 bent patches, doing most of the work natively", () => {
    const r = rng(20261129);
    let hunksRead = 0;
    let nativeHunks = 0;
    let applies = 0;
    let nativeApplies = 0;
    let applied = 0;
    for (let c = 0; c < 4000; c++) {
      const before = randomFile(r);
      const after = edited(r, before);
      const diffed = byteStringToBytes(latin1(before));
      const from = byteStringToBytes(latin1(drifted(r, before)));
      const diff = unifiedDiff({ path: "f.txt", bytes: diffed, mode: "100644" }, { path: "f.txt", bytes: byteStringToBytes(latin1(after)), mode: "100644" }, { context: r.int(4) });
      if (diff === "") continue;
      const patch = c % 4 === 0 ? diff : bend(r, diff);
      const fast = parsePatch(patch, native);
      const slow = parsePatch(patch, null);
      const context = `case ${c}\n--- file ---\n${JSON.stringify(before)}\n--- patch ---\n${patch}`;
      try {
        expect(plain(fast)).toEqual(plain(slow));
      } catch (e) {
        throw new Error(`${context}\n${String(e)}`);
      }
      const bytes = byteStringToBytes(latin1(patch));
      nativeHunks += native!.patchHunks(bytes, native!.lineStarts(bytes)!).length / 6;
      for (const [k, file] of fast.files.entries()) {
        hunksRead += file.hunks.length;
        applies++;
        const spec = new Int32Array(file.hunks.flatMap((h) => (h.body ? [h.body.from, h.body.to, h.oldStart] : [])));
        if (file.hunks.length > 0 && spec.length === 3 * file.hunks.length && native!.patchApply(from, file.hunks[0]!.body!.patch.bytes, file.hunks[0]!.body!.patch.starts, spec)) nativeApplies++;
        const a = applyHunks(from, file.hunks, native);
        const b = applyHunks(from, slow.files[k]!.hunks, null);
        if (a.ok) applied++;
        try {
          expect(a).toEqual(b);
        } catch (e) {
          throw new Error(`${context}\n${String(e)}`);
        }
      }
    }
    // the native reader took the hunks the TypeScript would have read without a word, the apply most files
    expect(nativeHunks / hunksRead).toBeGreaterThan(0.6);
    expect(nativeApplies / applies).toBeGreaterThan(0.4);
    expect(applied).toBeGreaterThan(nativeApplies);
  });

  test("many files of one patch applied at once, on every core, give what each file's own apply gives, and each old and new file's SHA-256", () => {
    const r = rng(20261130);
    const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    let applied = 0;
    let hashed = 0;
    let files = 0;
    for (let round = 0; round < 8; round++) {
      // even rounds: files of ~18 KB, over the threshold at which the apply starts threads
      const pad = round % 2 === 0 ? "pad\n".repeat(4500) : "";
      const met = new Map<string, Uint8Array>();
      const sections: string[] = [];
      for (let k = 0, n = 60 + r.int(60); k < n; k++) {
        const before = pad + randomFile(r);
        const after = k % 17 === 0 ? "" : edited(r, before); // a file emptied: its new bytes are none
        const path = `d${k % 7}/f${k}.txt`;
        met.set(path, byteStringToBytes(latin1(drifted(r, before))));
        const diff = unifiedDiff({ path, bytes: byteStringToBytes(latin1(before)), mode: "100644" }, { path, bytes: byteStringToBytes(latin1(after)), mode: "100644" }, { context: r.int(4) });
        sections.push(k % 3 === 0 ? bend(r, diff) : diff);
      }
      const patch = sections.join("");
      const pick = (p: ParsedPatch) => p.files.filter((f) => f.oldPath !== null && met.has(f.oldPath));
      const fast = pick(parsePatch(patch, native));
      const slow = pick(parsePatch(patch, null));
      expect(fast.length).toBe(slow.length);
      const items = fast.map((f) => ({ bytes: met.get(f.oldPath!)!, hunks: f.hunks }));
      const many = applyHunksMany(items, native);
      for (let k = 0; k < items.length; k++) {
        files++;
        expect(many[k]).toEqual(applyHunks(items[k]!.bytes, slow[k]!.hunks, null));
        expect(knowsSha256(items[k]!.bytes)).toBe(true);
        expect(sha256Of(items[k]!.bytes)).toBe(sha(items[k]!.bytes));
        const m = many[k]!;
        if (!m.ok) continue;
        applied++;
        // the native apply's results come hashed (a file it declined was applied by the TypeScript, unhashed)
        if (!knowsSha256(m.bytes)) continue;
        hashed++;
        expect(sha256Of(m.bytes)).toBe(sha(m.bytes));
      }
    }
    expect(applied).toBeGreaterThan(files / 2);
    expect(hashed).toBeGreaterThan(applied / 2);
  });

  test("an old file whose SHA-256 is known already is not hashed again; its new bytes still are", () => {
    const parsed = parsePatch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+z\n", native);
    const known = byteStringToBytes("x\n");
    const fresh = byteStringToBytes("x\n");
    rememberSha256(known, "0".repeat(64)); // a digest the native call would not give: kept only if it is not recomputed
    const [a, b] = applyHunksMany([
      { bytes: known, hunks: parsed.files[0]!.hunks },
      { bytes: fresh, hunks: parsed.files[1]!.hunks },
    ], native);
    expect(sha256Of(known)).toBe("0".repeat(64));
    expect(sha256Of(fresh)).toBe(createHash("sha256").update(fresh).digest("hex"));
    expect(a!.ok && knowsSha256(a!.bytes) && sha256Of(a!.bytes)).toBe(createHash("sha256").update("y\n").digest("hex"));
    expect(b!.ok && knowsSha256(b!.bytes) && sha256Of(b!.bytes)).toBe(createHash("sha256").update("z\n").digest("hex"));
  });

  test("a file emptied by the native apply is remembered with the SHA-256 of no bytes", () => {
    const parsed = parsePatch("--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n", native);
    const items = [
      { bytes: byteStringToBytes("a\nb\n"), hunks: parsed.files[0]!.hunks },
      { bytes: byteStringToBytes("x\n"), hunks: parsed.files[1]!.hunks },
    ];
    const [emptied, changed] = applyHunksMany(items, native);
    expect(emptied!.ok && emptied!.bytes.length).toBe(0);
    expect(emptied!.ok && sha256Of(emptied!.bytes)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(changed!.ok && Buffer.from(changed!.bytes).toString()).toBe("y\n");
  });

  test("the parser takes every hunk the native reader read from the reader (a reader whose numbers are marked shows in each)", () => {
    const files = Array.from({ length: 40 }, (_, k) => `--- a/f${k}\n+++ b/f${k}\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n@@ -10,1 +10,1 @@\n-x\n+y\n`);
    const marked = {
      ...native!,
      lineStarts: (b: Uint8Array) => native!.lineStarts(b),
      patchHunks: (b: Uint8Array, s: Uint32Array) => native!.patchHunks(b, s).map((v, k) => (k % 6 === 1 ? v + 1000 : v)),
    };
    const parsed = parsePatch(files.join(""), marked);
    expect(parsed.files.flatMap((f) => f.hunks.map((h) => h.oldStart))).toEqual(files.flatMap(() => [1001, 1010]));
  });

  test("applyHunks answers with the native apply's bytes when it applies, and with the TypeScript's when it declines", () => {
    let answered: Uint8Array | null = null;
    const probe = {
      ...native!,
      patchApply: (...args: Parameters<NonNullable<typeof native>["patchApply"]>) => {
        const r = native!.patchApply(...args);
        answered = r ? r[0] : null;
        return r;
      },
    };
    const file = byteStringToBytes("a\nb\nc\n");
    const plainPatch = parsePatch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", native).files[0]!.hunks;
    const applied = applyHunks(file, plainPatch, probe);
    expect(applied.ok && applied.bytes).toBe(answered!);
    const insertion = parsePatch("--- a/f\n+++ b/f\n@@ -1,0 +2,1 @@\n+new\n", native).files[0]!.hunks;
    const inserted = applyHunks(file, insertion, probe);
    expect(answered).toBeNull();
    expect(inserted.ok && Buffer.from(inserted.bytes).toString("latin1")).toBe("a\nnew\nb\nc\n");
  });

  test("a hunk stated far past the end of a long file, or before the previous one, is placed by the nearest match or declined", () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i % 1000}`);
    const file = byteStringToBytes(lines.join("\n") + "\n");
    const far = "--- a/f\n+++ b/f\n@@ -999999999,2 +999999999,2 @@\n line 998\n-line 999\n+changed\n";
    const fast = applyHunks(file, parsePatch(far, native).files[0]!.hunks, native);
    const slow = applyHunks(file, parsePatch(far, null).files[0]!.hunks, null);
    expect(fast).toEqual(slow);
    expect(fast.ok && fast.offsets).toEqual([{ index: 0, offset: 199_998 - 999_999_998 }]);
    const overlap = "--- a/f\n+++ b/f\n@@ -5,1 +5,1 @@\n-line 4\n+four\n@@ -4,1 +4,1 @@\n-line 3\n+three\n";
    expect(applyHunks(file, parsePatch(overlap, native).files[0]!.hunks, native)).toEqual(applyHunks(file, parsePatch(overlap, null).files[0]!.hunks, null));
  });

  test("two matches at the same distance from the stated line: the earlier, near it and beyond the window searched first", () => {
    const tie = (text: string, stated: number) => {
      const patch = `--- a/f\n+++ b/f\n@@ -${stated},2 +${stated},2 @@\n A\n-B\n+Z\n`;
      const file = byteStringToBytes(text);
      const fast = applyHunks(file, parsePatch(patch, native).files[0]!.hunks, native);
      expect(fast).toEqual(applyHunks(file, parsePatch(patch, null).files[0]!.hunks, null));
      expect(native!.patchApply(file, ...sourceOf(parsePatch(patch, native)))).not.toBeNull();
      return fast.ok ? Buffer.from(fast.bytes).toString("latin1") : "rejected";
    };
    expect(tie("A\nB\nA\nB\n", 2)).toBe("A\nZ\nA\nB\n");
    const q = "q\n".repeat(150);
    expect(tie(`A\nB\n${q}${q}A\nB\n`, 152)).toBe(`A\nZ\n${q}${q}A\nB\n`);
  });

  test("an old line that ends the file without a newline does not match a hunk line that has one", () => {
    const patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    for (const text of ["a\nb", "a\nbc", "x\na\nb", "a\nb\nx\na\nb"]) {
      const file = byteStringToBytes(text);
      const fast = applyHunks(file, parsePatch(patch, native).files[0]!.hunks, native);
      expect(fast).toEqual(applyHunks(file, parsePatch(patch, null).files[0]!.hunks, null));
      expect(fast.ok ? Buffer.from(fast.bytes).toString("latin1") : "rejected").toBe(text === "a\nb\nx\na\nb" ? "a\nc\nx\na\nb" : "rejected");
    }
  });

  test("headers and bodies the TypeScript reads with a warning or rejects are read alike", () => {
    const bodies = [
      "@@ -1234567890 +1 @@\n-a\n+b\n",
      "@@ -123456789 +1 @@\n-a\n+b\n",
      "@@ -0,0 +0,0 @@\n",
      "@@ -1,x +1 @@\n-a\n+b\n",
      "@@ -1 +1 @@\r\n-a\n+b\n",
      "@@ -1,1 +1,1 @@ heading\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
      "@@ -1,1 +1,1 @@\n\\ No newline at end of file\n-a\n+b\n",
      "@@ -1,1 +1,2 @@\n-a\n\\ No newline at end of file\n+b\n-c\n",
      "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n\n d\n",
      "@@ -1,2 +1,2 @@\n a\n-b\n+c\n-- \n2.4\n",
      "@@ -1,2 +1,2 @@\n a\n-b\n+c\n-- \n d\n",
    ];
    for (const body of bodies) {
      const patch = `--- a/f\n+++ b/f\n${body}`;
      expect(plain(parsePatch(patch, native))).toEqual(plain(parsePatch(patch, null)));
    }
  });

  test("a hunk line without newline is placed only at the end of the file, whatever the file's next line says", () => {
    const patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n";
    const file = byteStringToBytes("a\n No newline at end of file\n");
    const fast = applyHunks(file, parsePatch(patch, native).files[0]!.hunks, native);
    expect(fast).toEqual(applyHunks(file, parsePatch(patch, null).files[0]!.hunks, null));
    expect(fast.ok).toBe(false);
  });

  test("a line removed and added back unchanged is no line change", () => {
    const patch = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n-b\n-c\n+a\n+B\n+c\n";
    const file = byteStringToBytes("a\nb\nc\n");
    const fast = applyHunks(file, parsePatch(patch, native).files[0]!.hunks, native);
    expect(fast).toEqual(applyHunks(file, parsePatch(patch, null).files[0]!.hunks, null));
    expect(fast.ok && fast.lines).toEqual([{ oldStart: 1, oldEnd: 2, newStart: 1, newEnd: 2 }]);
  });
});
