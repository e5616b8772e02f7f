import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateRepo, gitEnv } from "../../bench/gen-repo.ts";

const SLOW = 120_000; // each test generates and commits real repositories
const base = mkdtempSync(join(tmpdir(), "wsbench-gen-test-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Every path under `dir` except .git, with what it is: a file's sha256 and exec bit, or a link's target. */
function describeTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const p = rel ? `${rel}/${name}` : name;
      if (p === ".git") continue;
      const st = lstatSync(join(dir, p));
      if (st.isSymbolicLink()) out.push(`${p} -> ${readlinkSync(join(dir, p))}`);
      else if (st.isDirectory()) walk(p);
      else {
        const sha = new Bun.CryptoHasher("sha256").update(readFileSync(join(dir, p))).digest("hex");
        out.push(`${p} ${st.mode & 0o111 ? "x" : "-"} ${sha}`);
      }
    }
  };
  walk("");
  return out.sort();
}

function git(cwd: string, ...args: string[]): string {
  const p = Bun.spawnSync(["git", ...args], { cwd, env: gitEnv() });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString().replace(/\n$/, "");
}

describe("gen-repo", () => {
  test("the same seed gives the same tree and commit; another seed does not", async () => {
    const a = await generateRepo({ out: join(base, "a"), files: 200, seed: 7 });
    const b = await generateRepo({ out: join(base, "b"), files: 200, seed: 7 });
    const c = await generateRepo({ out: join(base, "c"), files: 200, seed: 8 });

    const treeA = describeTree(a.out);
    expect(treeA.length).toBeGreaterThan(200);
    expect(describeTree(b.out)).toEqual(treeA);
    expect(b.head).toBe(a.head);
    expect(git(b.out, "rev-parse", "HEAD")).toBe(git(a.out, "rev-parse", "HEAD"));
    expect(git(b.out, "status", "--porcelain=v1")).toBe(git(a.out, "status", "--porcelain=v1"));

    expect(c.head).not.toBe(a.head);
    expect(describeTree(c.out)).not.toEqual(treeA);
  }, SLOW);

  test("leaves modified, deleted and untracked files, and ignored ones git does not report", async () => {
    const s = await generateRepo({ out: join(base, "dirty"), files: 300, seed: 3 });
    const status = git(s.out, "status", "--porcelain=v1", "--untracked-files=all").split("\n");
    expect(status.filter((l) => l.startsWith(" M")).length).toBe(s.modified);
    expect(status.filter((l) => l.startsWith(" D")).length).toBe(s.deleted);
    expect(status.filter((l) => l.startsWith("??")).length).toBe(s.untracked);
    expect(s.modified).toBeGreaterThan(0);
    expect(s.deleted).toBeGreaterThan(0);
    expect(s.ignored).toBeGreaterThan(0);
    const ignored = git(s.out, "status", "--porcelain=v1", "--ignored", "--untracked-files=all").split("\n").filter((l) => l.startsWith("!!"));
    expect(ignored.length).toBe(s.ignored);
  }, SLOW);

  test("the commit holds exactly what git add -A would stage", async () => {
    const s = await generateRepo({ out: join(base, "clean"), files: 250, seed: 5, dirty: false });
    expect(git(s.out, "status", "--porcelain=v1")).toBe("");
    const index = join(base, "fresh-index");
    const env = { ...gitEnv(), GIT_INDEX_FILE: index };
    expect(Bun.spawnSync(["git", "add", "-A"], { cwd: s.out, env }).exitCode).toBe(0);
    const tree = Bun.spawnSync(["git", "write-tree"], { cwd: s.out, env }).stdout.toString().trim();
    expect(tree).toBe(git(s.out, "rev-parse", "HEAD^{tree}"));
    expect(git(s.out, "ls-files", "-s").split("\n").some((l) => l.startsWith("120000"))).toBe(true);
    expect(git(s.out, "ls-files", "-s").split("\n").some((l) => l.startsWith("100755"))).toBe(true);
  }, SLOW);

  test("the releases layout: release trees side by side, most paths sharing a blob with the release before", async () => {
    const a = await generateRepo({ out: join(base, "rel-a"), files: 600, releases: 6, layout: "releases", seed: 4, dirty: false });
    const b = await generateRepo({ out: join(base, "rel-b"), files: 600, releases: 6, layout: "releases", seed: 4, dirty: false });
    expect(b.head).toBe(a.head);
    expect(describeTree(b.out)).toEqual(describeTree(a.out));
    const listing = git(a.out, "ls-files", "-s", "-z").split("\0").filter(Boolean);
    const roots = new Set(listing.map((l) => l.split("\t")[1]!.split("/").slice(0, 2).join("/")));
    expect([...roots].sort()).toEqual(["v1.0", "v1.1", "v1.2", "v1.3", "v1.4", "v1.5"].map((v) => `releases/${v}`));
    const blobs = new Set(listing.map((l) => l.split(" ")[1]));
    expect(listing.length).toBeGreaterThan(550);
    expect(blobs.size).toBeLessThan(listing.length / 2);
    expect(a.distinctBlobs).toBeLessThanOrEqual(blobs.size);
    expect(a.distinctBytes).toBeLessThan(a.bytes / 2);
    // every release holds edited files: the same path, another blob than in the release before
    const byPath = new Map(listing.map((l) => [l.split("\t")[1]!, l.split(" ")[1]!]));
    const edited = [...byPath].filter(([p, oid]) => p.startsWith("releases/v1.5/") && byPath.get(p.replace("/v1.5/", "/v1.4/")) !== undefined && byPath.get(p.replace("/v1.5/", "/v1.4/")) !== oid);
    expect(edited.length).toBeGreaterThan(0);
    // what the commit holds is what git add -A stages
    const index = join(base, "rel-index");
    const env = { ...gitEnv(), GIT_INDEX_FILE: index };
    expect(Bun.spawnSync(["git", "add", "-A"], { cwd: a.out, env }).exitCode).toBe(0);
    expect(Bun.spawnSync(["git", "write-tree"], { cwd: a.out, env }).stdout.toString().trim()).toBe(git(a.out, "rev-parse", "HEAD^{tree}"));
  }, SLOW);
});
