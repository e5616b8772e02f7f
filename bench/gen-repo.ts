// Deterministic generator of a large, realistic monorepo for benchmarks.
//
//   node_modules/.bin/bun bench/gen-repo.ts --out DIR [--files N] [--small] [--seed S] [--force]
//
// The same seed and file count give a byte-identical tree and the same commit id: every byte comes from a
// seeded PRNG (never Math.random), and git runs with fixed identities, dates and no user configuration.
// The repository is committed, packed like a fresh clone, then left dirty the way a working session leaves it.

import { mkdirSync, readdirSync, renameSync, rmSync, existsSync, symlinkSync, chmodSync, unlinkSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const GENERATOR_VERSION = 1;
export const MARKER_FILE = "wsbench-gen.json"; // lives in .git/, never tracked
const DEFAULT_FILES = 100_000;
const DEFAULT_RELEASE_FILES = 90_000;
const DEFAULT_RELEASES = 20;
const SMALL_RELEASE_FILES = 3_000;
const SMALL_FILES = 3_000;
const BYTES_PER_FILE = 10_240; // 100k files ≈ 1 GB (text overshoots its target a little)
const MAX_DIR_DEPTH = 8;

// ---------------------------------------------------------------- PRNG

/** xoshiro128** seeded through splitmix32: fast, 32-bit, fully deterministic. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let t = s ^ (s >>> 16);
      t = Math.imul(t, 0x21f0aaad);
      t ^= t >>> 15;
      t = Math.imul(t, 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
  }
  u32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }
  float(): number {
    return this.u32() / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  weighted<T>(xs: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of xs) total += w;
    let r = this.float() * total;
    for (const [x, w] of xs) if ((r -= w) < 0) return x;
    return xs[xs.length - 1]![0];
  }
  logUniform(lo: number, hi: number): number {
    return Math.exp(Math.log(lo) + this.float() * (Math.log(hi) - Math.log(lo)));
  }
  normal(): number {
    const u = 1 - this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.float());
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** FNV-1a of a seed given as text, so `--seed foo` and `--seed 42` both work. */
export function seedHash(seed: string | number): number {
  let h = 0x811c9dc5;
  for (const ch of String(seed)) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// ---------------------------------------------------------------- vocabulary

const WORDS = (
  "user account session token request response handler config option value key index cache store buffer stream " +
  "reader writer parser lexer node tree graph edge vertex path file dir entry record item list map set queue stack " +
  "event emitter listener callback promise result error status state context scope module package import export " +
  "client server socket channel message payload header body query param field column row table schema model view " +
  "controller service provider factory builder adapter wrapper manager registry resolver loader watcher worker task " +
  "job batch chunk block page frame layer render draw paint style theme color font image icon button input form " +
  "label text title menu panel dialog modal toast tooltip link route router history location window document element " +
  "component hook effect memo ref reducer action dispatch selector slice middleware plugin extension hash digest " +
  "checksum signature cipher nonce salt seed sample metric counter gauge timer span trace log logger level debug info " +
  "warn retry backoff timeout deadline limit quota rate bucket shard replica leader follower vote term commit " +
  "snapshot manifest blob diff patch hunk line offset range cursor marker anchor lease lock mutex guard permit ticket " +
  "order invoice price amount currency customer product cart checkout payment refund shipment address region zone " +
  "cluster instance volume disk memory network packet codec encode decode serialize format normalize validate " +
  "sanitize escape quote split join merge filter reduce sort group count sum min max first last next prev parent " +
  "child sibling root leaf depth width height size length capacity delta version revision"
).split(" ");
const VERBS = "get set load save fetch build create update delete parse render apply resolve compute read write find check handle emit flush reset init close open merge".split(" ");
const DIR_WORDS = "utils components internal core lib api handlers models services hooks store views widgets common shared helpers types config adapters plugins middleware routes schemas fixtures __tests__ testdata cmd pkg server client runtime codegen compiler parser storage cache auth billing search metrics events jobs workers ui layout forms icons i18n migrations".split(" ");
const UNICODE = ["café", "naïve", "résumé", "Straße", "日本語のテキスト", "中文注释", "привет мир", "Ελληνικά", "🚀 launch", "✓ done", "→ next", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "😀", "±½°", "København", "São Paulo", "Zürich", "한국어", "עברית", "naïveté"];
const TYPES_TS = ["string", "number", "boolean", "unknown", "Uint8Array", "Promise<void>", "string[]", "Record<string, number>"];

const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
const CAP_WORDS = WORDS.map(cap);

/**
 * Words beyond the base vocabulary, drawn while a layout renders with one (useLexicon): a real project's
 * identifiers come from thousands of words, which is what gives its text its spread of byte trigrams (a code
 * search index's selectivity). Without one, text uses the base words alone, as generations always did.
 */
export interface Lexicon {
  words: string[];
  caps: string[];
}
let lexicon: Lexicon | null = null;
export function useLexicon(l: Lexicon | null): void {
  lexicon = l;
}

/** `n` made-up words from syllables, deterministic in `seed`. */
export function makeLexicon(seed: number, n: number): Lexicon {
  const r = new Rng(seed);
  const onsets = "b c d f g h j k l m n p qu r s t v w x z br cr dr fl gr pl pr sk sl sn sp st str tr th sh ch wh kl zh".split(" ");
  const vowels = "a e i o u y ai ea ie oo ou".split(" ");
  const codas = ["", "", "", "n", "r", "s", "t", "x", "ck", "ng", "nk", "lt", "rd", "sk", "st", "m", "l"];
  const suffixes = ["", "", "", "", "", "", "2", "32", "64", "8", "_v2", "16", "ng", "er", "ly"];
  const taken = new Set(WORDS);
  const words: string[] = [];
  while (words.length < n) {
    let w = "";
    for (let k = r.range(1, 3); k > 0; k--) w += r.pick(onsets) + r.pick(vowels) + r.pick(codas);
    w += r.pick(suffixes);
    if (w.length < 3 || taken.has(w)) continue;
    taken.add(w);
    words.push(w);
  }
  return { words, caps: words.map(cap) };
}

/** A word: from the lexicon's long tail (its first words the most common) or the base words. */
function lexiconWord(r: Rng, capital: boolean): string {
  const l = lexicon!;
  if (r.chance(0.5)) return capital ? r.pick(CAP_WORDS) : r.pick(WORDS);
  const i = Math.floor(l.words.length * r.float() ** 2);
  return capital ? l.caps[i]! : l.words[i]!;
}
const word = (r: Rng) => (lexicon === null ? r.pick(WORDS) : lexiconWord(r, false));
const capWord = (r: Rng) => (lexicon === null ? r.pick(CAP_WORDS) : lexiconWord(r, true));
const camel = (r: Rng) => r.pick(VERBS) + capWord(r) + (r.chance(0.3) ? capWord(r) : "");
const pascal = (r: Rng) => capWord(r) + capWord(r);
const snake = (r: Rng) => r.pick(VERBS) + "_" + word(r) + (r.chance(0.3) ? "_" + word(r) : "");
const kebab = (r: Rng) => word(r) + (r.chance(0.6) ? "-" + word(r) : "");
const ident = (r: Rng) => (r.chance(0.5) ? word(r) : word(r) + capWord(r));
// Share of non-ASCII words in the file being rendered: most files are pure ASCII, some are sprinkled.
let unicodeRate = 0;
function words(r: Rng, n: number): string {
  let out = word(r);
  for (let i = 1; i < n; i++) out += " " + (r.float() < unicodeRate ? r.pick(UNICODE) : word(r));
  return out;
}

// ---------------------------------------------------------------- text generation

/** Collects lines until a target size is reached. `len` counts UTF-16 units, close enough to bytes for sizing. */
class Text {
  lines: string[] = [];
  len = 0;
  constructor(readonly r: Rng, readonly target: number) {}
  line(s: string): void {
    this.lines.push(s);
    this.len += s.length + 1;
  }
  get full(): boolean {
    return this.len >= this.target;
  }
}

interface Syntax {
  cmt: string;
  ind: string;
  semi: string;
  decl(t: Text, id: string, e: string): string;
  ifOpen(c: string): string;
  forOpen(v: string, xs: string): string;
  close: string | null; // null: the block ends by dedent (Python)
  closeFor?: string;
  closeFn?: string;
  elseLine?: string;
  fnOpen(t: Text, name: string, params: string[]): string;
  fail(msg: string): string;
  head(t: Text): void;
  top?(t: Text): void;
}

function expr(r: Rng): string {
  switch (r.int(7)) {
    case 0: return `${ident(r)}.${ident(r)}`;
    case 1: return `${camel(r)}(${ident(r)}, ${r.int(4096)})`;
    case 2: return String(r.int(100_000));
    case 3: return `"${words(r, r.range(1, 4))}"`;
    case 4: return `${ident(r)} ${r.pick(["+", "-", "*", "&&", "||", "??", "<<"])} ${r.int(64)}`;
    case 5: return `${ident(r)}[${r.int(16)}]`;
    default: return ident(r);
  }
}
const cond = (r: Rng) => `${ident(r)}.${ident(r)} ${r.pick(["===", "!==", "<", ">=", "=="])} ${expr(r)}`;

function body(t: Text, s: Syntax, depth: number, n: number): void {
  const r = t.r;
  const I = s.ind.repeat(depth);
  for (let i = 0; i < n; i++) {
    const k = r.int(depth < 4 ? 10 : 7);
    if (k <= 2) t.line(I + s.decl(t, ident(r), expr(r)) + s.semi);
    else if (k === 3) t.line(`${I}${ident(r)}.${camel(r)}(${expr(r)}, ${expr(r)})${s.semi}`);
    else if (k === 4) t.line(`${I}${s.cmt} ${words(r, r.range(3, 12))}`);
    else if (k === 5) t.line("");
    else if (k === 6) t.line(`${I}${ident(r)} = ${expr(r)}${s.semi}`);
    else {
      t.line(I + (k === 9 ? s.forOpen(ident(r), ident(r)) : s.ifOpen(cond(r))));
      body(t, s, depth + 1, r.range(1, 4));
      if (k === 8) {
        t.line(I + (s.elseLine ?? "} else {"));
        t.line(I + s.ind + s.fail(words(r, r.range(2, 6))) + s.semi);
      }
      if (s.close !== null) t.line(I + (k === 9 ? (s.closeFor ?? s.close) : s.close));
    }
  }
}

function codeFile(t: Text, s: Syntax): void {
  const r = t.r;
  if (r.chance(0.4)) t.line(`${s.cmt} ${words(r, r.range(4, 10))}`);
  s.head(t);
  t.line("");
  while (!t.full) {
    if (s.top && r.chance(0.2)) s.top(t);
    else {
      if (r.chance(0.5)) t.line(`${s.cmt} ${words(r, r.range(4, 14))}`);
      const params = Array.from({ length: r.int(4) }, () => ident(r));
      t.line(s.fnOpen(t, camel(r), params));
      body(t, s, 1, r.range(2, 9));
      t.line(s.ind + `return ${expr(r)}${s.semi}`);
      if (s.close !== null) t.line(s.closeFn ?? s.close);
    }
    t.line("");
  }
}

const TS: Syntax = {
  cmt: "//", ind: "  ", semi: ";", close: "}",
  decl: (t, id, e) => `${t.r.chance(0.8) ? "const" : "let"} ${id} = ${e}`,
  ifOpen: (c) => `if (${c}) {`,
  forOpen: (v, xs) => `for (const ${v} of ${xs}) {`,
  fnOpen: (t, n, ps) => `${t.r.chance(0.5) ? "export " : ""}${t.r.chance(0.3) ? "async " : ""}function ${n}(${ps.map((p) => `${p}: ${t.r.pick(TYPES_TS)}`).join(", ")}) {`,
  fail: (m) => `throw new Error("${m}")`,
  head: (t) => {
    for (let i = t.r.int(7); i > 0; i--) t.line(`import { ${pascal(t.r)}, ${camel(t.r)} } from "${t.r.chance(0.5) ? "./" : "../"}${kebab(t.r)}";`);
  },
  top: (t) => {
    const r = t.r;
    t.line(`export interface ${pascal(r)} {`);
    for (let i = r.range(2, 8); i > 0; i--) t.line(`  ${ident(r)}${r.chance(0.3) ? "?" : ""}: ${r.pick(TYPES_TS)};`);
    t.line("}");
  },
};
const GO: Syntax = {
  cmt: "//", ind: "\t", semi: "", close: "}",
  decl: (_t, id, e) => `${id} := ${e}`,
  ifOpen: (c) => `if ${c.replace("===", "==").replace("!==", "!=")} {`,
  forOpen: (v, xs) => `for _, ${v} := range ${xs} {`,
  fnOpen: (t, n, ps) => `func ${cap(n)}(${ps.map((p) => `${p} ${t.r.pick(["string", "int", "[]byte", "error", "*Config"])}`).join(", ")}) error {`,
  fail: (m) => `return fmt.Errorf("${m}")`,
  head: (t) => {
    t.line(`package ${word(t.r)}`);
    t.line("");
    t.line("import (");
    for (let i = t.r.range(1, 5); i > 0; i--) t.line(`\t"${t.r.pick(["fmt", "os", "io", "context", "sync", "strings", "errors", "time"])}"`);
    t.line(")");
  },
  top: (t) => {
    t.line(`type ${pascal(t.r)} struct {`);
    for (let i = t.r.range(2, 7); i > 0; i--) t.line(`\t${pascal(t.r)} ${t.r.pick(["string", "int64", "bool", "[]byte", "time.Time"])}`);
    t.line("}");
  },
};
const RS: Syntax = {
  cmt: "//", ind: "    ", semi: ";", close: "}",
  decl: (t, id, e) => `let ${t.r.chance(0.3) ? "mut " : ""}${id} = ${e}`,
  ifOpen: (c) => `if ${c.replace("===", "==").replace("!==", "!=")} {`,
  forOpen: (v, xs) => `for ${v} in ${xs}.iter() {`,
  fnOpen: (t, n, ps) => `pub fn ${n.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())}(${ps.map((p) => `${p}: ${t.r.pick(["&str", "u64", "&[u8]", "usize"])}`).join(", ")}) -> Result<()> {`,
  fail: (m) => `return Err(anyhow!("${m}"))`,
  head: (t) => {
    for (let i = t.r.range(1, 4); i > 0; i--) t.line(`use crate::${word(t.r)}::${pascal(t.r)};`);
  },
};
const C: Syntax = {
  cmt: "//", ind: "    ", semi: ";", close: "}",
  decl: (t, id, e) => `${t.r.pick(["int", "size_t", "uint32_t", "const char *"])} ${id} = ${e}`,
  ifOpen: (c) => `if (${c.replace("===", "==").replace("!==", "!=")}) {`,
  forOpen: (v) => `for (size_t ${v} = 0; ${v} < n; ${v}++) {`,
  fnOpen: (t, n, ps) => `static int ${n}(${ps.map((p) => `${t.r.pick(["int", "const char *", "void *"])} ${p}`).join(", ") || "void"}) {`,
  fail: (m) => `return -1; /* ${m} */`,
  head: (t) => {
    for (let i = t.r.range(1, 6); i > 0; i--) t.line(`#include ${t.r.chance(0.5) ? `<${t.r.pick(["stdio", "stdlib", "string", "stdint"])}.h>` : `"${word(t.r)}.h"`}`);
  },
};
const PY: Syntax = {
  cmt: "#", ind: "    ", semi: "", close: null,
  decl: (_t, id, e) => `${id} = ${e}`,
  ifOpen: (c) => `if ${c.replace("===", "==").replace("!==", "!=").replace("&&", "and")}:`,
  elseLine: "else:",
  forOpen: (v, xs) => `for ${v} in ${xs}:`,
  fnOpen: (_t, n, ps) => `def ${n.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())}(${ps.join(", ")}):`,
  fail: (m) => `raise ValueError("${m}")`,
  head: (t) => {
    for (let i = t.r.int(5); i > 0; i--) t.line(t.r.chance(0.5) ? `import ${t.r.pick(["os", "sys", "json", "re", "typing"])}` : `from .${word(t.r)} import ${pascal(t.r)}`);
  },
  top: (t) => {
    t.line(`class ${pascal(t.r)}:`);
    t.line(`    """${words(t.r, t.r.range(4, 12))}"""`);
    t.line("");
    t.line(`    def __init__(self, ${ident(t.r)}):`);
    for (let i = t.r.range(1, 5); i > 0; i--) t.line(`        self.${ident(t.r)} = ${expr(t.r)}`);
  },
};
const SH: Syntax = {
  cmt: "#", ind: "  ", semi: "", close: "fi", closeFor: "done", closeFn: "}", elseLine: "else",
  decl: (_t, id, e) => `${id}="${e.replace(/"/g, "")}"`,
  ifOpen: (c) => `if [ "$${c.split(" ")[0]!.replace(".", "_")}" = "x" ]; then`,
  forOpen: (v, xs) => `for ${v} in $${xs}; do`,
  fnOpen: (_t, n) => `${n}() {`,
  fail: (m) => `echo "${m}" >&2; exit 1`,
  head: (t) => t.line("set -euo pipefail"),
};

function markdown(t: Text): void {
  const r = t.r;
  t.line(`# ${cap(words(r, r.range(2, 5)))}`);
  while (!t.full) {
    t.line("");
    const k = r.int(6);
    if (k === 0) t.line(`## ${cap(words(r, r.range(2, 6)))}`);
    else if (k === 1) for (let i = r.range(2, 6); i > 0; i--) t.line(`- ${words(r, r.range(3, 12))}`);
    else if (k === 2) {
      t.line("```ts");
      body(t, TS, 0, r.range(2, 6));
      t.line("```");
    } else for (let i = r.range(1, 5); i > 0; i--) t.line(cap(words(r, r.range(8, 20))) + ".");
  }
}
function json(t: Text): void {
  const r = t.r;
  t.line("{");
  t.line(`  "name": "@mono/${kebab(r)}",`);
  t.line(`  "items": [`);
  while (!t.full) t.line(`    { "id": ${r.int(1e6)}, "${ident(r)}": "${words(r, r.range(1, 4))}", "${ident(r)}": ${r.int(1000)}, "ok": ${r.chance(0.5)} },`);
  t.line(`    { "id": 0 }`);
  t.line("  ]");
  t.line("}");
}
function yaml(t: Text): void {
  const r = t.r;
  while (!t.full) {
    t.line(`${ident(r)}:`);
    for (let i = r.range(1, 6); i > 0; i--) t.line(`  ${ident(r)}: ${r.chance(0.5) ? r.int(1000) : words(r, r.range(1, 3))}`);
  }
}
function csv(t: Text): void {
  const r = t.r;
  const cols = Array.from({ length: r.range(3, 9) }, () => ident(r));
  t.line(cols.join(","));
  while (!t.full) t.line(cols.map((_, i) => (i % 2 ? r.int(100000) : word(r))).join(","));
}
function sql(t: Text): void {
  const r = t.r;
  const table = word(r) + "s";
  t.line(`CREATE TABLE ${table} (id BIGINT PRIMARY KEY, ${ident(r)} TEXT, ${ident(r)} INTEGER);`);
  while (!t.full) t.line(`INSERT INTO ${table} VALUES (${r.int(1e9)}, '${words(r, r.range(1, 5))}', ${r.int(1e5)});`);
}
function css(t: Text): void {
  const r = t.r;
  while (!t.full) {
    t.line(`.${kebab(r)} ${r.chance(0.3) ? "> ." + kebab(r) + " " : ""}{`);
    for (let i = r.range(1, 6); i > 0; i--) t.line(`  ${r.pick(["margin", "padding", "color", "display", "width", "gap"])}: ${r.int(64)}px;`);
    t.line("}");
    t.line("");
  }
}

const GENERATORS: Record<string, (t: Text) => void> = {
  ts: (t) => codeFile(t, TS), tsx: (t) => codeFile(t, TS), js: (t) => codeFile(t, TS),
  go: (t) => codeFile(t, GO), rs: (t) => codeFile(t, RS), c: (t) => codeFile(t, C), h: (t) => codeFile(t, C),
  py: (t) => codeFile(t, PY), sh: (t) => codeFile(t, SH),
  md: markdown, txt: markdown, json, yaml, toml: yaml, csv, sql, css,
};
const SHEBANG: Record<string, string> = { sh: "#!/usr/bin/env bash", py: "#!/usr/bin/env python3" };
const BINARY_MAGIC: Record<string, number[]> = {
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52],
  jpg: [0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0],
  wasm: [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
  woff2: [0x77, 0x4f, 0x46, 0x32, 0, 1, 0, 0],
  gz: [0x1f, 0x8b, 8, 0, 0, 0, 0, 0],
  bin: [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0],
  sqlite: [...new TextEncoder().encode("SQLite format 3"), 0],
  ico: [0, 0, 1, 0, 1, 0],
};
export const BINARY_EXTS = new Set(Object.keys(BINARY_MAGIC));

// ---------------------------------------------------------------- file specs and content

export interface FileSpec {
  path: string;
  ext: string;
  size: number;
  seed: number;
  exec: boolean;
  crlf: boolean;
  noEol: boolean;
  literal?: string; // fixed content (ignore files)
  /** Files with the same key hold the same bytes (one blob); absent: the file is its own blob. */
  blobKey?: string;
}

export function renderFile(f: FileSpec): string | Uint8Array {
  if (f.literal !== undefined) return f.literal;
  const r = new Rng(f.seed);
  if (BINARY_EXTS.has(f.ext)) return binary(r, f.ext, f.size);
  if (f.size === 0) return "";
  unicodeRate = f.path.includes("i18n") ? 0.3 : r.chance(0.12) ? 0.03 : 0;
  const eol = f.crlf ? "\r\n" : "\n";
  const t = new Text(r, Math.min(f.size, LARGE_TEXT));
  if (f.exec && SHEBANG[f.ext]) t.line(SHEBANG[f.ext]!);
  (GENERATORS[f.ext] ?? markdown)(t);
  const text = t.lines.join(eol) + eol;
  if (f.size > LARGE_TEXT) return stretch(r, f, Buffer.from(text), eol);
  return f.noEol ? text.slice(0, -eol.length) : text;
}

// Past this size, text is built from line-aligned spans of a generated base, each after a fresh line, the way
// bundles and data dumps repeat themselves. Generating every byte from scratch runs at ~50 MB/s; this, at GB/s.
const LARGE_TEXT = 384 * 1024;

function stretch(r: Rng, f: FileSpec, base: Buffer, eol: string): Uint8Array {
  const out = new Uint8Array(f.size + 128 * 1024);
  out.set(base, 0);
  let pos = base.length;
  const nl = 0x0a;
  while (pos < f.size) {
    const fresh = Buffer.from(fillerLine(r, f.ext) + eol);
    out.set(fresh, pos);
    pos += fresh.length;
    let start = base.indexOf(nl, r.int(base.length - 1)) + 1;
    if (start <= 0 || start >= base.length) start = 0;
    let end = base.indexOf(nl, Math.min(base.length - 1, start + r.range(8 * 1024, 96 * 1024))) + 1;
    if (end <= 0) end = base.length;
    out.set(base.subarray(start, end), pos);
    pos += end - start;
  }
  let cut = out.lastIndexOf(nl, f.size - 1) + 1;
  if (cut <= 0) cut = f.size;
  if (f.noEol) cut -= eol.length;
  return out.subarray(0, cut);
}

export function fillerLine(r: Rng, ext: string): string {
  switch (ext) {
    case "json": return `    { "id": ${r.int(1e9)}, "${ident(r)}": "${words(r, 3)}" },`;
    case "csv": return `${word(r)},${r.int(1e9)},${word(r)},${r.int(1e5)}`;
    case "sql": return `-- part ${r.int(1e9)}: ${words(r, 5)}`;
    case "md": case "txt": case "yaml": case "toml": return `${word(r)}: ${words(r, 8)} ${r.int(1e9)}`;
    case "py": case "sh": return `# part ${r.int(1e9)}: ${words(r, 6)}`;
    default: return `// part ${r.int(1e9)}: ${words(r, 6)}`;
  }
}

function binary(r: Rng, ext: string, size: number): Uint8Array {
  const out = new Uint8Array(Math.max(size, 64));
  const words = new Uint32Array(out.buffer, 0, out.length >>> 2);
  for (let i = 0; i < words.length; i++) words[i] = r.u32();
  for (let i = words.length * 4; i < out.length; i++) out[i] = r.u32() & 0xff;
  // Runs of zeros, as in real images and object files; one always falls in git's 8000-byte sniff window.
  for (let at = r.int(256) + 32; at < out.length; at += r.range(512, 16384)) out.fill(0, at, Math.min(out.length, at + r.range(4, 200)));
  out.set(BINARY_MAGIC[ext]!.slice(0, out.length), 0);
  return out;
}

// ---------------------------------------------------------------- layout plan

export interface Plan {
  files: FileSpec[]; // tracked regular files
  /** Renders a tracked file's bytes, in plan order (default renderFile); set by layouts whose files share content. */
  render?: (f: FileSpec) => string | Uint8Array;
  ignored: FileSpec[]; // written, matched by .gitignore
  symlinks: { path: string; target: string }[];
  dirs: string[];
}

type Mix = readonly (readonly [string, number])[];
interface Area {
  root: string;
  weight: number;
  mix: Mix;
  subroots: readonly string[];
  manifest: readonly string[];
}
const AREAS: readonly Area[] = [
  { root: "packages", weight: 0.425, mix: [["ts", 70], ["tsx", 8], ["js", 6], ["json", 4], ["md", 3], ["css", 4], ["png", 0.6]], subroots: ["src", "src", "src", "test", "lib"], manifest: ["package.json", "README.md", "tsconfig.json"] },
  { root: "apps", weight: 0.1, mix: [["tsx", 45], ["ts", 35], ["css", 8], ["json", 4], ["png", 3], ["jpg", 1], ["woff2", 0.5]], subroots: ["src", "src", "public", "e2e"], manifest: ["package.json", "README.md"] },
  { root: "services", weight: 0.12, mix: [["go", 80], ["yaml", 8], ["sql", 5], ["md", 3], ["json", 3]], subroots: ["cmd", "internal", "internal", "pkg"], manifest: ["go.mod", "README.md", "Makefile"] },
  { root: "python", weight: 0.08, mix: [["py", 88], ["toml", 2], ["md", 3], ["json", 4], ["csv", 2], ["gz", 0.5]], subroots: ["src", "tests"], manifest: ["pyproject.toml", "README.md"] },
  { root: "crates", weight: 0.07, mix: [["rs", 90], ["toml", 3], ["md", 4], ["json", 2]], subroots: ["src", "src", "tests", "benches"], manifest: ["Cargo.toml", "README.md"] },
  { root: "docs", weight: 0.06, mix: [["md", 85], ["png", 5], ["yaml", 3], ["txt", 4], ["jpg", 2]], subroots: ["guide", "reference", "adr", "api"], manifest: ["index.md"] },
  { root: "third_party", weight: 0.12, mix: [["c", 45], ["h", 30], ["js", 12], ["txt", 4], ["md", 3], ["bin", 0.5], ["py", 4]], subroots: ["src", "include", "lib", "prebuilt"], manifest: ["LICENSE", "README.md"] },
  { root: "tools", weight: 0.015, mix: [["sh", 45], ["py", 40], ["ts", 10], ["md", 5]], subroots: ["scripts", "bin", "ci"], manifest: ["README.md"] },
  { root: "assets", weight: 0.01, mix: [["png", 50], ["jpg", 20], ["woff2", 8], ["wasm", 6], ["ico", 6], ["json", 10]], subroots: ["images", "fonts", "wasm"], manifest: ["README.md"] },
];

function extOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "txt" : name.slice(dot + 1);
}

function fileName(r: Rng, ext: string, dir: string): string {
  const testy = /(^|\/)(test|tests|e2e|__tests__)(\/|$)/.test(dir);
  switch (ext) {
    case "ts": case "js": return (r.chance(0.5) ? camel(r) : kebab(r)) + (testy ? ".test." : ".") + ext;
    case "tsx": return pascal(r) + (testy ? ".test.tsx" : ".tsx");
    case "go": return snake(r) + (testy || r.chance(0.2) ? "_test.go" : ".go");
    case "py": return (testy ? "test_" : "") + snake(r) + ".py";
    case "rs": case "c": case "h": return snake(r) + "." + ext;
    default: return kebab(r) + "." + ext;
  }
}

class Layout {
  readonly names = new Map<string, Set<string>>();
  readonly dirs = new Set<string>();
  readonly files: { path: string; ext: string; exec: boolean }[] = [];
  constructor(readonly r: Rng) {}
  private taken(dir: string): Set<string> {
    let s = this.names.get(dir);
    if (!s) this.names.set(dir, (s = new Set()));
    return s;
  }
  unique(dir: string, name: string): string {
    const s = this.taken(dir);
    let n = name;
    for (let i = 2; s.has(n); i++) n = name.replace(/(\.[^.]*)?$/, (m) => `-${i}${m}`);
    s.add(n);
    return n;
  }
  /** A subdirectory named from `pool`, preferring a name not yet used in `parent`. */
  mkdirFrom(parent: string, pool: readonly string[]): string {
    let name = this.r.pick(pool);
    for (let i = 0; i < 8 && this.taken(parent).has(name); i++) name = this.r.pick(pool);
    return this.mkdir(parent, name);
  }
  mkdir(parent: string, name: string): string {
    const d = (parent ? parent + "/" : "") + this.unique(parent, name);
    this.dirs.add(d);
    return d;
  }
  add(dir: string, name: string, exec = false): string {
    const p = (dir ? dir + "/" : "") + this.unique(dir, name);
    this.files.push({ path: p, ext: extOf(name), exec });
    return p;
  }
  /** Places `budget` files under `dir`: a few here, the rest split among subdirectories. */
  fill(dir: string, depth: number, budget: number, mix: Mix): void {
    const r = this.r;
    const here = depth >= MAX_DIR_DEPTH ? budget : Math.min(budget, r.chance(0.05) ? r.range(20, 80) : r.range(1, 14));
    for (let i = 0; i < here; i++) {
      const ext = r.weighted(mix);
      this.add(dir, fileName(r, ext, dir));
    }
    let rest = budget - here;
    if (rest <= 0) return;
    const k = r.range(1, Math.min(6, Math.ceil(rest / 6)));
    const weights = Array.from({ length: k }, () => r.float() + 0.2);
    const total = weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < k && rest > 0; i++) {
      const share = i === k - 1 ? rest : Math.min(rest, Math.round((budget - here) * (weights[i]! / total)));
      rest -= share;
      if (share > 0) this.fill(this.mkdirFrom(dir, DIR_WORDS), depth + 1, share, mix);
    }
  }
}

