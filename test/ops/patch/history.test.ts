/**
 * Real history: a temporary repository gets a sequence of realistic commits
 * (real source files from node_modules, edited by seeded block edits, moves,
 * renames, creations, deletions, CRLF conversions, mode changes), and for
 * every parent/child pair `git diff` in several flavours (-M, -C, -U0, -U1,
 * --no-prefix) is planned against the parent tree. Every file of the result
 * must equal the child byte for byte, with its mode.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { planPatch } from "../../../src/ops/patch/plan";
import type { FileMode } from "../../../src/core/file-mode";
import { tmpRepo } from "../../helpers/tmp-repo";
import { applyPlan, commitTree, enc, git, memoryTarget, rng, treeRows, type Tree } from "./fixtures";

function sourceFiles(): Tree {
  const dirs = ["diff-match-patch", "ajv/lib", "hono/dist/cjs", "@types/node", "valibot/dist"];
  const glob = new Bun.Glob("**/*.{js,ts,md}");
  const paths = dirs.filter((d) => existsSync(`node_modules/${d}`)).flatMap((d) => [...glob.scanSync({ cwd: `node_modules/${d}`, onlyFiles: true })].map((p) => `node_modules/${d}/${p}`)).sort();
  const tree: Tree = new Map();
  for (let i = 0; i < paths.length && tree.size < 36; i += 7) {
    const bytes = new Uint8Array(readFileSync(paths[i]!));
    if (bytes.length < 2000 || bytes.length > 150_000 || bytes.includes(0)) continue;
    tree.set(`src/${i}-${paths[i]!.split("/").pop()}`, { bytes, mode: "100644" });
  }
  if (tree.size < 10) throw new Error("expected real source files under node_modules");
  return tree;
}

type R = ReturnType<typeof rng>;

function editLines(r: R, lines: string[]): string[] {
  const out = [...lines];
  const ops = 1 + r.int(4);
  for (let k = 0; k < ops && out.length > 0; k++) {
    const at = r.int(out.length);
    const len = 1 + r.int(12);
    switch (r.int(5)) {
      case 0:
        for (let i = at; i < Math.min(out.length, at + len); i++) out[i] = out[i]!.replace(/\b(\w+)\b/, "$1Renamed");
        break;
      case 1:
        out.splice(r.int(out.length + 1), 0, ...out.slice(at, at + len));
        break;
      case 2:
        out.splice(at, len);
        break;
      case 3: {
        const block = out.splice(at, len);
        out.splice(r.int(out.length + 1), 0, ...block);
        break;
      }
      default:
        for (let i = at; i < Math.min(out.length, at + len); i++) out[i] = "  " + out[i];
    }
  }
  return out;
}

function nextTree(r: R, tree: Tree, step: number): Tree {
  const next: Tree = new Map(tree);
  const paths = [...next.keys()].sort();
  for (let n = 2 + r.int(6); n > 0; n--) {
    const path = r.pick(paths);
    const f = next.get(path);
    if (!f) continue;
    const text = Buffer.from(f.bytes).toString("latin1");
    const crlf = text.includes("\r\n");
    const lines = text.split(crlf ? "\r\n" : "\n");
    let out = editLines(r, lines).join(crlf ? "\r\n" : "\n");
    if (r.next() < 0.1) out = out.replace(/\r?\n$/, "");
    if (r.next() < 0.08) out = out.replace(/\r?\n/g, "\r\n");
    next.set(path, { bytes: new Uint8Array(Buffer.from(out, "latin1")), mode: f.mode });
  }
  const live = [...next.keys()].sort();
  const roll = r.next();
  if (roll < 0.25) {
    const from = r.pick(live);
    const names = [`moved/${step}.ts`, `docs/read me ${step}.md`, `src/ünï-${step}.ts`];
    const f = next.get(from)!;
    next.delete(from);
    const text = Buffer.from(f.bytes).toString("latin1");
    const bytes = r.next() < 0.5 ? f.bytes : new Uint8Array(Buffer.from(text.replace(/\n/, "\n// moved\n"), "latin1"));
    next.set(r.pick(names), { bytes, mode: f.mode });
  } else if (roll < 0.4) {
    next.delete(r.pick(live));
  } else if (roll < 0.55) {
    const f = next.get(r.pick(live))!;
    const copied = r.next() < 0.5 ? f.bytes : f.bytes.slice(0, Math.floor(f.bytes.length / 2));
    next.set(`new/${step}.js`, { bytes: copied, mode: "100644" });
  } else if (roll < 0.65) {
    const path = r.pick(live);
    const f = next.get(path)!;
    next.set(path, { bytes: f.bytes, mode: (f.mode === "100644" ? "100755" : "100644") as FileMode });
  } else if (roll < 0.7) {
    next.set(`empty-${step}.txt`, { bytes: enc(""), mode: "100644" });
  }
  return next;
}

/** The tree of a commit, read through git. */
function treeAt(dir: string, commit: string): Tree {
  const listing = Buffer.from(git(dir, ["ls-tree", "-r", "-z", commit])).toString("utf8").split("\0").filter(Boolean);
  const entries = listing.map((l) => {
    const [meta, path] = l.split("\t") as [string, string];
    const [mode, , oid] = meta.split(" ") as [FileMode, string, string];
    return { mode, oid, path };
  });
  const batch = Buffer.from(git(dir, ["cat-file", "--batch"], entries.map((e) => e.oid).join("\n") + "\n"));
  const tree: Tree = new Map();
  let at = 0;
  for (const e of entries) {
    const nl = batch.indexOf(10, at);
    const size = Number(batch.toString("latin1", at, nl).split(" ")[2]);
    tree.set(e.path, { bytes: new Uint8Array(batch.subarray(nl + 1, nl + 1 + size)), mode: e.mode });
    at = nl + 1 + size + 1;
  }
  return tree;
}

const FLAVOURS: string[][] = [[], ["--no-renames"], ["-C", "--find-copies-harder"], ["-U0"], ["-U1", "-M"], ["--no-prefix", "-M"], ["-U10", "--no-renames"]];

describe("planPatch on real git history", () => {
  test("git diff parent child reproduces every child, in every flavour", async () => {
    await using repo = await tmpRepo();
    const r = rng(2024);
    const commits: string[] = [];
    let tree = sourceFiles();
    commits.push(commitTree(repo.root, tree, "import"));
    for (let step = 1; step <= 14; step++) {
      tree = nextTree(r, tree, step);
      commits.push(commitTree(repo.root, tree, `step ${step}`));
    }
    let planned = 0;
    let renames = 0;
    for (let i = 1; i < commits.length; i++) {
      const parent = treeAt(repo.root, commits[i - 1]!);
      const child = treeAt(repo.root, commits[i]!);
      for (const flavour of FLAVOURS) {
        const patch = Buffer.from(git(repo.root, ["diff", "--no-color", "--no-ext-diff", ...flavour, commits[i - 1]!, commits[i]!])).toString("utf8");
        const plan = await planPatch(patch, memoryTarget(parent));
        if (!plan.ok) throw new Error(`step ${i} ${flavour.join(" ")}: ${JSON.stringify(plan.rejects, null, 1)}`);
        expect(plan.warnings).toEqual([]);
        expect(plan.offsets).toEqual([]);
        expect(treeRows(applyPlan(parent, plan))).toEqual(treeRows(child));
        renames += plan.changes.filter((c) => c.kind === "rename").length;
        planned++;
      }
    }
    expect(planned).toBe(14 * FLAVOURS.length);
    expect(renames).toBeGreaterThan(0);
  });
});
