/**
 * Patterns in ripgrep's spelling, made at random from its constructs (POSIX
 * classes, script names, \pL, (?P<name>), \x{..}, \A, \z, inline flags,
 * groups, alternations, repetitions), searched by rg and by worksnap on the
 * same files: wherever both take a pattern, the same (path, line) pairs. A
 * pattern worksnap refuses (an exponential shape its regex engine cannot run,
 * which rg's linear one can) is counted, and must stay rare.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sortUtf8 } from "../../../src/core/byte-order";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { fileCandidate, grep } from "../../../src/ops/grep";
import { rng } from "../patch/fixtures";
import { tempDir } from "./fixtures";
import { RG } from "./rg-fixtures";

const WORDS = ["foo", "Bar", "BAZ", "x1", "42", "é", "Ωmega", "日本", "a_b", "TODO", "k", "K", "\u212a", " ", "\t", "-", "(", ")", "[x]", "ab", "AB"];
const ATOMS = ["foo", "[[:upper:]]", "[[:digit:]]", "[[:alpha:]_]", "\\pL", "\\p{Greek}", "\\p{Han}", "\\d", "\\w", ".", "[^[:space:]]", "\\x{41}", "(?P<n>ab)", "\\Afoo", "x\\z", "k", "(ba|BA)", "[[:^digit:]]"];
const FLAGS = ["(?i)", "(?-i)", "(?s)", "(?im)"];

describe.skipIf(!RG)("random patterns in ripgrep's spelling: the same lines as rg", () => {
  const tmp = tempDir("grep-rg-syntax");
  afterAll(() => tmp[Symbol.dispose]());
  const random = rng(2026).next;
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
  const files: string[] = [];
  for (let i = 0; i < 20; i++) {
    const lines = Array.from({ length: 30 }, () => Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(WORDS)).join(pick(["", " "])));
    writeFileSync(join(tmp.dir, `f${i}.txt`), `${lines.join("\n")}\n`);
    files.push(`f${i}.txt`);
  }
  const sorted = sortUtf8(files);

  const pattern = (depth = 0): string => {
    let out = "";
    const n = 1 + Math.floor(random() * 3);
    for (let i = 0; i < n; i++) {
      if (random() < 0.15) out += pick(FLAGS);
      let atom = random() < 0.2 && depth < 2 ? `(${pattern(depth + 1)})` : pick(ATOMS);
      if (!atom.endsWith("z") && !atom.startsWith("\\A") && random() < 0.25) atom += pick(["?", "+", "*", "{1,2}"]);
      out += atom;
      if (random() < 0.15 && i < n - 1) out += "|";
    }
    return out;
  };

  test("300 patterns", async () => {
    let compared = 0;
    const refused: string[] = [];
    for (let k = 0; k < 300; k++) {
      const p = pattern();
      const r = Bun.spawnSync([RG!, "--no-config", "-n", "--no-heading", "-H", "--null", "-e", p, "--", ...files], { cwd: tmp.dir, stdout: "pipe", stderr: "pipe" });
      expect({ p, rg: r.exitCode === 0 || r.exitCode === 1 }).toEqual({ p, rg: true });
      const want = new Set<string>();
      for (const rec of r.stdout.toString().split("\n")) {
        const nul = rec.indexOf("\0");
        if (nul >= 0) want.add(`${rec.slice(0, nul)}:${rec.slice(nul + 1, rec.indexOf(":", nul))}`);
      }
      let got: string[];
      try {
        const cands = sorted.map((f) => fileCandidate(trustedRepoPath(f), join(tmp.dir, f), 0, 1 << 20));
        got = (await grep(cands, { pattern: p, queryKey: "", maxMatches: 1_000_000, maxBytes: 1 << 26 })).matches.map((m) => `${m.path}:${m.line}`);
      } catch (err) {
        expect({ p, message: (err as Error).message }).toEqual({ p, message: expect.stringMatching(/exponential time/) });
        refused.push(p);
        continue;
      }
      compared++;
      expect({ p, lines: sortUtf8([...new Set(got)]) }).toEqual({ p, lines: sortUtf8([...want]) });
    }
    expect(compared).toBeGreaterThanOrEqual(270);
    expect(refused.length).toBeLessThanOrEqual(30);
  }, 120_000);
});