export function planRepo(files: number, seed: number): Plan {
  const r = new Rng(seed);
  const L = new Layout(r);
  for (const name of ["README.md", "package.json", "tsconfig.json", "Makefile", "LICENSE", ".editorconfig"]) L.add("", name);
  L.add("", ".gitignore");
  // Names that exercise byte order and quoting: non-ASCII, a non-BMP character, spaces.
  const i18n = L.mkdir(L.mkdir("", "docs"), "i18n");
  for (const name of ["日本語.md", "café-menu.md", "Ünïcode-𝔘.md", "Meeting Notes 2024.md", "naïve résumé.txt"]) L.add(i18n, name);

  const nHuge = Math.round(files / 20_000);
  const budget = files - L.files.length - nHuge;
  for (const area of AREAS) {
    let n = Math.round(budget * area.weight);
    const areaDir = L.dirs.has(area.root) ? area.root : L.mkdir("", area.root);
    if (n > 50) (L.add(areaDir, "README.md"), n--);
    while (n > 0) {
      const size = Math.min(n, Math.round(r.logUniform(15, 1500)));
      n -= size;
      const proj = L.mkdir(areaDir, kebab(r));
      let inProj = size;
      for (const m of area.manifest) if (inProj > 1) (L.add(proj, m), inProj--);
      if (area.root !== "tools" && r.chance(0.1) && inProj > 3) {
        const scripts = L.mkdir(proj, "scripts");
        for (let i = r.range(1, 3); i > 0; i--, inProj--) L.add(scripts, kebab(r) + ".sh", true);
      }
      const subs = Math.min(inProj, r.range(1, 3));
      for (let i = 0; i < subs; i++) {
        const share = i === subs - 1 ? inProj : Math.floor(inProj / subs);
        inProj -= share;
        L.fill(L.mkdirFrom(proj, area.subroots), 3, share, area.mix);
      }
    }
  }
  for (const f of L.files) if (f.path.startsWith("tools/") && f.ext === "sh") f.exec = true;
  const pkgs = [...L.dirs].filter((d) => /^packages\/[^/]+$/.test(d));
  const reserved = nHuge + (pkgs.length ? 1 : 0);
  // Rounding leaves the count a few off: trim ordinary files, or pad a docs folder.
  while (L.files.length > files - reserved) L.files.pop();
  if (L.files.length < files - reserved) {
    const pad = L.mkdir("docs", "misc");
    while (L.files.length < files - reserved) L.add(pad, kebab(r) + ".md");
  }
  const nestedIgnore = pkgs.length ? L.add(pkgs[0]!, ".gitignore") : undefined;
  const hugeKinds = [["third_party", "js"], ["assets", "bin"], ["services", "json"], ["python", "csv"], ["assets", "sqlite"]] as const;
  const huge: string[] = [];
  for (let i = 0; i < nHuge; i++) {
    const [area, ext] = hugeKinds[i % hugeKinds.length]!;
    const d = L.mkdir(area, ext === "js" ? "prebuilt" : "data");
    huge.push(L.add(d, `${kebab(r)}.${ext === "js" ? "bundle.js" : ext}`));
  }

  const hugeSet = new Set(huge);
  const specs: FileSpec[] = L.files.map((f) => {
    const spec: FileSpec = { path: f.path, ext: f.ext, size: 0, seed: r.u32(), exec: f.exec, crlf: false, noEol: false };
    if (hugeSet.has(f.path)) spec.size = Math.round(r.range(20, 50) * 1024 * 1024);
    else if (r.chance(0.0015)) spec.size = Math.round(r.logUniform(100 * 1024, 5 * 1024 * 1024));
    else if (r.chance(0.03)) spec.size = Math.round(r.logUniform(20 * 1024, 100 * 1024));
    else if (r.chance(0.006) && !BINARY_EXTS.has(f.ext)) spec.size = 0;
    else spec.size = -Math.round(Math.min(20 * 1024, Math.max(40, 4500 * Math.exp(0.8 * r.normal()))));
    spec.crlf = !BINARY_EXTS.has(f.ext) && r.chance(0.03);
    spec.noEol = !BINARY_EXTS.has(f.ext) && r.chance(0.04);
    return spec;
  });
  // Scale the ordinary files (stored negative above) so the total lands near BYTES_PER_FILE per file.
  let fixed = 0;
  let ordinary = 0;
  for (const s of specs) s.size >= 0 ? (fixed += s.size) : (ordinary -= s.size);
  const scale = Math.min(2, Math.max(0.5, (files * BYTES_PER_FILE - fixed) / Math.max(1, ordinary)));
  for (const s of specs) if (s.size < 0) s.size = Math.max(1, Math.round(-s.size * scale));
  for (const s of specs) {
    if (s.path === ".gitignore") s.literal = GITIGNORE;
    if (s.path === nestedIgnore) s.literal = NESTED_GITIGNORE;
    if (s.literal !== undefined) s.size = Buffer.byteLength(s.literal);
  }

  const ignored = planIgnored(r, L, Math.max(10, Math.round(files * 0.015)), nestedIgnore ? dirname(nestedIgnore) : undefined);
  const symlinks = planSymlinks(r, L, specs, Math.max(3, Math.round(files * 0.001)));
  return { files: specs, ignored, symlinks, dirs: [...L.dirs] };
}

