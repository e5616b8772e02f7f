/**
 * Real history through the op: for every parent/child pair of (1) this
 * project's own git history (real edits by real people) and (2) a generated
 * repository with realistic edits (real source files, block edits, renames,
 * moves, mode and symlink changes, CRLF, missing final newlines, Unicode and
 * spaces in names), `git diff parent child` (with and without -M) is applied
 * through workspace_apply_patch to the parent state, in both modes:
 * - worktree: the parent checked out, the patch applied to the live files
 *   (with the edit history recording), then `git add -A && git write-tree`
 *   must equal the child's tree: every byte and every mode;
 * - snapshot: a snapshot of the parent, the patch applied to it, and the
 *   derived manifest must equal a snapshot of the checked-out child.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { closeWorkspace, openWorkspace } from "../../../src/ops/workspace";
import { tmpDir, tmpRepo } from "../../helpers/tmp-repo";
import { rng } from "../patch/fixtures";

const PROJECT = join(import.meta.dir, "..", "..", "..");
const ENV = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C", GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" };

function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: ENV, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

interface Flavour {
  name: string;
  args: string[];
}
const FLAVOURS: Flavour[] = [
  { name: "no renames", args: ["--no-renames"] },
  { name: "-M", args: ["-M"] },
];

/** Replays child commits onto their parents in a clone; returns how many patches were checked. */
/** `server`: a long-lived workspace, as `serve` opens it (spare files, exchanges, removals between calls). */
async function replayHistory(clone: string, pairs: [string, string][], server = false): Promise<number> {
  const ws = openWorkspace(clone, { longLived: server });
  let checked = 0;
  try {
    for (const [parent, child] of pairs) {
      if (git(clone, "diff", "--numstat", parent, child).split("\n").some((l) => l.startsWith("-\t-\t"))) continue; // binary: git diff has no content for it
      const childTree = git(clone, "rev-parse", `${child}^{tree}`).trim();
      for (const f of FLAVOURS) {
        const patch = git(clone, "diff", ...f.args, parent, child);
        if (patch === "") continue;
        const where = `${parent.slice(0, 8)}..${child.slice(0, 8)} (${f.name})`;
        // worktree
        git(clone, "checkout", "-q", "-f", parent);
        git(clone, "clean", "-fdq");
        const r = await applyPatchOp(ws, { mode: "worktree", patch, mcp_conversation_id: `replay-${child.slice(0, 12)}` });
        if (!r.applied) throw new Error(`${where}: rejected ${JSON.stringify(r.rejects).slice(0, 2000)}`);
        git(clone, "add", "-A");
        expect({ where, tree: git(clone, "write-tree").trim() }).toEqual({ where, tree: childTree });
        // snapshot
        git(clone, "checkout", "-q", "-f", parent);
        git(clone, "clean", "-fdq");
        const base = await createSnapshot(ws, { paths: ["."] });
        const s = await applyPatchOp(ws, { mode: "snapshot", snapshot_id: base.snapshot_id, patch });
        if (!s.applied || s.cache_hint !== "immutable") throw new Error(`${where}: snapshot rejected ${JSON.stringify(s.rejects).slice(0, 2000)}`);
        git(clone, "checkout", "-q", "-f", child);
        git(clone, "clean", "-fdq");
        const expected = await createSnapshot(ws, { paths: ["."] });
        expect({ where, entries: ws.snapshots.load(s.snapshot_id).entries }).toEqual({ where, entries: ws.snapshots.load(expected.snapshot_id).entries });
        checked++;
      }
    }
  } finally {
    closeWorkspace(ws);
  }
  return checked;
}

describe("real history through workspace_apply_patch", () => {
  test("this project's own commits: every child reproduced byte for byte from its parent, both modes (as a server writes: spares, exchanges)", async () => {
    if (!existsSync(join(PROJECT, ".git"))) throw new Error("the project checkout has no .git; this test needs the repository's history");
    const revs = git(PROJECT, "rev-list", "--first-parent", "--max-count=41", "HEAD").trim().split("\n");
    if (revs.length < 2) throw new Error("the repository has fewer than two commits (shallow clone?); fetch its history to run this test");
    await using dir = tmpDir("ws-history-");
    const clone = join(dir.path, "clone");
    git(dir.path, "clone", "-q", "--no-checkout", PROJECT, clone);
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < revs.length; i++) pairs.push([revs[i + 1]!, revs[i]!]);
    const checked = await replayHistory(clone, pairs, true);
    expect(checked).toBeGreaterThanOrEqual(Math.min(10, pairs.length));
  }, 600_000);

  test("a generated repository with realistic edits: every child reproduced byte for byte, both modes (as a one-shot command writes)", async () => {
    await using repo = await tmpRepo();
    const commits = generateHistory(repo.root, 14, 7);
    const pairs: [string, string][] = [];
    for (let i = 1; i < commits.length; i++) pairs.push([commits[i - 1]!, commits[i]!]);
    const checked = await replayHistory(repo.root, pairs);
    expect(checked).toBe(pairs.length * FLAVOURS.length);
  }, 600_000);
});

// --- a deterministic history generator --------------------------------------

