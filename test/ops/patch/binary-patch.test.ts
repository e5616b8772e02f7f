/**
 * git's binary patches against real git, both ways: a patch `git diff --binary` makes (literal or delta
 * hunks) is applied by planPatch to the bytes git gives, and the binary patch worksnap's diff writes is
 * applied by `git apply` (and back by `git apply -R`) and by planPatch to the target tree. A binary patch
 * applies only to the exact bytes it was made from and must give the exact bytes it was made to give;
 * corrupt or tampered patches are rejects, never a throw and never wrong bytes.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { unifiedDiff } from "../../../src/ops/diff/unified";
import { applyDelta, binaryPatchText } from "../../../src/ops/patch/binary-patch";
import { planPatch } from "../../../src/ops/patch/plan";
import { tmpRepo } from "../../helpers/tmp-repo";
import type { FilePair } from "./edits";
import { applyPlan, commitTree, enc, file, git, gitTry, memoryTarget, readTree, rng, type Tree, treeRows } from "./fixtures";

function noise(seed: number, n: number): Uint8Array {
  const r = rng(seed);
  return Uint8Array.from({ length: n }, () => r.int(256));
}

function edited(bytes: Uint8Array, at: number, insert: string): Uint8Array {
  const b = Buffer.concat([bytes.subarray(0, at), Buffer.from(insert), bytes.subarray(at + insert.length)]);
  return new Uint8Array(b);
}

const big = noise(1, 200_000);
const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...noise(2, 300)]);

/** Binary changes, each a (from, to) tree pair: what git diff --binary and worksnap's diff must both carry. */
const CASES: { name: string; from: Tree; to: Tree; gitText?: boolean }[] = [
  { name: "a few bytes changed in a 200 KB file (git writes a delta)", from: new Map([["big.bin", file(big)]]), to: new Map([["big.bin", file(edited(big, 1000, "XXXXXXXXXX"))]]) },
  { name: "a new image", from: new Map(), to: new Map([["img/logo.png", file(png)]]) },
  { name: "an image deleted", from: new Map([["img/logo.png", file(png)]]), to: new Map() },
  { name: "a binary file becomes text", from: new Map([["f", file(png)]]), to: new Map([["f", file("now text\n")]]) },
  { name: "a text file becomes binary", from: new Map([["f", file("was text\n")]]), to: new Map([["f", file(png)]]) },
  { name: "Latin-1 text edited (text to git, not UTF-8 to worksnap's diff)", gitText: true, from: new Map([["l.txt", file(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))]]), to: new Map([["l.txt", file(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x78, 0x0a]))]]) },
  { name: "binary edit with a mode change", from: new Map([["run.bin", file(png)]]), to: new Map([["run.bin", file(edited(png, 20, "zz"), "100755")]]) },
  { name: "an empty file gets bytes, another loses them", from: new Map([["e.bin", file(new Uint8Array(0))], ["g.bin", file(png)]]), to: new Map([["e.bin", file(png)], ["g.bin", file(new Uint8Array(0))]]) },
  { name: "a large random file replaced whole (literal, many lines)", from: new Map([["r.bin", file(noise(3, 5000))]]), to: new Map([["r.bin", file(noise(4, 70_000))]]) },
];

function pairsOf(from: Tree, to: Tree): FilePair[] {
  const paths = [...new Set([...from.keys(), ...to.keys()])].sort();
  return paths.map((p) => ({ from: from.has(p) ? { path: p, ...from.get(p)! } : null, to: to.has(p) ? { path: p, ...to.get(p)! } : null }));
}

const oursOf = (from: Tree, to: Tree) => pairsOf(from, to).map((p) => unifiedDiff(p.from, p.to, { binary: true })).join("");

async function gitPatchOf(from: Tree, to: Tree): Promise<Uint8Array> {
  await using repo = await tmpRepo();
  const a = commitTree(repo.root, from, "from");
  const b = commitTree(repo.root, to, "to");
  return git(repo.root, ["diff", "--binary", a, b]);
}

