import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { closeWorkspace, openWorkspace } from "../../src/ops/workspace";
import { readGitState, STATUS_ARGS } from "../../src/repo/fingerprint";
import { nativeModule } from "../../src/repo/native";
import { openRoot } from "../../src/repo/root";
import { gitStatus } from "../../src/repo/status-index";
import { statusWatchCounts } from "../../src/repo/status-watch";
import { confirmUntrackedDirs } from "../../src/repo/untracked-dirs";
import { plainStatus } from "../helpers/git-status";
import { runGit, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

/**
 * What git's untracked cache in the shared copy of the worksnap root `root` says now, asked directly (the copy not
 * written); with `built`, only whether the copy holds the cache ("" when it does not).
 */
function cachedStatus(root: string, built = false): string {
  const dir = join(root, ".mcp", "git");
  const [name] = existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith("status-index-")) : [];
  if (name === undefined) return "";
  if (built) return readFileSync(join(dir, name)).includes("UNTR") ? "built" : "";
  const r = Bun.spawnSync(["git", "-c", "core.untrackedCache=true", ...STATUS_ARGS], {
    cwd: root,
    env: { ...process.env, GIT_INDEX_FILE: join(dir, name as string), GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
  });
  return r.stdout.toString("latin1");
}

const ours = async (root: string) => Buffer.from((await readGitState(openRoot(root))).status).toString("latin1");

const NON_UTF8 = Buffer.from([0x6e, 0xff, 0x78]).toString("latin1"); // "n\xffx"

/**
 * Untracked directories, each emptied a different way once git's cache holds them (`?? d/` in a parent whose stat
 * data does not change), and some that keep something to list.
 */
const CASES: Array<{ dir?: string; make(w: (p: string, s?: string) => void): void; empty(root: string): void }> = [
  { dir: "gone-sub", make: (w) => w("gone-sub/er/leaf"), empty: (r) => rmSync(join(r, "gone-sub/er"), { recursive: true }) },
  { dir: "gone-file", make: (w) => w("gone-file/only"), empty: (r) => rmSync(join(r, "gone-file/only")) },
  { dir: "empty-sub-left", make: (w) => w("empty-sub-left/er/leaf"), empty: (r) => rmSync(join(r, "empty-sub-left/er/leaf")) },
  { dir: "ignored-left", make: (w) => (w("ignored-left/a.txt"), w("ignored-left/b.log")), empty: (r) => rmSync(join(r, "ignored-left/a.txt")) },
  { dir: "tracked/untracked-sub", make: (w) => w("tracked/untracked-sub/leaf"), empty: (r) => rmSync(join(r, "tracked/untracked-sub/leaf")) },
  { dir: "we[i]rd*?", make: (w) => w("we[i]rd*?/leaf"), empty: (r) => rmSync(join(r, "we[i]rd*?/leaf")) },
  { dir: NON_UTF8, make: (w) => w(`${NON_UTF8}/leaf`), empty: (r) => rmSync(Buffer.from(join(r, `${NON_UTF8}/leaf`), "latin1")) },
  // still something to list: their lines stay
  { make: (w) => (w("kept/a"), w("kept/b")), empty: (r) => rmSync(join(r, "kept/a")) },
  { make: (w) => w("kept-deep/x/y/leaf"), empty: () => undefined },
  { make: (w) => (w(`${NON_UTF8}-kept/a`), w(`${NON_UTF8}-kept/b`)), empty: (r) => rmSync(Buffer.from(join(r, `${NON_UTF8}-kept/a`), "latin1")) },
  { make: (w) => (w("ke[p]t*?/a"), w("ke[p]t*?/b")), empty: (r) => rmSync(join(r, "ke[p]t*?/a")) },
];

function seed(repo: TmpRepo): void {
  repo.write(".gitignore", "*.log\n");
  repo.write("tracked/f.txt", "tracked\n");
  repo.write("src/main.ts", "main\n");
  repo.write("moves/keep.txt", "kept\n");
  repo.commit("seed");
}

/** The untracked directories of CASES, made. */
function makeCases(root: string): void {
  const w = (p: string, s = "x\n") => {
    mkdirSync(Buffer.from(join(root, p.slice(0, p.lastIndexOf("/"))), "latin1"), { recursive: true });
    writeFileSync(Buffer.from(join(root, p), "latin1"), s);
  };
  for (const c of CASES) c.make(w);
}

/** Past the second the cache was written in: git no longer reads a directory again for being racy. */
async function nextSecond(): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) <= now) await Bun.sleep(20);
}

