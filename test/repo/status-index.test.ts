import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readGitState, STATUS_ARGS } from "../../src/repo/fingerprint";
import { openRoot } from "../../src/repo/root";
import { configureStatusCache, mtimeProbe, primeStatusCopy } from "../../src/repo/status-index";
import { rng } from "../ops/patch/fixtures";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

/** `git status` as worksnap ran it before the cache: on the user's index, never writing it. */
function plainStatus(root: string): string {
  const r = Bun.spawnSync(["git", ...STATUS_ARGS], { cwd: root, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" } });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return r.stdout.toString();
}

async function ourStatus(root: string): Promise<string> {
  return new TextDecoder().decode((await readGitState(openRoot(root))).status);
}

/** The status as another process runs it (its own check of the copy, its own git children). */
async function statusInProcess(root: string): Promise<string> {
  const script = `import { readGitState } from ${JSON.stringify(join(import.meta.dir, "../../src/repo/fingerprint"))};
    import { openRoot } from ${JSON.stringify(join(import.meta.dir, "../../src/repo/root"))};
    process.stdout.write((await readGitState(openRoot(${JSON.stringify(root)}))).status);`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(err);
  return out;
}

function copies(root: string): string[] {
  const dir = join(root, ".mcp", "git");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith("status-index-")) : [];
}

/** Waits for the copy a status makes after it has answered (a copy other than `old`); fails after 5 s. */
async function untilNewCopy(root: string, old?: string): Promise<string> {
  const end = Date.now() + 5000;
  for (;;) {
    const [name] = copies(root);
    if (name !== undefined && name !== old) return name;
    if (Date.now() > end) throw new Error("no new copy of the index was made");
    await Bun.sleep(5);
  }
}

/** True when git wrote its untracked cache (the UNTR extension) into the copy. */
function cacheWritten(root: string): boolean {
  const [name] = copies(root);
  return name !== undefined && readFileSync(join(root, ".mcp", "git", name)).includes("UNTR");
}

/**
 * Every file under .git with its size and mtime: what a write to the user's .git would change. git itself touches
 * a split index's shared part whenever it reads it (so it does not expire): its mtime is left out.
 */
function gitDirState(root: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const st = statSync(abs, { bigint: true });
      if (st.isDirectory()) walk(abs);
      else out.push(`${abs.slice(root.length)} ${st.size} ${name.startsWith("sharedindex.") ? "-" : st.mtimeNs} ${st.ino}`);
    }
  };
  walk(join(root, ".git"));
  return out.join("\n");
}

async function committedTree(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  for (const d of ["src", "src/lib", "docs", "docs/img", "tools"]) repo.write(`${d}/keep.txt`, `${d}\n`);
  repo.write(".gitignore", "*.log\n");
  repo.commit();
  return repo;
}

