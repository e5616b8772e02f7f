/**
 * The tree and the cases the ripgrep comparisons share, and ripgrep's answer
 * for a case.
 */
import { expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { rng } from "../patch/fixtures";

export const RG = Bun.which("rg");

export const CHUNK = 64 * 1024;

/** A deterministic pseudo-random tree of awkward text files (and two binaries). */
export function buildTree(root: string): string[] {
  const rnd = rng(7).next;
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

export const CASES: { pattern: string; fixed?: boolean; ci?: boolean }[] = [
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
  // ripgrep's own spellings (ripgrep-syntax.ts)
  { pattern: "(?i)abcd" },
  { pattern: "TODO|(?i)fixme" },
  { pattern: "x(?i)C|(?-i)Z" },
  { pattern: "[[:upper:]]{3,}" },
  { pattern: "^[[:^alpha:]]+$" },
  { pattern: "\\p{Han}+" },
  { pattern: "\\pN+" },
  { pattern: "(?P<word>foo)\\d+" },
  { pattern: "\\x{65E5}" },
  { pattern: "\\Afoo" },
  { pattern: "bar\\z" },
  { pattern: "(?s)a.c" },
  { pattern: "(?i)k" },
];

export function theirs(root: string, textPaths: string[], c: (typeof CASES)[number]): string[] {
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

