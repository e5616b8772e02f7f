/**
 * Correctness target: on the same text files, the set of matching
 * (path, line) pairs equals ripgrep's, for ASCII patterns, literal and regex,
 * case-sensitive and not. The tree mixes CRLF, missing final newlines, very
 * long lines, Unicode, empty files and files larger than the read chunk,
 * read from disk the way the server reads them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isBinary } from "../../../src/core/binary";
import { sortUtf8 } from "../../../src/core/byte-order";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { fileCandidate, grep } from "../../../src/ops/grep";
import { tempDir } from "./fixtures";

const RG = Bun.which("rg");
if (!RG) {
  console.warn(
    "\n!!! ripgrep (rg) is not installed: SKIPPING the ripgrep comparison test. Install it (apt-get install ripgrep); CI does.\n",
  );
}

const CHUNK = 64 * 1024;

/** A deterministic pseudo-random tree of awkward text files (and two binaries). */
function buildTree(root: string): string[] {
  let seed = 7;
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const words = ["foo", "bar", "baz", "foo42", "TODO:", "FIXME", "import", "x", "abc", "aXc", "handle(", "ABCD", "k", "K", "s", "é", "😀", "日本", "\u212a", "ſ", "ab", "cde", "a.c", "  ", "\t"];
  const line = () => Array.from({ length: Math.floor(rnd() * 9) }, () => pick(words)).join(pick([" ", " ", "", "\t"]));
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < 60; i++) {
    const eol = i % 5 === 0 ? "\r\n" : "\n";
    const lines = Array.from({ length: Math.floor(rnd() * 30) }, line);
    if (i % 7 === 0) lines.splice(Math.floor(lines.length / 2), 0, "", "", "  ");
    if (i % 4 === 0 && lines.length > 0) lines.push(`  import foo from "bar" ${eol === "\r\n" ? "crlf" : ""}`);
    const final = i % 3 === 0 ? "" : eol;
    files[`src/d${i % 6}/f${i}.${pick(["ts", "md", "txt", ""])}`] = lines.join(eol) + (lines.length ? final : "");
  }
  files["empty.txt"] = "";
  files["only-newline.txt"] = "\n";
  files["no-final-newline.txt"] = "foo bar\nlast foo";
  files["bom.txt"] = "\ufefffoo first\nsecond foo\n";
  files["min.js"] = Array.from({ length: 4000 }, (_, k) => `var a${k}=function(){return handle(${k})};`).join("") + "\n";
  // larger than the read chunk, with matches across chunk boundaries
  const big: string[] = [];
  for (let k = 0; big.join("\n").length < 5 * CHUNK; k++) big.push(k % 1000 === 999 ? "x".repeat(CHUNK / 2) + " TODO: across" : `${k} ${line()}`);
  files["big/large.log"] = big.join("\n");
  files["bin/image.png"] = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x66, 0x6f, 0x6f, 0x0a]);
  files["bin/late-nul.dat"] = `${"foo\n".repeat(2500)}\0foo\n`; // NUL after 8000 bytes: text by our rule
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
  return Object.keys(files);
}

const CASES: { pattern: string; fixed?: boolean; ci?: boolean }[] = [
  { pattern: "foo", fixed: true },
  { pattern: "a.c", fixed: true },
  { pattern: "TODO:", fixed: true },
  { pattern: "handle(", fixed: true },
  { pattern: "FOO", fixed: true, ci: true },
  { pattern: "k", fixed: true, ci: true },
  { pattern: "S", fixed: true, ci: true },
  { pattern: "foo\\d+" },
  { pattern: "^\\s*import\\s+\\w+" },
  { pattern: "TODO|FIXME" },
  { pattern: "\\bbar\\b" },
  { pattern: "[A-Z]{3,}" },
  { pattern: "a.c" },
  { pattern: "x$" },
  { pattern: "^foo" },
  { pattern: "^$" },
  { pattern: "^\\s*$" },
  { pattern: "\\s+$" },
  { pattern: "handle\\(\\d+\\)" },
  { pattern: "(?:ab|cde)+" },
  { pattern: "foo.*bar" },
  { pattern: "^[^a-z]*$" },
  { pattern: "abc", ci: true },
  { pattern: "[a-c]x[a-c]", ci: true },
  { pattern: "^k", ci: true },
  { pattern: "crlf$" },
  { pattern: "\\t" },
];

async function ours(root: string, paths: string[], c: (typeof CASES)[number]): Promise<string[]> {
  const cands = paths.map((p) => fileCandidate(trustedRepoPath(p), join(root, p), statSync(join(root, p)).size, CHUNK));
  const r = await grep(cands, {
    pattern: c.pattern,
    fixedStrings: c.fixed,
    caseInsensitive: c.ci,
    queryKey: "",
    maxMatches: 100_000,
    maxBytes: 64 * 1024 * 1024,
    chunkBytes: CHUNK,
  });
  expect(r.truncated).toBe(false);
  return [...new Set(r.matches.map((m) => `${m.path}:${m.line}`))].sort();
}

function theirs(root: string, textPaths: string[], c: (typeof CASES)[number]): string[] {
  const args = [RG!, "--no-config", "--null", "-n", "--no-heading", "-H", "--no-ignore", "--hidden", "-a"];
  if (c.fixed) args.push("-F");
  if (c.ci) args.push("-i");
  const r = Bun.spawnSync([...args, "-e", c.pattern, "--", ...textPaths], { cwd: root, stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode === 0 || r.exitCode === 1, r.stderr.toString()).toBe(true);
  const out = new Set<string>();
  for (const rec of r.stdout.toString().split("\n")) {
    const nul = rec.indexOf("\0");
    if (nul < 0) continue;
    out.add(`${rec.slice(0, nul)}:${rec.slice(nul + 1, rec.indexOf(":", nul))}`);
  }
  return [...out].sort();
}

describe.skipIf(!RG)("same matching lines as ripgrep", () => {
  const tmp = tempDir("grep-rg");
  afterAll(() => tmp[Symbol.dispose]());
  const paths = sortUtf8(buildTree(tmp.dir));
  const textPaths = paths.filter((p) => !isBinary(readFileSync(join(tmp.dir, p))));

  test("the tree has binary files left out on our side", () => {
    expect(paths.length - textPaths.length).toBe(1);
  });

  test.each(CASES.map((c) => [`${c.pattern}${c.fixed ? " -F" : ""}${c.ci ? " -i" : ""}`, c] as const))("%s", async (_name, c) => {
    const want = theirs(tmp.dir, textPaths, c);
    const got = await ours(tmp.dir, paths, c);
    expect(got).toEqual(want);
    if (!["^k", "k", "S", "x$", "crlf$", "handle\\(\\d+\\)", "\\t"].includes(c.pattern)) expect(want.length).toBeGreaterThan(0);
  });
});