describe("untracked directories a cached status names", () => {
  test.each([["the work tree's top", ""], ["a directory below it", "src"]])("regression: a directory emptied after git's cache listed it is named no more (the copy's status is git's; root at %s)", async (_, below) => {
    await using repo = await tmpRepo();
    const root = join(repo.root, below);
    seed(repo);
    makeCases(repo.root);
    await nextSecond();
    // the first status makes the shared copy, the second builds git's cache in it (a second after the directories
    // changed: none of them is racy)
    expect(await ours(root)).toBe(plainStatus(repo.root));
    for (let i = 0; i < 200 && !cachedStatus(root, true); i++) {
      await Bun.sleep(10);
      expect(await ours(root)).toBe(plainStatus(repo.root));
    }
    await nextSecond();
    expect(await ours(root)).toBe(plainStatus(repo.root));
    for (const c of CASES) c.empty(repo.root);
    const want = plainStatus(repo.root);
    // the cache still names emptied directories git no longer lists: the scenario is staged
    const cached = cachedStatus(root);
    const stale = CASES.filter((c) => c.dir !== undefined && cached.includes(`?? ${c.dir}/\0`) && !want.includes(`?? ${c.dir}/\0`));
    expect(stale.length).toBeGreaterThanOrEqual(3);
    expect(want).not.toContain("gone-sub");
    expect(want).toContain("?? kept/\0");
    expect(want).toContain("?? kept-deep/\0");
    expect(want).toContain(`?? ${NON_UTF8}-kept/\0`);
    expect(want).toContain("?? ke[p]t*?/\0");
    expect(await ours(root)).toBe(want);
    // the copy that held them was dropped and made again: the statuses after it are git's too, without confirming
    expect(await ours(root)).toBe(want);
    expect(await ours(root)).toBe(want);
    expect(cachedStatus(root)).toBe(want);
  }, 60_000);

  test("renamed and copied entries keep their source records; a status without untracked directories is left as it is", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    makeCases(repo.root);
    runGit(repo.root, ["mv", "src/main.ts", "src/moved.ts"]);
    const status = Buffer.from(plainStatus(repo.root), "latin1");
    expect(status.toString("latin1")).toContain("R  src/moved.ts\0src/main.ts\0");
    // every `?? d/` line stands: nothing to drop
    expect(await confirmUntrackedDirs(repo.root, status)).toBeNull();
    // a line naming a directory that holds nothing is dropped, and only it
    mkdirSync(join(repo.root, "hollow"));
    const claimed = Buffer.concat([status, Buffer.from("?? hollow/\0", "latin1")]);
    const confirmed = await confirmUntrackedDirs(repo.root, claimed);
    expect(Buffer.from(confirmed as Uint8Array).toString("latin1")).toBe(status.toString("latin1"));
    expect(await confirmUntrackedDirs(repo.root, Buffer.from(" M tracked/f.txt\0"))).toBeNull();
  });

  const native = nativeModule() !== null && process.platform === "linux";
  test.if(native)("a watched server told everything (a directory moved): the directories emptied meanwhile are named no more", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    makeCases(repo.root);
    mkdirSync(join(repo.root, "moves/sub"));
    await nextSecond();
    const ws = openWorkspace(repo.root, { longLived: true, index: { diskBudget: 0 } });
    try {
      const served = async () => Buffer.from((await gitStatus(ws.repo)).stdout).toString("latin1");
      const full = () => statusWatchCounts(ws.repo)?.full ?? 0;
      // statuses on the shared copy until the watch's first, told everything, on its private copy
      for (let i = 0; i < 100 && full() === 0; i++) {
        expect(await served()).toBe(plainStatus(repo.root));
        await Bun.sleep(20);
      }
      expect(full()).toBe(1);
      expect(await served()).toBe(plainStatus(repo.root));
      await nextSecond();
      // a directory moved: the watch walks the tree again, and the next status is told everything (git trusts
      // directories' stat data, as on the shared copy); the untracked directories emptied meanwhile keep their
      // parents' stat data
      for (const c of CASES) c.empty(repo.root);
      renameSync(join(repo.root, "moves/sub"), join(repo.root, "moves/sub2"));
      const want = plainStatus(repo.root);
      expect(want).not.toContain("gone-sub");
      expect(await served()).toBe(want);
      expect(full()).toBe(2);
      expect(await served()).toBe(want);
    } finally {
      closeWorkspace(ws);
    }
  }, 60_000);
});