export const GITIGNORE = ["# build output and caches", "node_modules/", "dist/", "build/", ".cache/", "coverage/", "*.log", "*.tmp", ""].join("\n");
const NESTED_GITIGNORE = "*.generated.ts\n/tmp/\n";

function planIgnored(r: Rng, L: Layout, n: number, nestedHome?: string): FileSpec[] {
  const homes = ["node_modules/" + kebab(r), "node_modules/@scope/" + kebab(r), ".cache/" + r.pick(WORDS), "build/out", "logs"];
  const pkgs = [...L.dirs].filter((d) => /^packages\/[^/]+$/.test(d));
  for (let i = 0; i < 3 && pkgs.length; i++) homes.push(r.pick(pkgs) + r.pick(["/dist", "/node_modules/" + kebab(r), "/coverage"]));
  if (nestedHome) homes.push(nestedHome + "/tmp", nestedHome);
  const out: FileSpec[] = [];
  for (let i = 0; i < n; i++) {
    const home = homes[i % homes.length]!;
    const sub = r.chance(0.4) && home !== nestedHome ? "/" + r.pick(DIR_WORDS) : "";
    const ext = home === "logs" ? "log" : home === nestedHome ? "generated.ts" : r.pick(["js", "json", "ts", "tmp"]);
    const path = `${home}${sub}/${kebab(r)}-${i}.${ext}`;
    out.push({ path, ext, size: Math.round(r.logUniform(200, 30_000)), seed: r.u32(), exec: false, crlf: false, noEol: false });
  }
  return out;
}