describe("git status on worksnap's copy of the index (untracked cache)", () => {
  test("the same bytes as the plain status after every change of a random flood, changes made in the tick before the status", async () => {
    await using repo = await committedTree();
    const { pick } = rng(19);
    const dirs = ["", "src", "src/lib", "docs", "docs/img", "tools", "new", "new/deep", "src/gen"];
    const untracked = new Set<string>();
    let n = 0;
    const ops: (() => void)[] = [
      () => {
        const p = `${pick(dirs)}/u${n++}.${pick(["txt", "log", "js"])}`.replace(/^\//, "");
        repo.write(p, `u ${n}\n`);
        untracked.add(p);
      },
      () => {
        const p = pick([...untracked]);
        if (p !== undefined && existsSync(join(repo.root, p))) rmSync(join(repo.root, p));
        if (p !== undefined) untracked.delete(p);
      },
      () => rmSync(join(repo.root, pick(["new", "src/gen", "new/deep"])), { recursive: true, force: true }),
      () => appendFileSync(join(repo.root, pick(dirs.filter((d) => existsSync(join(repo.root, d || ".")))) || ".", ".gitignore"), `${pick(["*.js", "u1*", "deep/", "!u2.log"])}\n`),
      () => {
        const g = join(repo.root, pick(["", "src", "docs"]), ".gitignore");
        if (existsSync(g)) writeFileSync(g, readFileSync(g, "utf8").split("\n").slice(1).join("\n"));
      },
      () => appendFileSync(join(repo.root, ".git", "info", "exclude"), `${pick(["*.txt", "tools/", "u3*"])}\n`),
      () => writeFileSync(join(repo.root, ".git", "info", "exclude"), ""),
      () => writeFileSync(join(repo.root, pick(["src", "docs", "tools"]), "keep.txt"), `${pick(["A", "B", "C"])}${n++}`.slice(0, 4).padEnd(4, "x") + "\n"),
      () => {
        const from = join(repo.root, "new");
        if (existsSync(from)) renameSync(from, join(repo.root, `moved${n++}`));
      },
      () => mkdirSync(join(repo.root, `empty${n++}`, "inner"), { recursive: true }),
      () => {
        const p = pick([...untracked]);
        if (p !== undefined && existsSync(join(repo.root, p))) repo.git("add", "-f", "--", p); // the user's index changes: a new copy
      },
      () => undefined, // the status again, nothing changed
    ];
    for (let step = 0; step < 160; step++) {
      pick(ops)();
      const ours = await ourStatus(repo.root);
      const plain = plainStatus(repo.root);
      if (ours !== plain) throw new Error(`step ${step}: ${JSON.stringify(ours)} != ${JSON.stringify(plain)}`);
    }
    // the cache was really used: git wrote it into the copy, and one copy is kept
    expect(cacheWritten(repo.root)).toBe(true);
    expect(copies(repo.root)).toHaveLength(1);
  }, 60_000);

  test("the user's .git is never written: no lock, no index write, no shared index", async () => {
    await using repo = await committedTree();
    repo.write("src/new.txt", "untracked\n");
    const before = gitDirState(repo.root);
    for (let i = 0; i < 4; i++) {
      repo.write(`docs/u${i}.txt`, `${i}\n`);
      expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
    }
    expect(cacheWritten(repo.root)).toBe(true);
    expect(gitDirState(repo.root)).toBe(before);
  });

  test("a new copy when the user's index changes; the copy of the old index removed", async () => {
    await using repo = await committedTree();
    repo.write("tools/a.txt", "a\n");
    await ourStatus(repo.root);
    await ourStatus(repo.root);
    const [first] = copies(repo.root);
    expect(first).toBeDefined();
    repo.git("add", "tools/a.txt");
    expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root)); // on the user's index, then the copy is made
    expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root)); // on the new copy
    const now = copies(repo.root);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first as string);
    expect(plainStatus(repo.root)).toContain("A  tools/a.txt");
  });

  test("a new copy's first status, the one that builds git's cache, can be run ahead (a server's idle work): once, then the statuses find it built", async () => {
    await using repo = await committedTree();
    repo.write("tools/new/a.txt", "a\n");
    const r = openRoot(repo.root);
    expect(await primeStatusCopy(r)).toBe(false); // no copy yet
    expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root)); // on the user's index; the copy made after it
    const before = await untilNewCopy(repo.root);
    expect(cacheWritten(repo.root)).toBe(false);
    expect(await primeStatusCopy(r)).toBe(true);
    expect(cacheWritten(repo.root)).toBe(true);
    expect(await primeStatusCopy(r)).toBe(false); // once per copy
    expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
    // a copy a status has used already is not run again
    repo.git("add", "tools/new/a.txt");
    await ourStatus(repo.root); // on the user's index; a new copy made after it
    await untilNewCopy(repo.root, before);
    expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root)); // the new copy's first status builds the cache itself
    expect(cacheWritten(repo.root)).toBe(true);
    expect(await primeStatusCopy(r)).toBe(false);
  });

  test("a copy cut short (a crash before it reached the disk): the plain status's bytes, and a sound copy made again", async () => {
    await using repo = await committedTree();
    repo.write("docs/u.txt", "u\n");
    await ourStatus(repo.root);
    await ourStatus(repo.root);
    const [name] = copies(repo.root);
    const copy = join(repo.root, ".mcp", "git", name as string);
    const whole = readFileSync(copy);
    // a process started after the power loss (this one has seen the copy sound), as git reads it: no error, other entries
    const afterCrash = () => statusInProcess(repo.root);
    for (const torn of [whole.subarray(0, 100), Buffer.concat([whole.subarray(0, whole.length - 4096), Buffer.alloc(4096)]), Buffer.alloc(whole.length)]) {
      writeFileSync(copy, torn);
      expect(await afterCrash()).toBe(plainStatus(repo.root));
      expect(await afterCrash()).toBe(plainStatus(repo.root)); // the copy made again
      expect(await afterCrash()).toBe(plainStatus(repo.root)); // its cache written
      expect(cacheWritten(repo.root)).toBe(true);
    }
  });

  test("statuses at once in this process and two others, each change of the tree making git want to write the copy (or of the index, a new copy): every one the plain status's bytes", async () => {
    await using repo = await committedTree();
    await ourStatus(repo.root);
    await ourStatus(repo.root); // the copy made, its cache written
    const { pick } = rng(4);
    for (let round = 0; round < 12; round++) {
      const dir = pick(["src", "docs/img", "tools", `fresh${round}`]);
      repo.write(`${dir}/r${round}.txt`, `${round}\n`); // a directory changed: each status below finds the cache stale
      if (round % 3 === 2) rmSync(join(repo.root, dir), { recursive: true, force: true });
      else if (round % 4 === 3) repo.git("add", "-f", `${dir}/r${round}.txt`); // the index changes: copies made at once
      const plain = plainStatus(repo.root);
      const all = await Promise.all([ourStatus(repo.root), ourStatus(repo.root), ourStatus(repo.root), statusInProcess(repo.root), statusInProcess(repo.root)]);
      all.forEach((got, k) => {
        if (got !== plain) throw new Error(`round ${round}, status ${k}: ${JSON.stringify(got)} != ${JSON.stringify(plain)}`);
      });
    }
    expect(cacheWritten(repo.root)).toBe(true);
    expect(copies(repo.root)).toHaveLength(1);
    expect(readdirSync(join(repo.root, ".mcp", "git")).filter((n) => n.endsWith(".lock"))).toEqual([]);
  }, 60_000);

  test("a split index is left alone: no copy, nothing written to .git", async () => {
    await using repo = await committedTree();
    repo.git("update-index", "--split-index");
    repo.write("src/x.txt", "x\n");
    const before = gitDirState(repo.root);
    for (let i = 0; i < 3; i++) expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
    expect(copies(repo.root)).toHaveLength(0);
    expect(gitDirState(repo.root)).toBe(before);
  });

  test("core.untrackedCache=false in the repository's config: the plain status, no cache written", async () => {
    await using repo = await committedTree();
    repo.git("config", "core.untrackedCache", "false");
    repo.write("src/x.txt", "x\n");
    for (let i = 0; i < 3; i++) expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
    expect(cacheWritten(repo.root)).toBe(false);
  });
});

