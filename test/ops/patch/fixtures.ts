/**
 * Shared fixtures for the patch and diff tests: binary-safe git calls, trees
 * as maps, an in-memory PatchTarget, and a seeded PRNG. Temporary
 * repositories come from test/helpers/tmp-repo.ts.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RepoPath } from "../../../src/core/repo-path";
import type { PatchPlan, PatchTarget } from "../../../src/ops/patch/plan";
import type { FileMode } from "../../../src/core/file-mode";
import type { LineChange } from "../../../src/core/line-change";
import { applyHunks } from "../../../src/ops/patch/apply";
import { parsePatch } from "../../../src/ops/patch/parse";

export interface TreeFile {
  bytes: Uint8Array;
  mode: FileMode;
}
export type Tree = Map<string, TreeFile>;

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** `patch` (one file) applied to `before` by the patch engine: the new bytes and the line changes it placed. */
export function placed(before: string, patch: string): { bytes: Uint8Array; after: string; lines: LineChange[] } {
  const file = parsePatch(patch).files[0]!;
  const r = applyHunks(enc(before), file.hunks);
  if (!r.ok) throw new Error(JSON.stringify(r.rejects));
  return { bytes: r.bytes, after: new TextDecoder().decode(r.bytes), lines: r.lines };
}
export const dec = (b: Uint8Array): string => Buffer.from(b).toString("utf8");
export const file = (text: string | Uint8Array, mode: FileMode = "100644"): TreeFile => ({
  bytes: typeof text === "string" ? enc(text) : text,
  mode,
});

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_AUTHOR_DATE: "2024-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2024-01-01T00:00:00Z",
  LC_ALL: "C",
};

/** Runs git with binary-safe stdin/stdout; throws with stderr on failure. */
export function git(cwd: string, args: string[], stdin?: Uint8Array | string): Uint8Array {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: GIT_ENV, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return new Uint8Array(r.stdout);
}

/** Runs git and returns its exit code and stderr instead of throwing. */
export function gitTry(cwd: string, args: string[], stdin?: Uint8Array | string): { code: number; stderr: string } {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: GIT_ENV, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  return { code: r.exitCode ?? -1, stderr: r.stderr.toString() };
}

export function writeTree(dir: string, tree: Tree): void {
  for (const [path, f] of tree) {
    const abs = join(dir, path);
    mkdirSync(dirname(abs), { recursive: true });
    rmSync(abs, { force: true });
    if (f.mode === "120000") symlinkSync(Buffer.from(f.bytes).toString("utf8"), abs);
    else {
      writeFileSync(abs, f.bytes);
      chmodSync(abs, f.mode === "100755" ? 0o755 : 0o644);
    }
  }
}

/** Every file under dir except .git, with its git mode. */
export function readTree(dir: string): Tree {
  const out: Tree = new Map();
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      if (path === ".git") continue;
      const abs = join(dir, path);
      const st = lstatSync(abs);
      if (st.isDirectory()) walk(path);
      else if (st.isSymbolicLink()) out.set(path, { bytes: enc(readlinkSync(abs)), mode: "120000" });
      else out.set(path, { bytes: new Uint8Array(readFileSync(abs)), mode: st.mode & 0o111 ? "100755" : "100644" });
    }
  };
  walk("");
  return out;
}

/** Commits exactly `tree` (removing everything else) and returns the commit id. */
export function commitTree(dir: string, tree: Tree, message: string): string {
  git(dir, ["rm", "-rq", "--cached", "--ignore-unmatch", "."]);
  for (const path of readTree(dir).keys()) if (!tree.has(path)) rmSync(join(dir, path));
  writeTree(dir, tree);
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "--allow-empty", "-m", message]);
  return Buffer.from(git(dir, ["rev-parse", "HEAD"])).toString().trim();
}

export function memoryTarget(tree: Tree): PatchTarget & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async read(path: RepoPath) {
      reads.push(path);
      const f = tree.get(path);
      return f ? { bytes: f.bytes, mode: f.mode } : null;
    },
  };
}

/** The tree after committing a successful plan. */
export function applyPlan(tree: Tree, plan: PatchPlan): Tree {
  if (!plan.ok) throw new Error(`plan rejected: ${JSON.stringify(plan.rejects, null, 1)}`);
  const out = new Map(tree);
  for (const c of plan.changes) {
    if (c.kind === "rename") out.delete(c.from!);
    if (c.kind === "delete") out.delete(c.path);
    else out.set(c.path, { bytes: c.bytes!, mode: c.mode });
  }
  return out;
}

/** Trees as sorted [path, mode, text-or-hex] rows, for readable equality failures. */
export function treeRows(tree: Tree): [string, string, string][] {
  return [...tree.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, f]) => [p, f.mode, Buffer.from(f.bytes).toString("latin1")]);
}

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]! };
}