function planSymlinks(r: Rng, L: Layout, specs: FileSpec[], n: number): { path: string; target: string }[] {
  const dirs = [...L.dirs].filter((d) => d.includes("/"));
  const out: { path: string; target: string }[] = [];
  for (let i = 0; i < n && dirs.length > 1; i++) {
    const home = r.pick(dirs);
    let target: string;
    if (i % 2 === 0) {
      target = r.pick(specs).path;
      if (target === ".gitignore") continue;
    } else {
      target = r.pick(dirs);
      if (home === target || home.startsWith(target + "/")) continue; // no cycles
    }
    const name = L.unique(home, (i % 2 === 0 ? "linked-" : "shared-") + r.pick(WORDS) + (i % 2 === 0 ? "." + extOf(target) : ""));
    out.push({ path: `${home}/${name}`, target });
  }
  return out;
}

// ---------------------------------------------------------------- writing

/** Receives each tracked file's bytes as it is written, so git can pack them without a second read. */
interface BlobSink {
  blob(index: number, data: Uint8Array): void;
  /** File `index` holds the same bytes as the earlier file `first` (the same blobKey): no second blob. */
  same(index: number, first: number): void;
  flush(): Promise<unknown>;
}

interface Written {
  bytes: number;
  /** Distinct contents and their bytes (by a 64-bit content hash and the length). */
  distinctBlobs: number;
  distinctBytes: number;
}