describe("binary patches", () => {
  for (const c of CASES) {
    test(`git diff --binary, applied by planPatch: ${c.name}`, async () => {
      const patch = await gitPatchOf(c.from, c.to);
      if (!c.gitText) expect(Buffer.from(patch).toString("latin1")).toContain("GIT binary patch");
      const plan = await planPatch(patch, memoryTarget(c.from));
      expect(treeRows(applyPlan(c.from, plan))).toEqual(treeRows(c.to));
    });

    test(`worksnap's binary diff, applied by git apply, git apply -R and planPatch: ${c.name}`, async () => {
      const patch = oursOf(c.from, c.to);
      expect(patch).toContain("GIT binary patch");
      await using repo = await tmpRepo();
      commitTree(repo.root, c.from, "from");
      const r = gitTry(repo.root, ["apply", "-"], patch);
      expect(r.stderr).toBe("");
      expect(treeRows(readTree(repo.root))).toEqual(treeRows(c.to));
      const back = gitTry(repo.root, ["apply", "-R", "-"], patch);
      expect(back.stderr).toBe("");
      expect(treeRows(readTree(repo.root))).toEqual(treeRows(c.from));
      const plan = await planPatch(patch, memoryTarget(c.from));
      expect(treeRows(applyPlan(c.from, plan))).toEqual(treeRows(c.to));
    });
  }

  test("the diff is the same text from run to run, and without the option stays `Binary files ... differ`", () => {
    const c = CASES[0]!;
    expect(oursOf(c.from, c.to)).toBe(oursOf(c.from, c.to));
    const plain = pairsOf(c.from, c.to).map((p) => unifiedDiff(p.from, p.to)).join("");
    expect(plain).toBe("diff --git a/big.bin b/big.bin\nBinary files a/big.bin and b/big.bin differ\n");
  });

  test("a binary patch applies only to the bytes it was made from: another file's bytes, or the result already there, are context_mismatch, and nothing of the patch is planned", async () => {
    const c = CASES[0]!;
    const patch = Buffer.concat([await gitPatchOf(c.from, c.to), Buffer.from("--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-t\n+T\n")]);
    const other: Tree = new Map([["big.bin", file(edited(big, 5, "other"))], ["t.txt", file("t\n")]]);
    const p = await planPatch(patch, memoryTarget(other));
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.rejects.map((r) => [r.path, r.hunks.map((h) => h.reason)])).toEqual([["big.bin", ["context_mismatch"]]]);
    expect(p.rejects[0]!.hunks[0]!.message).toContain("does not match its current contents");
    const done: Tree = new Map([["big.bin", c.to.get("big.bin")!], ["t.txt", file("t\n")]]);
    const again = await planPatch(patch, memoryTarget(done));
    expect(!again.ok && again.rejects[0]!.hunks[0]!.message).toContain("it already holds the patch's result");
  });

  test("a `Binary files ... differ` patch is a reject that says how to make one that applies", async () => {
    const p = await planPatch("diff --git a/x.bin b/x.bin\nindex 1234567..89abcde 100644\nBinary files a/x.bin and b/x.bin differ\n", memoryTarget(new Map([["x.bin", file(png)]])));
    expect(!p.ok && p.rejects[0]!.hunks[0]).toMatchObject({ reason: "binary_patch_unsupported", message: expect.stringContaining("git diff --binary") });
  });

  test("corrupt or tampered binary patches are rejects with their reason, never a throw or other bytes", async () => {
    const c = CASES[0]!;
    const good = Buffer.from(await gitPatchOf(c.from, c.to)).toString("latin1");
    const lines = good.split("\n");
    const data = lines.findIndex((l) => /^delta \d+$/.test(l)) + 1;
    const stated = Number(lines[data - 1]!.slice(6));
    const tamper = (f: (ls: string[]) => void) => {
      const ls = [...lines];
      f(ls);
      return Buffer.from(ls.join("\n"), "latin1");
    };
    const cases: [string, Uint8Array, string, string][] = [
      ["a character outside base 85", tamper((ls) => (ls[data] = `${ls[data]!.slice(0, 5)}"${ls[data]!.slice(6)}`)), "malformed", "does not decode"],
      ["a length character that does not fit the line", tamper((ls) => (ls[data] = `A${ls[data]!.slice(1)}`)), "malformed", "does not decode"],
      ["data that does not inflate", tamper((ls) => (ls[data] = `${ls[data]!.slice(0, 1)}00000${ls[data]!.slice(6)}`)), "malformed", "corrupt binary patch"],
      ["a stated size that is not the data's", tamper((ls) => (ls[data - 1] = `delta ${stated + 1}`)), "malformed", "inflates to"],
      ["data that inflates past its stated size", tamper((ls) => (ls[data - 1] = `delta ${stated - 1}`)), "malformed", `inflates past the stated ${stated - 1} bytes`],
      ["a stated size over 256 MiB", tamper((ls) => (ls[data - 1] = "delta 300000000")), "malformed", "at most 268435456 bytes"],
      ["an abbreviated index line", tamper((ls) => (ls[1] = ls[1]!.replace(/([0-9a-f]{7})[0-9a-f]{33}\.\.([0-9a-f]{7})[0-9a-f]{33}/, "$1..$2"))), "malformed", "without a full index line"],
      ["a result id that is not the result's", tamper((ls) => (ls[1] = ls[1]!.replace(/\.\.[0-9a-f]{40}/, `..${"1".repeat(40)}`))), "malformed", "creates an incorrect result"],
    ];
    // the patch's trailing empty lines trimmed away (as text passed through a protocol may be): it still applies
    for (const trimmed of [good.trimEnd(), good.replace(/\n\n[\s\S]*$/, "")]) {
      const p = await planPatch(Buffer.from(trimmed, "latin1"), memoryTarget(c.from));
      expect(treeRows(applyPlan(c.from, p))).toEqual(treeRows(c.to));
    }
    for (const [name, patch, reason, words] of cases) {
      const p = await planPatch(patch, memoryTarget(c.from));
      expect([name, p.ok]).toEqual([name, false]);
      if (p.ok) continue;
      expect([name, p.rejects[0]!.hunks[0]!.reason]).toEqual([name, reason]);
      if (!p.rejects[0]!.hunks[0]!.message.includes(words)) throw new Error(`${name}: ${p.rejects[0]!.hunks[0]!.message}`);
    }
  });

  test("a thousand random corruptions of a binary patch: each a reject or exactly the target bytes, never a throw", async () => {
    const c = CASES[8]!;
    const good = Buffer.from(oursOf(c.from, c.to), "latin1");
    const want = createHash("sha256").update(c.to.get("r.bin")!.bytes).digest("hex");
    const r = rng(7);
    const start = good.indexOf("literal");
    let applied = 0;
    for (let k = 0; k < 1000; k++) {
      const bad = Buffer.from(good);
      for (let n = 1 + r.int(3); n > 0; n--) bad[start + r.int(bad.length - start)] = r.pick([0x21, 0x30, 0x41, 0x61, 0x7e, 0x0a, 0x20, r.int(256)]);
      const p = await planPatch(bad, memoryTarget(c.from));
      if (!p.ok) continue;
      applied++;
      expect(createHash("sha256").update(applyPlan(c.from, p).get("r.bin")!.bytes).digest("hex")).toBe(want);
    }
    // a change in the reverse hunk's data, or one that leaves it equal, still applies the forward hunk
    expect(applied).toBeLessThan(1000);
  });

  test("a zlib bomb (50 MB of zeros in 49 KB of patch) stated as 10 bytes is refused without inflating it", async () => {
    // worksnap's own literal of 50 MB of zeros (49 KB deflated), its stated size cut to 10 bytes
    const real = binaryPatchText(null, new Uint8Array(50_000_000), null).replace(/^index [0-9a-f]+\.\.[0-9a-f]+\n/, "").split("\n\n")[0]!;
    const body = real.replace("literal 50000000", "literal 10");
    expect(body.length).toBeLessThan(80_000);
    const patch = `diff --git a/z.bin b/z.bin\nnew file mode 100644\nindex ${"0".repeat(40)}..${"1".repeat(40)}\n${body}\n\n`;
    const before = process.memoryUsage().rss;
    const p = await planPatch(patch, memoryTarget(new Map()));
    expect(!p.ok && p.rejects[0]!.hunks[0]!.message).toContain("inflates past the stated 10 bytes");
    expect(process.memoryUsage().rss - before).toBeLessThan(40_000_000);
  });

  test("applyDelta: git's delta opcodes, and deltas that do not fit the source refused", () => {
    const src = enc("0123456789abcdef");
    // source size 16, result size 9: copy 4 bytes at 10, insert "XYZ", copy 2 at 0
    expect(Buffer.from(applyDelta(src, Uint8Array.from([16, 9, 0x91, 10, 4, 3, 0x58, 0x59, 0x5a, 0x90, 2]))!).toString()).toBe("abcdXYZ01");
    expect(applyDelta(src, Uint8Array.from([15, 1, 1, 0x41]))).toBeNull(); // the source is not the size stated
    expect(applyDelta(src, Uint8Array.from([16, 4, 0x91, 14, 4]))).toBeNull(); // a copy past the source's end
    expect(applyDelta(src, Uint8Array.from([16, 2, 3, 0x41, 0x42, 0x43]))).toBeNull(); // more than the result's size
    expect(applyDelta(src, Uint8Array.from([16, 2, 0]))).toBeNull(); // opcode 0
    expect(applyDelta(src, Uint8Array.from([16, 3, 1, 0x41]))).toBeNull(); // shorter than stated
    expect(applyDelta(src, Uint8Array.from([16]))).toBeNull(); // no result size
  });
});
