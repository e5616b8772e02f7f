/**
 * Precise staleness through the compiled binary and the SDK's own client,
 * over stdio and over HTTP: the semantic scenarios (spec 004's lesson: a
 * mechanism that exists is not semantics that hold). Each names the hole it
 * guards.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../src/core/hash";
import { type RootsSession, httpServe, mcpSession } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

interface Opened extends AsyncDisposable {
  s: RootsSession;
}

const TRANSPORTS: Record<string, (root: string, extra?: string[]) => Promise<Opened>> = {
  stdio: async (root, extra = []) => {
    const s = (await mcpSession(root, extra)) as RootsSession;
    return { s, [Symbol.asyncDispose]: () => s[Symbol.asyncDispose]() };
  },
  http: async (root, extra = []) => {
    const server = await httpServe(root, extra);
    const s = await server.session();
    return {
      s,
      [Symbol.asyncDispose]: async () => {
        await s[Symbol.asyncDispose]();
        await server.stop();
      },
    };
  },
};

const SEVEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";

async function repoWith(files: Record<string, string>) {
  const repo = await tmpRepo();
  for (const [p, c] of Object.entries(files)) repo.write(p, c);
  repo.commit();
  return repo;
}

const onDisk = (root: string, p: string) => readFileSync(join(root, p), "utf8");

for (const [transport, open] of Object.entries(TRANSPORTS)) {
  describe(`staleness over ${transport}`, () => {
    test("blessing: read A, A changes, read B, list the directory, write A without a lease: refused, naming A, a1 and a2", async () => {
      await using repo = await repoWith({ "a.txt": SEVEN, "b.txt": "bee\n" });
      await using o = await open(repo.root);
      const a1 = (await o.s.call("snapshot_file", { path: "a.txt" })).blob;
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("two", "TWO"));
      const a2 = blobIdOf(SEVEN.replace("two", "TWO"));
      // neither a later read of another file nor a fresh listing (which shows A's new blob) may bless the old read
      await o.s.call("snapshot_file", { path: "b.txt" });
      const listed = await o.s.call("snapshot_list", { path: "." });
      expect(listed.entries.find((e: { path: string }) => e.path === "a.txt").blob).toBe(a2);
      // nor a snapshot and its info, which show ids, not content
      const snap = await o.s.call("snapshot_create", { paths: ["."] });
      await o.s.call("snapshot_info", { snapshot_id: snap.snapshot_id });
      const err = await o.s.callError("workspace_write_file", { path: "a.txt", content: "mine\n" });
      expect(err.code).toBe("REPO_CHANGED");
      expect(err.details.reason).toBe("stale_read");
      expect(err.details.files).toMatchObject([{ path: "a.txt", pinned: a1, current: a2, diff_complete: true }]);
      expect(err.details.files[0].diff).toContain("-two\n+TWO\n");
      expect(onDisk(repo.root, "a.txt")).toBe(SEVEN.replace("two", "TWO"));
    });

    test("a refusal that showed the whole change pins what it showed: a second change is refused again with only its own diff", async () => {
      await using repo = await repoWith({ "a.txt": SEVEN });
      await using o = await open(repo.root);
      await o.s.call("snapshot_file", { path: "a.txt" });
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("two", "TWO"));
      const first = await o.s.callError("workspace_write_file", { path: "a.txt", content: "mine\n" });
      expect(first.details.files[0].diff).toContain("-two\n+TWO\n");
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("two", "TWO").replace("six", "SIX"));
      const second = await o.s.callError("workspace_write_file", { path: "a.txt", content: "mine\n" });
      expect(second.details.files).toMatchObject([{ pinned: blobIdOf(SEVEN.replace("two", "TWO")), diff_complete: true }]);
      expect(second.details.files[0].diff).toContain("-six\n+SIX\n");
      expect(second.details.files[0].diff).not.toContain("-two\n");
      // the model has now seen every change: its merged write goes through
      await o.s.call("workspace_write_file", { path: "a.txt", content: "merged\n" });
      expect(onDisk(repo.root, "a.txt")).toBe("merged\n");
    });

    test("fresh re-read: the same, but A is read again after the change: the write passes", async () => {
      await using repo = await repoWith({ "a.txt": SEVEN, "b.txt": "bee\n" });
      await using o = await open(repo.root);
      await o.s.call("snapshot_file", { path: "a.txt" });
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("two", "TWO"));
      await o.s.call("snapshot_file", { path: "b.txt" });
      await o.s.call("snapshot_file", { path: "a.txt" });
      await o.s.call("snapshot_list", { path: "." });
      await o.s.call("workspace_write_file", { path: "a.txt", content: "mine\n" });
      expect(onDisk(repo.root, "a.txt")).toBe("mine\n");
    });

    test("a grep match pins what it showed; a file only searched, not shown, keeps no pin", async () => {
      await using repo = await repoWith({ "a.txt": "needle\n", "b.txt": "hay\n" });
      await using o = await open(repo.root);
      await o.s.call("snapshot_grep", { pattern: "needle" });
      writeFileSync(join(repo.root, "a.txt"), "needle moved\n");
      writeFileSync(join(repo.root, "b.txt"), "hay moved\n");
      expect((await o.s.callError("workspace_write_file", { path: "a.txt", content: "x\n" })).details.files).toMatchObject([{ path: "a.txt" }]);
      await o.s.call("workspace_write_file", { path: "b.txt", content: "x\n" });
      expect(onDisk(repo.root, "b.txt")).toBe("x\n");
    });

    test("a write pins what it wrote: someone changing the file after it makes the next write refused; an explicit lease_id keeps its own semantics", async () => {
      await using repo = await repoWith({ "a.txt": "a\n" });
      await using o = await open(repo.root);
      const wrote = await o.s.call("workspace_write_file", { path: "a.txt", content: "mine\n" });
      writeFileSync(join(repo.root, "a.txt"), "theirs\n");
      const err = await o.s.callError("workspace_write_file", { path: "a.txt", content: "mine again\n" });
      expect(err.details.files).toMatchObject([{ path: "a.txt", pinned: wrote.blob, current: blobIdOf("theirs\n"), diff_complete: true }]);
      expect(err.details.files[0].diff).toContain("-mine\n+theirs\n");
      // with the lease of a fresh read the pins are not consulted: the lease decides
      const fresh = await o.s.call("snapshot_list", { path: "." });
      await o.s.call("workspace_write_file", { path: "a.txt", content: "leased\n", lease_id: fresh.lease_id });
      expect(onDisk(repo.root, "a.txt")).toBe("leased\n");
    });

    test("patch over a changed file: its context still matches, so it applies with a warning naming the file", async () => {
      await using repo = await repoWith({ "a.txt": SEVEN });
      await using o = await open(repo.root);
      await o.s.call("snapshot_file", { path: "a.txt" });
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("one", "ONE"));
      const out = await o.s.call("workspace_apply_patch", { patch: "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n five\n-six\n+SIX\n seven\n" });
      expect(out.applied).toBe(true);
      expect(out.warnings[0]).toContain("a.txt");
      expect(out.stale_reads).toMatchObject([{ path: "a.txt", pinned: blobIdOf(SEVEN), current: blobIdOf(SEVEN.replace("one", "ONE")) }]);
      expect(onDisk(repo.root, "a.txt")).toBe(SEVEN.replace("one", "ONE").replace("six", "SIX"));
    });

    test("patch over a changed file with --stale-writes refuse: refused, nothing written", async () => {
      await using repo = await repoWith({ "a.txt": SEVEN });
      await using o = await open(repo.root, ["--stale-writes", "refuse"]);
      await o.s.call("snapshot_file", { path: "a.txt" });
      writeFileSync(join(repo.root, "a.txt"), SEVEN.replace("one", "ONE"));
      const err = await o.s.callError("workspace_apply_patch", { patch: "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n five\n-six\n+SIX\n seven\n" });
      expect(err.code).toBe("REPO_CHANGED");
      expect(err.details.files).toMatchObject([{ path: "a.txt" }]);
      expect(onDisk(repo.root, "a.txt")).toBe(SEVEN.replace("one", "ONE"));
    });

    test("reopen: a restarted server has no pins (an unpinned write passes) and an old lease is STALE_LEASE with the current fingerprint", async () => {
      await using repo = await repoWith({ "a.txt": "a\n" });
      let lease: string;
      {
        await using o = await open(repo.root);
        lease = (await o.s.call("snapshot_file", { path: "a.txt" })).lease_id;
      }
      writeFileSync(join(repo.root, "a.txt"), "changed while no server ran\n");
      await using o = await open(repo.root);
      const err = await o.s.callError("snapshot_file", { path: "a.txt", lease_id: lease });
      expect(err.code).toBe("STALE_LEASE");
      const current = (await o.s.call("snapshot_list", { path: "." })).fingerprint;
      expect(err.details.fingerprint).toEqual(current);
      await o.s.call("workspace_write_file", { path: "a.txt", content: "mine\n" });
      expect(onDisk(repo.root, "a.txt")).toBe("mine\n");
    });
  });
}

describe("scope isolation", () => {
  test("two HTTP sessions on one repository: session 2 reads the changed file and writes it; session 1, which read it before, is refused", async () => {
    await using repo = await repoWith({ "a.txt": "a\n" });
    await using server = await httpServe(repo.root);
    await using s1 = await server.session();
    await using s2 = await server.session();
    const a1 = (await s1.call("snapshot_file", { path: "a.txt" })).blob;
    writeFileSync(join(repo.root, "a.txt"), "changed\n");
    await s2.call("snapshot_file", { path: "a.txt" });
    const s2wrote = await s2.call("workspace_write_file", { path: "a.txt", content: "session 2\n" });
    const err = await s1.callError("workspace_write_file", { path: "a.txt", content: "session 1\n" });
    expect(err.details.files).toMatchObject([{ path: "a.txt", pinned: a1, current: s2wrote.blob }]);
    expect(onDisk(repo.root, "a.txt")).toBe("session 2\n");
    // leases are the session's own: session 2 does not know session 1's
    const l1 = (await s1.call("snapshot_list", { path: "." })).lease_id;
    const unknown = await s2.callError("snapshot_list", { path: ".", lease_id: l1 });
    expect(unknown.code).toBe("STALE_LEASE");
  });

  test("two roots never share pins: a session that moves to another root writes a file of the same name unpinned, and its first root keeps its pins", async () => {
    await using r1 = await repoWith({ "a.txt": "in r1\n" });
    await using r2 = await repoWith({ "a.txt": "in r2\n" });
    await using cwd = tmpDir();
    await using server = await httpServe("", [], { cwd: cwd.path });
    await using s = await server.session({ roots: [r1.root] });
    expect((await s.call("snapshot_file", { path: "a.txt" })).content).toBe("in r1\n");
    await s.setRoots([r2.root]);
    // r2's a.txt was never read in this session: no pin, whatever r1's pin says
    await s.call("workspace_write_file", { path: "a.txt", content: "written in r2\n" });
    expect(onDisk(r2.root, "a.txt")).toBe("written in r2\n");
    expect(onDisk(r1.root, "a.txt")).toBe("in r1\n");
    writeFileSync(join(r1.root, "a.txt"), "r1 changed\n");
    await s.setRoots([r1.root]);
    const err = await s.callError("workspace_write_file", { path: "a.txt", content: "x\n" });
    expect(err.details.files).toMatchObject([{ path: "a.txt", pinned: blobIdOf("in r1\n"), current: blobIdOf("r1 changed\n") }]);
    expect(existsSync(join(cwd.path, ".mcp"))).toBe(false);
  });
});

describe("eviction", () => {
  test("past the bound of 10,000 pins the oldest go: those files pass through unpinned, the recent ones are still checked", async () => {
    await using repo = await tmpRepo();
    const n = 10_050;
    const name = (i: number) => `d${String(Math.floor(i / 1000)).padStart(2, "0")}/f${String(i).padStart(5, "0")}.txt`;
    for (let i = 0; i < n; i++) repo.write(name(i), "needle\n");
    repo.commit();
    await using s = await mcpSession(repo.root);
    // every file shown once, in walk order, through grep pages of 1,000 matches
    let cursor: string | undefined;
    let shown = 0;
    do {
      const page = await s.call("snapshot_grep", { pattern: "needle", fixed_strings: true, max_matches: 1000, ...(cursor ? { cursor } : {}) });
      shown += page.matches.length;
      cursor = page.cursor;
    } while (cursor);
    expect(shown).toBe(n);
    for (const i of [0, 49, 100, n - 1]) writeFileSync(join(repo.root, name(i)), "moved\n");
    // the recent pins are still checked (a refusal re-pins a path already pinned: nothing more is evicted)
    expect((await s.callError("workspace_write_file", { path: name(n - 1), content: "mine\n" })).details.files).toMatchObject([{ path: name(n - 1) }]);
    expect((await s.callError("workspace_write_file", { path: name(100), content: "mine\n" })).details.files).toMatchObject([{ path: name(100) }]);
    // the first 50 pinned were evicted: no pin, no refusal
    await s.call("workspace_write_file", { path: name(0), content: "mine\n" });
    await s.call("workspace_write_file", { path: name(49), content: "mine\n" });
    expect(onDisk(repo.root, name(49))).toBe("mine\n");
  }, 60_000); // writing and committing 10,050 files alone took 4.5-6.5 s on a busy disk, past the default 5 s
});

describe("roots", () => {
  test("without --root the server works on the client's root; --root wins over it", async () => {
    await using r1 = await repoWith({ "which.txt": "r1\n" });
    await using r2 = await repoWith({ "which.txt": "r2\n" });
    await using cwd = tmpDir();
    {
      await using s = (await mcpSession("", [], { roots: [r1.root], cwd: cwd.path })) as RootsSession;
      expect((await s.call("snapshot_file", { path: "which.txt" })).content).toBe("r1\n");
    }
    await using s = (await mcpSession(r2.root, [], { roots: [r1.root] })) as RootsSession;
    expect((await s.call("snapshot_file", { path: "which.txt" })).content).toBe("r2\n");
  });

  test("a client without the roots capability gets the directory the server started in", async () => {
    await using r1 = await repoWith({ "which.txt": "cwd\n" });
    await using s = await mcpSession("", [], { cwd: r1.root });
    expect((await s.call("snapshot_file", { path: "which.txt" })).content).toBe("cwd\n");
  });

  test("regression: a server started in / or in the home directory, with no --root and no client root, serves neither", async () => {
    const hadRootState = existsSync("/.mcp");
    {
      await using s = await mcpSession("", [], { cwd: "/" });
      // what a host asks on its own when it connects: nothing to list, not an error
      expect(await s.client.listResources()).toEqual({ resources: [] });
      const err = await s.callError("snapshot_list", { path: "." });
      expect(err).toMatchObject({ code: "NOT_FOUND", details: { reason: "no_root" } });
      expect(err.message).toContain("the file system's root");
      expect(err.message).toContain("--root");
    }
    {
      // a client that lists no roots falls back the same way
      await using s = (await mcpSession("", [], { cwd: "/", roots: [] })) as RootsSession;
      expect((await s.callError("snapshot_create", {})).details.reason).toBe("no_root");
    }
    expect(existsSync("/.mcp")).toBe(hadRootState);
    await using home = tmpDir();
    writeFileSync(join(home.path, "notes.txt"), "mine\n");
    {
      await using s = await mcpSession("", [], { cwd: home.path, env: { HOME: home.path } });
      const err = await s.callError("snapshot_file", { path: "notes.txt" });
      expect(err.details.reason).toBe("no_root");
      expect(err.message).toContain("the home directory");
    }
    expect(existsSync(join(home.path, ".mcp"))).toBe(false);
    // named, either is served; a home directory that is a repository is served as one
    {
      await using s = await mcpSession(home.path, [], { env: { HOME: home.path } });
      expect((await s.call("snapshot_file", { path: "notes.txt" })).content).toBe("mine\n");
    }
    await using repoHome = await repoWith({ "which.txt": "home repo\n" });
    await using s = await mcpSession("", [], { cwd: repoHome.root, env: { HOME: repoHome.root } });
    expect((await s.call("snapshot_file", { path: "which.txt" })).content).toBe("home repo\n");
  });

  test("roots that name no directory here: NOT_FOUND naming them, never another tree", async () => {
    await using cwd = tmpDir();
    await using s = (await mcpSession("", [], { roots: ["/nonexistent/worksnap-root"], cwd: cwd.path })) as RootsSession;
    const err = await s.callError("snapshot_list", { path: "." });
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toContain("roots");
    expect(existsSync(join(cwd.path, ".mcp"))).toBe(false);
  });
});