async function writeAll(out: string, specs: FileSpec[], sink?: BlobSink, render: (f: FileSpec) => string | Uint8Array = renderFile): Promise<Written> {
  const written: Written = { bytes: 0, distinctBlobs: 0, distinctBytes: 0 };
  const seen = new Set<string>();
  const firstOfKey = new Map<string, number>();
  let pending: Promise<unknown> = Promise.resolve();
  let batch: Promise<unknown>[] = [];
  let batchBytes = 0;
  const flush = async () => {
    await pending;
    if (sink) batch.push(sink.flush());
    pending = Promise.all(batch);
    batch = [];
    batchBytes = 0;
  };
  for (let i = 0; i < specs.length; i++) {
    const f = specs[i]!;
    const rendered = render(f);
    const content = typeof rendered === "string" ? Buffer.from(rendered) : rendered;
    written.bytes += content.length;
    batchBytes += content.length;
    const id = `${Bun.hash(content).toString(16)}:${content.length}`;
    if (!seen.has(id)) {
      seen.add(id);
      written.distinctBlobs++;
      written.distinctBytes += content.length;
    }
    batch.push(Bun.write(join(out, f.path), content));
    const first = f.blobKey === undefined ? undefined : firstOfKey.get(f.blobKey);
    if (first !== undefined) sink?.same(i, first);
    else {
      if (f.blobKey !== undefined) firstOfKey.set(f.blobKey, i);
      sink?.blob(i, content);
    }
    // Render the next batch while this one is being written.
    if (batch.length >= 512 || batchBytes >= 64 << 20) await flush();
  }
  await flush();
  await pending;
  for (const f of specs) if (f.exec) chmodSync(join(out, f.path), 0o755);
  return written;
}

