import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash";
import { plainStatusBytes } from "../helpers/git-status";
import { mcpSession } from "../helpers/binary";
import { processRunning } from "../helpers/process";
import { rng } from "../ops/patch/fixtures";
import { answersWhileStaging, INDEX_BUSY } from "../helpers/index-toggler";
import { runGit, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

/** git's own status of the tree, as a user runs it (no copy, no cache, no monitor): what every fingerprint must hash. */
function plainStatusHash(root: string): string {
  return sha256Hex(plainStatusBytes(root));
}

/** The same status as text, for a failure's message. */
function plainStatusText(root: string): string {
  return Bun.spawnSync(["git", "status", "--porcelain=v1", "-uall"], { cwd: root }).stdout.toString();
}

function seed(repo: TmpRepo): void {
  for (const d of ["app", "app/core", "lib", "docs/guide"]) for (let i = 0; i < 5; i++) repo.write(`${d}/m${i}.ts`, `export const v${i} = ${i};\n`);
  repo.commit("seed");
}

/** The servers' own copies of git's index for their watches. */
function privateCopies(root: string): string[] {
  const dir = join(root, ".mcp", "git");
  return existsSync(dir) ? readdirSync(dir).filter((n) => /^watch-index-\d+-/.test(n)) : [];
}

const linux = process.platform === "linux";
/** The servers run a watch (Linux, with the native module; WORKSNAP_NATIVE=0 runs the suite over the paths without it). */
const watched = linux && process.env.WORKSNAP_NATIVE !== "0";

describe.if(linux)("servers whose statuses a watch tells", () => {
  test("two servers: every worktree answer's fingerprint is git's status of the tree after each outside change", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using a = await mcpSession(repo.root);
    await using b = await mcpSession(repo.root);
    // the first calls make the copies; the watches start with the servers
    for (const s of [a, b]) for (let i = 0; i < 3; i++) await s.call("snapshot_file", { path: "app/m0.ts" });
    const r = rng(77);
    for (let i = 0; i < 40; i++) {
      const marker = `outsideMarker${i}x`;
      const step = r.int(4);
      if (step === 0) appendFileSync(join(repo.root, `app/m${r.int(5)}.ts`), `// ${marker}\n`);
      else if (step === 1) {
        mkdirSync(join(repo.root, `new${i}/deep`), { recursive: true });
        writeFileSync(join(repo.root, `new${i}/deep/n.ts`), `// ${marker}\n`);
      } else if (step === 2) {
        writeFileSync(join(repo.root, `lib/m${r.int(5)}.ts`), `// ${marker}\n`);
        rmSync(join(repo.root, `docs/guide/m${r.int(5)}.ts`), { force: true });
      } else {
        const from = existsSync(join(repo.root, "docs/guide")) ? "docs/guide" : "docs/moved";
        renameSync(join(repo.root, from), join(repo.root, from === "docs/guide" ? "docs/moved" : "docs/guide"));
        appendFileSync(join(repo.root, "app/core/m1.ts"), `// ${marker}\n`);
      }
      const s = i % 2 === 0 ? a : b;
      const want = plainStatusHash(repo.root);
      const read = await s.call("snapshot_file", { path: "app/core/m0.ts" });
      expect({ i, status: read.fingerprint.status_hash }).toEqual({ i, status: want });
      const found = await s.call("snapshot_grep", { pattern: marker, fixed_strings: true });
      // on a mismatch, what a later look shows: the tree's status by hand, and the same grep asked again
      const seen = { i, step, matches: found.matches.length > 0, status: found.fingerprint.status_hash };
      if (!seen.matches || seen.status !== want) {
        const again = await s.call("snapshot_grep", { pattern: marker, fixed_strings: true });
        Object.assign(seen, { read: read.fingerprint.status_hash === want, again: [again.matches.length > 0, again.fingerprint.status_hash === want], git: plainStatusText(repo.root) });
      }
      expect(seen).toEqual({ i, step, matches: true, status: want });
    }
    if (watched) expect(privateCopies(repo.root).length).toBe(2);
  }, 120_000);

  test("the user's own git commands between an agent's reads (nothing in the tree changed): every answer's fingerprint is git's", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    await using s = await mcpSession(repo.root);
    for (let i = 0; i < 100 && privateCopies(repo.root).length === 0; i++) {
      await s.call("snapshot_file", { path: "app/m1.ts" });
      await Bun.sleep(20);
    }
    appendFileSync(join(repo.root, "lib/m1.ts"), "// modified, unstaged\n");
    const steps: string[][] = [
      ["mv", "app/m0.ts", "app/r0.ts"],
      ["config", "status.renames", "false"],
      ["config", "status.renames", "true"],
      ["commit", "-qm", "renamed"],
      ["reset", "-q", "--soft", "HEAD~1"],
      ["checkout", "-q", "-b", "side"],
      ["commit", "-q", "--allow-empty", "-m", "empty on side"],
      ["update-ref", "refs/heads/side", "HEAD~1"],
      ["stash", "-q"],
      ["stash", "pop", "-q"],
      ["rm", "-q", "--cached", "docs/guide/m2.ts"],
    ];
    for (const [i, step] of steps.entries()) {
      runGit(repo.root, step);
      const want = { i, status: plainStatusHash(repo.root), head: runGit(repo.root, ["rev-parse", "HEAD"]).trim() };
      // the first read after the command, and the ones after it that find nothing changed
      for (let k = 0; k < 3; k++) {
        const { fingerprint } = await s.call("snapshot_file", { path: "app/m1.ts" });
        expect({ i, status: fingerprint.status_hash, head: fingerprint.head_oid }).toEqual(want);
      }
    }
  }, 60_000);

  test.if(watched)("a server killed with -9 leaves its copy; the next server removes it and answers the tree as it is", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const first = await mcpSession(repo.root);
    // calls until the server's watch has made its copy (its first walk and the copy are made in the background)
    for (let i = 0; i < 100 && privateCopies(repo.root).length === 0; i++) {
      await first.call("snapshot_file", { path: "app/m0.ts" });
      await Bun.sleep(20);
    }
    const [left] = privateCopies(repo.root);
    expect(left).toBeDefined();
    const pid = Number(/^watch-index-(\d+)-/.exec(left as string)?.[1]);
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 100 && processRunning(pid); i++) await Bun.sleep(20);
    await Promise.resolve(first[Symbol.asyncDispose]()).catch(() => undefined);
    // changed while nothing watched
    appendFileSync(join(repo.root, "lib/m2.ts"), "// unwatched\n");
    rmSync(join(repo.root, "app/core"), { recursive: true });
    await using next = await mcpSession(repo.root);
    const read = await next.call("snapshot_file", { path: "app/m1.ts" });
    expect(read.fingerprint.status_hash).toBe(plainStatusHash(repo.root));
    expect(privateCopies(repo.root)).not.toContain(left);
    for (let i = 0; i < 3; i++) {
      appendFileSync(join(repo.root, "app/m3.ts"), `// ${i}\n`);
      expect((await next.call("snapshot_file", { path: "app/m1.ts" })).fingerprint.status_hash).toBe(plainStatusHash(repo.root));
    }
  }, 60_000);

  test("regression (a snapshot of a tree that never was): a server capturing and comparing while another program stages and unstages answers the work tree, or BUSY", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`f${i}.txt`, `file ${i}\n`);
    repo.commit("seed");
    repo.write("f7.txt", "edited\n");
    repo.write("gone.txt", "tracked now and then\n");
    await using s = await mcpSession(repo.root);
    // the watch starts with the server: calls until it tells the statuses, as a session finds it
    for (let i = 0; i < 100 && watched && privateCopies(repo.root).length === 0; i++) {
      await s.call("snapshot_file", { path: "f0.txt" });
      await Bun.sleep(20);
    }
    /** A tool's structured answer, or its structured error thrown as such (what answersWhileStaging records). */
    const tool = async (name: string, args: Record<string, unknown>): Promise<any> => {
      const r: any = await s.raw(name, args);
      if (r.isError) throw r.structuredContent.error;
      return r.structuredContent;
    };
    const right = JSON.stringify({ f7: "edited\n", gone: "tracked now and then\n", count: 201, changed: ["added gone.txt", "modified f7.txt"] });
    const answer = async () => {
      const made = await tool("snapshot_create", { paths: ["."] });
      const read = async (path: string) => (await tool("snapshot_file", { mode: "snapshot", snapshot_id: made.snapshot_id, path })).content;
      const changes = await tool("snapshot_changes", { from: "HEAD", to: "worktree" });
      const changed = changes.changes.map((c: { status: string; path: string }) => `${c.status} ${c.path}`).sort();
      return JSON.stringify({ f7: await read("f7.txt"), gone: await read("gone.txt"), count: made.manifest_stats.files, changed });
    };
    // the index replaced every 46 ms here: some reads span a change and are read again, some span one each time (BUSY)
    const seen = await answersWhileStaging(repo.root, ["f7.txt", "gone.txt"], answer, 30, 30);
    expect(seen.filter((a) => a !== right && a !== INDEX_BUSY)).toEqual([]);
    // the same server, once the index holds still: the work tree, staged or not (nothing wrong learnt meanwhile)
    runGit(repo.root, ["add", "f7.txt", "gone.txt"]);
    expect(await answer()).toBe(right);
    runGit(repo.root, ["reset", "-q", "f7.txt", "gone.txt"]);
    expect(await answer()).toBe(right);
  }, 120_000);
});