describe("where the file system's type does not tell (macOS): git's own test decides, once, in the background", () => {
  /** This machine's file system under another platform's rule; the rule of this one back afterwards. */
  async function asPlatform<T>(platform: NodeJS.Platform, run: () => Promise<T>): Promise<T> {
    configureStatusCache({ platform });
    try {
      return await run();
    } finally {
      configureStatusCache({ platform: process.platform });
    }
  }

  const verdict = (root: string) => JSON.parse(readFileSync(join(root, ".mcp", "cache", "dir-mtimes.json"), "utf8"));

  test("no verdict: the plain status and no copy; a server's idle work runs the test, then statuses take the copy, the same bytes", async () => {
    await using repo = await committedTree();
    repo.write("src/new/u.txt", "u\n");
    const r = openRoot(repo.root);
    await asPlatform("darwin", async () => {
      for (let i = 0; i < 2; i++) expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      await Bun.sleep(50);
      expect(copies(repo.root)).toHaveLength(0);
      const userView = plainStatus(repo.root);
      await primeStatusCopy(r);
      const running = mtimeProbe(r);
      expect(running).toBeDefined();
      // while git's test runs (about 6 s), the user's status sees nothing of it
      for (let i = 0; i < 3; i++) {
        await Bun.sleep(1000);
        expect(plainStatus(repo.root)).toBe(userView);
      }
      expect(await running).toBe(true);
      expect(verdict(repo.root)).toMatchObject({ platform: "darwin", ok: true });
      expect(readdirSync(join(repo.root, ".mcp", "tmp")).filter((n) => n.includes("mtime-test"))).toEqual([]);
      expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root)); // on the user's index; the copy made after it
      await untilNewCopy(repo.root);
      for (const change of ["src/new/v.txt", "docs/img/w.txt", "tools/x.log"]) {
        repo.write(change, "v\n");
        expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      }
      expect(cacheWritten(repo.root)).toBe(true);
      await primeStatusCopy(r);
      expect(mtimeProbe(r)).toBe(running); // once per process
    });
  }, 60_000);

  test("a verdict is taken only for its platform and device; a failed test keeps the plain status; Windows never", async () => {
    await using repo = await committedTree();
    repo.write("src/u.txt", "u\n");
    const r = openRoot(repo.root);
    const keep = (v: object) => {
      mkdirSync(join(repo.root, ".mcp", "cache"), { recursive: true });
      writeFileSync(join(repo.root, ".mcp", "cache", "dir-mtimes.json"), JSON.stringify(v));
    };
    const dev = statSync(repo.root).dev;
    for (const v of [{ platform: "darwin", dev: dev + 1, ok: true }, { platform: "freebsd", dev, ok: true }, { platform: "darwin", dev, ok: false }]) {
      keep(v);
      await asPlatform("darwin", async () => {
        for (let i = 0; i < 2; i++) expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      });
      await Bun.sleep(50);
      expect(copies(repo.root)).toHaveLength(0);
    }
    keep({ platform: "win32", dev, ok: true });
    await asPlatform("win32", async () => {
      for (let i = 0; i < 2; i++) expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      await primeStatusCopy(r);
      expect(mtimeProbe(r)).toBeUndefined();
    });
    await Bun.sleep(50);
    expect(copies(repo.root)).toHaveLength(0);
    // the verdict of this platform and device: the copy
    keep({ platform: "darwin", dev, ok: true });
    await asPlatform("darwin", async () => {
      expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      await untilNewCopy(repo.root);
      expect(await ourStatus(repo.root)).toBe(plainStatus(repo.root));
      expect(cacheWritten(repo.root)).toBe(true);
    });
  }, 60_000);
});