// ---------------------------------------------------------------- git

const FIXED_DATE = "2024-01-02T03:04:05Z";
export function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "Bench Author",
    GIT_AUTHOR_EMAIL: "author@bench.invalid",
    GIT_COMMITTER_NAME: "Bench Committer",
    GIT_COMMITTER_EMAIL: "committer@bench.invalid",
    GIT_AUTHOR_DATE: FIXED_DATE,
    GIT_COMMITTER_DATE: FIXED_DATE,
    LC_ALL: "C",
    TZ: "UTC",
  };
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd, env: gitEnv(), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")} failed (${code}): ${err.trim()}`);
  return out;
}

/**
 * Streams blobs and one commit into `git fast-import`. The result is what `git add -A && git commit` gives
 * (the generator's test checks the tree against `git add -A`), without creating and then deleting a loose object
 * per file, which costs minutes at 100k files on some file systems.
 *
 * Unrelated files of a single commit do not delta against each other (a full `repack -f` of this repository finds
 * none), so fast-import is told not to try: `--big-file-threshold` is the size above which it stops trying.
 * zlib level 1 deflates this text at ~80 MB/s against ~23 MB/s at the default level, for a pack ~10% larger;
 * reading it back costs the same.
 */
function fastImport(cwd: string): BlobSink & { commit(plan: Plan, message: string): Promise<void> } {
  const p = Bun.spawn(["git", "-c", "core.compression=1", "fast-import", "--quiet", "--done", "--big-file-threshold=1k"], { cwd, env: gitEnv(), stdin: "pipe", stdout: "ignore", stderr: "pipe" });
  const stderr = new Response(p.stderr).text();
  const stdin = p.stdin;
  const when = `${Math.floor(Date.parse(FIXED_DATE) / 1000)} +0000`;
  const env = gitEnv();
  const marks: number[] = [];
  return {
    same(index, first) {
      marks[index] = marks[first] ?? first + 1;
    },
    blob(index, data) {
      stdin.write(`blob\nmark :${index + 1}\ndata ${data.length}\n`);
      stdin.write(data);
      stdin.write("\n");
    },
    flush: () => Promise.resolve(stdin.flush()),
    async commit(plan, message) {
      const msg = Buffer.from(message + "\n");
      stdin.write(`commit refs/heads/main\nauthor ${env.GIT_AUTHOR_NAME} <${env.GIT_AUTHOR_EMAIL}> ${when}\n`);
      stdin.write(`committer ${env.GIT_COMMITTER_NAME} <${env.GIT_COMMITTER_EMAIL}> ${when}\ndata ${msg.length}\n`);
      stdin.write(msg);
      plan.files.forEach((f, i) => stdin.write(`M ${f.exec ? "100755" : "100644"} :${marks[i] ?? i + 1} ${f.path}\n`));
      for (const s of plan.symlinks) {
        const target = Buffer.from(relative(dirname(s.path), s.target));
        stdin.write(`M 120000 inline ${s.path}\ndata ${target.length}\n`);
        stdin.write(target);
        stdin.write("\n");
      }
      stdin.write("\ndone\n");
      await stdin.end();
      const code = await p.exited;
      if (code !== 0) throw new Error(`git fast-import failed (${code}): ${(await stderr).trim()}`);
    },
  };
}