/** Real text files from node_modules, as seeds for the generated tree. */
function realSources(limit: number): { name: string; text: string }[] {
  const root = join(PROJECT, "node_modules");
  const out: { name: string; text: string }[] = [];
  const walk = (dir: string, depth: number) => {
    if (out.length >= limit || depth > 4) return;
    for (const name of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (out.length >= limit) return;
      const abs = join(dir, name.name);
      if (name.isDirectory() && !name.name.startsWith(".")) walk(abs, depth + 1);
      else if (name.isFile() && /\.(js|ts|md|json)$/.test(name.name)) {
        const bytes = readFileSync(abs);
        if (bytes.length > 1500 && bytes.length < 60_000 && !bytes.includes(0) && out.length % 1 === 0) out.push({ name: name.name, text: bytes.toString("utf8") });
      }
    }
  };
  for (const pkg of ["diff-match-patch", "valibot", "ignore", "proper-lockfile", "fast-check", "@modelcontextprotocol"]) if (existsSync(join(root, pkg))) walk(join(root, pkg), 0);
  if (out.length < 10) throw new Error("expected real source files under node_modules");
  return out;
}

type GenFile = { text: string; mode: "100644" | "100755" | "120000" };

function generateHistory(root: string, count: number, seed: number): string[] {
  const r = rng(seed);
  const sources = realSources(40);
  const tree = new Map<string, GenFile>();
  const dirs = ["src", "src/lib", "docs", "tools/bin", "ü nicode", "with space"];
  sources.slice(0, 24).forEach((s, i) => tree.set(`${dirs[i % dirs.length]}/${i}-${s.name}`, { text: s.text, mode: "100644" }));
  tree.set("crlf/windows.txt", { text: sources[25]!.text.replace(/\n/g, "\r\n"), mode: "100644" });
  tree.set("nonl.txt", { text: "no final newline\nhere", mode: "100644" });
  tree.set("tools/bin/run.sh", { text: "#!/bin/sh\necho run\n", mode: "100755" });
  tree.set("link-to-readme", { text: [...tree.keys()][0]!, mode: "120000" });
  tree.set("empty.txt", { text: "", mode: "100644" });
  const commits = [commit(root, tree, "initial")];
  for (let c = 1; c < count; c++) {
    const paths = [...tree.keys()].filter((p) => tree.get(p)!.mode !== "120000");
    const edits = 2 + r.int(5);
    for (let k = 0; k < edits; k++) {
      const p = r.pick(paths);
      const f = tree.get(p);
      if (!f) continue;
      const op = r.int(10);
      if (op < 5) f.text = editText(r, f.text);
      else if (op === 5) {
        const to = `${r.pick(dirs)}/moved-${c}-${k}-${p.split("/").pop()}`;
        if (!tree.has(to)) {
          tree.delete(p);
          tree.set(to, r.int(2) ? f : { ...f, text: editText(r, f.text) });
        }
      } else if (op === 6) tree.delete(p);
      else if (op === 7) tree.set(`${r.pick(dirs)}/new-${c}-${k}.txt`, { text: r.pick(sources).text.slice(0, 3000), mode: "100644" });
      else if (op === 8) f.mode = f.mode === "100755" ? "100644" : "100755";
      else {
        const lines = f.text.split("\n");
        f.text = r.int(2) ? lines.join("\r\n") : f.text.replace(/\n$/, "");
      }
    }
    if (c % 4 === 0) tree.set("link-to-readme", { text: r.pick(paths), mode: "120000" });
    commits.push(commit(root, tree, `change ${c}`));
  }
  return commits;
}

function editText(r: ReturnType<typeof rng>, text: string): string {
  const lines = text.split("\n");
  const blocks = 1 + r.int(4);
  for (let b = 0; b < blocks; b++) {
    const at = r.int(lines.length + 1);
    const kind = r.int(4);
    if (kind === 0) lines.splice(at, 1 + r.int(6));
    else if (kind === 1) lines.splice(at, 0, `// inserted ${r.int(1000)}`, "", `const v${r.int(99)} = ${r.int(1e6)};`);
    else if (kind === 2) for (let i = at; i < Math.min(lines.length, at + 3); i++) lines[i] = lines[i]!.replace(/[a-z]+/, (w) => w.toUpperCase());
    else lines.splice(at, 2, "  // replaced block", "  return null;");
  }
  return lines.join("\n");
}

function commit(root: string, tree: Map<string, GenFile>, message: string): string {
  for (const name of readdirSync(root)) if (name !== ".git" && name !== ".mcp") rmSync(join(root, name), { recursive: true, force: true });
  for (const [p, f] of tree) {
    const abs = join(root, p);
    mkdirSync(dirname(abs), { recursive: true });
    if (f.mode === "120000") symlinkSync(f.text, abs);
    else {
      writeFileSync(abs, f.text);
      chmodSync(abs, f.mode === "100755" ? 0o755 : 0o644);
    }
  }
  git(root, "add", "-A");
  git(root, "commit", "-q", "--allow-empty", "-m", message);
  return git(root, "rev-parse", "HEAD").trim();
}