// ---------------------------------------------------------------- dirty state

interface Dirty {
  modified: string[];
  deleted: string[];
  untracked: string[];
}

async function makeDirty(out: string, plan: Plan, r: Rng): Promise<Dirty> {
  const nMod = Math.min(50, Math.ceil(plan.files.length / 40));
  const nUntracked = Math.min(200, Math.ceil(plan.files.length / 10));
  const nDel = Math.min(10, Math.ceil(plan.files.length / 200));
  const linked = new Set(plan.symlinks.map((s) => s.target));
  const editable = plan.files.filter((f) => f.size > 0 && f.size < 256 * 1024 && !BINARY_EXTS.has(f.ext) && f.literal === undefined);
  const used = new Set<string>();
  const pickFrom = (xs: FileSpec[], ok: (f: FileSpec) => boolean) => {
    for (let tries = 0; tries < 100_000; tries++) {
      const f = r.pick(xs);
      if (!used.has(f.path) && ok(f)) return (used.add(f.path), f);
    }
    throw new Error("repository too small for its dirty state");
  };
  const modified: string[] = [];
  for (let i = 0; i < nMod; i++) {
    const f = pickFrom(editable, () => true);
    const path = join(out, f.path);
    const text = readFileSync(path, "utf8");
    const at = text.indexOf("\n", r.int(text.length));
    const edit = `${f.ext === "py" || f.ext === "sh" || f.ext === "yaml" ? "#" : "//"} edited: ${words(r, 6)}\n`;
    await Bun.write(path, at < 0 ? text + "\n" + edit : text.slice(0, at + 1) + edit + text.slice(at + 1));
    modified.push(f.path);
  }
  const deleted: string[] = [];
  for (let i = 0; i < nDel; i++) {
    const f = pickFrom(plan.files, (g) => !linked.has(g.path) && g.literal === undefined && !g.path.startsWith("docs/i18n/"));
    unlinkSync(join(out, f.path));
    deleted.push(f.path);
  }
  const srcDirs = plan.dirs.filter((d) => /^(packages|apps|services)\/[^/]+\/src(\/|$)/.test(d));
  const dirs = srcDirs.length ? srcDirs : plan.dirs.filter((d) => d.includes("/"));
  const fresh = [`${r.pick(dirs)}/wip-${r.pick(WORDS)}`, `${r.pick(dirs)}/new-${r.pick(WORDS)}`];
  const untracked: string[] = [];
  for (let i = 0; i < nUntracked; i++) {
    const dir = i % 3 === 0 ? fresh[i % 2]! : r.pick(dirs);
    const ext = dir.startsWith("services") ? "go" : "ts";
    const spec: FileSpec = { path: `${dir}/draft-${r.pick(WORDS)}-${i}.${ext}`, ext, size: Math.round(r.logUniform(300, 12_000)), seed: r.u32(), exec: false, crlf: false, noEol: false };
    mkdirSync(join(out, dir), { recursive: true });
    await Bun.write(join(out, spec.path), renderFile(spec));
    untracked.push(spec.path);
  }
  return { modified, deleted, untracked };
}

// ---------------------------------------------------------------- entry points

export interface GenerateOptions {
  out: string;
  files?: number;
  seed?: string | number;
  force?: boolean;
  /** Leave modified, deleted and untracked files after the commit (default true). */
  dirty?: boolean;
  /**
   * "monorepo" (default): one large monorepo. "releases": many release trees of one project side by side
   * (bench/gen-releases.ts), most files the same blob as in the release before.
   */
  layout?: RepoLayout;
  /** Release trees of the "releases" layout (default 20). */
  releases?: number;
  log?: (msg: string) => void;
}

export type RepoLayout = "monorepo" | "releases";

export interface GenerateSummary {
  out: string;
  layout: RepoLayout;
  files: number;
  bytes: number;
  /** Distinct contents among the tracked files, and their bytes. */
  distinctBlobs: number;
  distinctBytes: number;
  binary: number;
  executables: number;
  symlinks: number;
  ignored: number;
  dirs: number;
  maxDepth: number;
  modified: number;
  deleted: number;
  untracked: number;
  head: string;
  seconds: { plan: number; write: number; git: number; total: number };
}

/** Generates the repository at `out`. Refuses a non-empty directory unless it is a previous output and `force` is set. */
export async function generateRepo(opts: GenerateOptions): Promise<GenerateSummary> {
  const out = resolve(opts.out);
  const layout = opts.layout ?? "monorepo";
  const files = opts.files ?? (layout === "releases" ? DEFAULT_RELEASE_FILES : DEFAULT_FILES);
  const seed = seedHash(opts.seed ?? 1);
  const log = opts.log ?? (() => {});
  if (existsSync(out) && readdirSync(out).length > 0) {
    if (!opts.force || !existsSync(join(out, ".git", MARKER_FILE))) {
      throw new Error(`${out} is not empty${opts.force ? " and was not made by gen-repo" : " (use --force to regenerate a previous output)"}`);
    }
    // Move it aside first, so an interrupted removal never leaves a half-deleted tree without its marker.
    const aside = `${out}.removing-${process.pid}`;
    renameSync(out, aside);
    rmSync(aside, { recursive: true, force: true });
  }
  const t0 = performance.now();
  const plan = layout === "releases" ? (await import("./gen-releases.ts")).planReleases(files, opts.releases ?? DEFAULT_RELEASES, seed) : planRepo(files, seed);
  const t1 = performance.now();
  log(`planned ${plan.files.length} files in ${plan.dirs.length} dirs`);

  mkdirSync(out, { recursive: true });
  await git(out, "init", "-q", "-b", "main");
  const marker: Marker = { version: GENERATOR_VERSION, files, seed: String(opts.seed ?? 1), complete: false, head: "", bytes: 0 };
  if (layout !== "monorepo") Object.assign(marker, { layout, releases: opts.releases ?? DEFAULT_RELEASES });
  await Bun.write(join(out, ".git", MARKER_FILE), JSON.stringify(marker));
  for (const [k, v] of [["core.autocrlf", "false"], ["core.filemode", "true"], ["core.symlinks", "true"], ["gc.auto", "0"]]) await git(out, "config", k!, v!);
  const allDirs = new Set(plan.dirs);
  for (const f of plan.ignored) allDirs.add(dirname(f.path));
  for (const d of [...allDirs].sort((a, b) => a.length - b.length)) mkdirSync(join(out, d), { recursive: true });
  const importer = fastImport(out);
  const written = await writeAll(out, plan.files, importer, plan.render);
  const bytes = written.bytes;
  await writeAll(out, plan.ignored);
  for (const s of plan.symlinks) symlinkSync(relative(dirname(s.path), s.target), join(out, s.path));
  const t2 = performance.now();
  log(`wrote ${(bytes / 1e6).toFixed(1)} MB (${(written.distinctBytes / 1e6).toFixed(1)} MB distinct) in ${((t2 - t1) / 1000).toFixed(1)} s`);

  const step = async (what: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    log(`${what} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  await step("git fast-import", () => importer.commit(plan, `Import generated ${layout === "releases" ? "release trees" : "monorepo"} (${files} files, seed ${opts.seed ?? 1})`));
  await step("git repack", () => git(out, "repack", "-adq"));
  await step("git prune", () => git(out, "prune"));
  await step("index", async () => {
    await git(out, "read-tree", "HEAD");
    await git(out, "update-index", "-q", "--refresh");
  });
  const head = (await git(out, "rev-parse", "HEAD")).trim();
  let dirty: Dirty = { modified: [], deleted: [], untracked: [] };
  if (opts.dirty !== false) {
    await step("dirty state", async () => (dirty = await makeDirty(out, plan, new Rng(seed ^ 0x5eed))));
    await git(out, "update-index", "-q", "--refresh").catch(() => "");
  }
  const t3 = performance.now();

  const summary: GenerateSummary = {
    out,
    layout,
    files: plan.files.length,
    bytes,
    distinctBlobs: written.distinctBlobs,
    distinctBytes: written.distinctBytes,
    binary: plan.files.filter((f) => BINARY_EXTS.has(f.ext)).length,
    executables: plan.files.filter((f) => f.exec).length,
    symlinks: plan.symlinks.length,
    ignored: plan.ignored.length,
    dirs: plan.dirs.length,
    maxDepth: Math.max(...plan.files.map((f) => f.path.split("/").length - 1)),
    modified: dirty.modified.length,
    deleted: dirty.deleted.length,
    untracked: dirty.untracked.length,
    head,
    seconds: { plan: (t1 - t0) / 1000, write: (t2 - t1) / 1000, git: (t3 - t2) / 1000, total: (t3 - t0) / 1000 },
  };
  const done: Marker = { ...marker, complete: true, head, bytes, distinctBlobs: written.distinctBlobs, distinctBytes: written.distinctBytes };
  await Bun.write(join(out, ".git", MARKER_FILE), JSON.stringify(done, null, 2) + "\n");
  return summary;
}

/**
 * Reuses a complete generation with the same parameters at `dir`, otherwise generates one there. A directory
 * named explicitly (`explicit`) that is a git repository is used as it is.
 */
export async function ensureGenerated(dir: string, opts: { files: number; seed: string; layout: RepoLayout; explicit?: boolean; log: (msg: string) => void }): Promise<void> {
  const marker = readMarker(dir);
  if (opts.explicit && existsSync(join(dir, ".git"))) {
    if (!marker) opts.log(`note: ${dir} was not generated by bench/gen-repo.ts; using it as it is.`);
    return;
  }
  const same = marker?.complete && marker.version === GENERATOR_VERSION && marker.files === opts.files && marker.seed === opts.seed && (marker.layout ?? "monorepo") === opts.layout;
  if (same) {
    opts.log(`reusing ${dir} (${marker.files} files, ${(marker.bytes / 1e6).toFixed(0)} MB, HEAD ${marker.head.slice(0, 12)})`);
    return;
  }
  opts.log(`generating ${opts.files} files (${opts.layout}) into ${dir} ...`);
  const summary = await generateRepo({ out: dir, files: opts.files, seed: opts.seed, layout: opts.layout, force: true, log: (m) => opts.log("  " + m) });
  opts.log(formatSummary(summary) + "\n");
}

/** What a generation leaves in .git/wsbench-gen.json. */
export interface Marker {
  version: number;
  files: number;
  seed: string;
  complete: boolean;
  head: string;
  bytes: number;
  /** absent: "monorepo" */
  layout?: RepoLayout;
  releases?: number;
  distinctBlobs?: number;
  distinctBytes?: number;
}

/** Reads the marker of a previous generation, or null. */
export function readMarker(out: string): Marker | null {
  try {
    return JSON.parse(readFileSync(join(out, ".git", MARKER_FILE), "utf8"));
  } catch {
    return null;
  }
}

export function formatSummary(s: GenerateSummary): string {
  return [
    `repo       ${s.out}`,
    `files      ${s.files} tracked (${s.binary} binary, ${s.executables} executable), ${s.symlinks} symlinks, ${s.ignored} ignored`,
    `bytes      ${(s.bytes / 1e6).toFixed(1)} MB in ${s.dirs} dirs, max depth ${s.maxDepth}`,
    `distinct   ${s.distinctBlobs} blobs, ${(s.distinctBytes / 1e6).toFixed(1)} MB (layout ${s.layout})`,
    `dirty      ${s.modified} modified, ${s.deleted} deleted, ${s.untracked} untracked`,
    `HEAD       ${s.head}`,
    `seconds    ${s.seconds.total.toFixed(1)} (plan ${s.seconds.plan.toFixed(1)}, write ${s.seconds.write.toFixed(1)}, git ${s.seconds.git.toFixed(1)})`,
  ].join("\n");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const val = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const out = val("--out");
  const layout = (val("--layout") ?? "monorepo") as RepoLayout;
  if (!out || args.includes("--help") || (layout !== "monorepo" && layout !== "releases")) {
    console.error("usage: bun bench/gen-repo.ts --out DIR [--layout monorepo|releases] [--releases N] [--files N] [--small] [--seed S] [--force] [--clean]");
    process.exit(2);
  }
  const small = layout === "releases" ? SMALL_RELEASE_FILES : SMALL_FILES;
  const files = val("--files") ? Number(val("--files")) : args.includes("--small") ? small : layout === "releases" ? DEFAULT_RELEASE_FILES : DEFAULT_FILES;
  const releases = val("--releases") ? Number(val("--releases")) : DEFAULT_RELEASES;
  if (!Number.isInteger(files) || files < 50) {
    console.error("--files must be an integer >= 50");
    process.exit(2);
  }
  if (!Number.isInteger(releases) || releases < 2 || files / releases < 50) {
    console.error("--releases must be an integer >= 2, with at least 50 files per release");
    process.exit(2);
  }
  try {
    const s = await generateRepo({ out, files, layout, releases, seed: val("--seed") ?? 1, force: args.includes("--force"), dirty: !args.includes("--clean"), log: (m) => console.error(m) });
    console.log(formatSummary(s));
  } catch (e) {
    console.error(String(e instanceof Error ? e.message : e));
    process.exit(1);
  }
}
