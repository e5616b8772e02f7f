/**
 * Writes into a work tree with mounts inside it, as containers and CI runners make them: a directory
 * bind-mounted (a volume: the same file system through another mount, where no rename crosses, although
 * both show one device), a tmpfs (another device), a read-only mount, and worksnap's own `.mcp` as a mount
 * of its own (a cache volume). Every write lands where it was asked, is recorded and can be rejected; a
 * write that meets a read-only file system is refused whole, saying where, with every file as it was.
 * Driven through the compiled binary as an agent (the MCP SDK's client) and a person (the CLI) would.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BINARY, cli, historyEntries, mcpSession } from "../../helpers/binary";
import { mountsForTests } from "../../helpers/mounts";
import { runGit, tmpRepo } from "../../helpers/tmp-repo";
import { nativeModule } from "../../../src/repo/native";

const BUN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun");
const CRASH_WORKER = join(import.meta.dir, "..", "..", "fixtures", "write-crash-worker.ts");

const mounts = mountsForTests();

function put(root: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
}

const read = (root: string, p: string) => readFileSync(join(root, p), "utf8");
const status = (root: string) => runGit(root, ["status", "--porcelain", "--untracked-files=all"]);

/** Every recorded edit rejected through the CLI, as a reviewer does. */
function rejectAll(root: string): void {
  const r = cli(["history", "reject", ...historyEntries(root).map((e) => e.edit_id), "--root", root]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
}

describe.skipIf(!mounts.canMount)("a work tree with mounts inside it", () => {
  for (const kind of ["bind", "tmpfs"] as const) {
    test(`a directory that is a ${kind === "bind" ? "bind mount (the same file system through another mount)" : "tmpfs (another device)"}: writes, patches and moves into and out of it land, are recorded and rejected (regression: ${kind === "bind" ? "every write there" : "a move into or out of it"} failed with INTERNAL EXDEV)`, async () => {
      await using repo = await tmpRepo();
      const root = repo.root;
      put(root, { "top.txt": "top\n", "keep.txt": "keep\n" });
      mkdirSync(join(root, "vol"));
      using _vol = kind === "bind" ? mounts.bind(join(root, "vol")) : mounts.tmpfs(join(root, "vol"));
      put(root, { "vol/a.txt": "a\n", "vol/dir/x.txt": "x\n", "vol/dir/y.txt": "y\n" });
      repo.commit("start");
      {
        await using s = await mcpSession(root);
        const w = await s.call("workspace_write_file", { path: "vol/a.txt", content: "a2\n" });
        expect(w.changed).toEqual([expect.objectContaining({ path: "vol/a.txt", status: "modified" })]);
        await s.call("workspace_write_file", { path: "vol/new/b.txt", content: "b\n" });
        const p = await s.call("workspace_apply_patch", {
          patch: "--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-keep\n+kept\n--- a/vol/dir/x.txt\n+++ b/vol/dir/x.txt\n@@ -1 +1 @@\n-x\n+x2\n",
        });
        expect(p.changed.map((c: any) => [c.path, c.status])).toEqual([["keep.txt", "modified"], ["vol/dir/x.txt", "modified"]]);
        // across the mount's edge, both ways, a file and a directory
        await s.call("workspace_move", { from: "top.txt", to: "vol/top.txt" });
        await s.call("workspace_move", { from: "vol/a.txt", to: "a.txt" });
        await s.call("workspace_move", { from: "vol/dir", to: "moved" });
        // a patch's rename across it, with an edit
        await s.call("workspace_apply_patch", { patch: "diff --git a/keep.txt b/vol/keep.txt\nsimilarity index 50%\nrename from keep.txt\nrename to vol/keep.txt\n--- a/keep.txt\n+++ b/vol/keep.txt\n@@ -1 +1 @@\n-kept\n+kept2\n" });
      }
      expect(read(root, "vol/top.txt")).toBe("top\n");
      expect(read(root, "a.txt")).toBe("a2\n");
      expect(read(root, "moved/x.txt")).toBe("x2\n");
      expect(read(root, "moved/y.txt")).toBe("y\n");
      expect(read(root, "vol/keep.txt")).toBe("kept2\n");
      expect(read(root, "vol/new/b.txt")).toBe("b\n");
      expect(readdirSync(join(root, "vol")).sort()).toEqual(["keep.txt", "new", "top.txt"]);
      expect(readdirSync(root).sort()).toEqual([".git", ".mcp", "a.txt", "moved", "vol"]);
      expect(historyEntries(root).length).toBe(9);
      // nothing of worksnap's staging is left on either side
      expect(readdirSync(join(root, "vol")).some((n) => n.startsWith(".worksnap-"))).toBe(false);
      rejectAll(root);
      expect(status(root)).toBe("");
      expect(read(root, "vol/a.txt")).toBe("a\n");
      expect(read(root, "top.txt")).toBe("top\n");
    });
  }

  test("a read-only mount inside the work tree: a change set that writes there is refused whole, naming where, with every file as it was and nothing recorded; writable again, the same change applies", async () => {
    await using repo = await tmpRepo();
    const root = repo.root;
    put(root, { "rw/a.txt": "one\n", "ro/b.txt": "one\n", "c.txt": "c\n" });
    repo.commit("start");
    using _ro = mounts.bind(join(root, "ro"), { readOnly: true });
    const patch = "--- a/rw/a.txt\n+++ b/rw/a.txt\n@@ -1 +1 @@\n-one\n+two\n--- a/ro/b.txt\n+++ b/ro/b.txt\n@@ -1 +1 @@\n-one\n+two\n";
    {
      await using s = await mcpSession(root);
      const refusals: [string, Record<string, unknown>, string][] = [
        ["workspace_apply_patch", { patch }, "ro"],
        ["workspace_write_file", { path: "ro/new.txt", content: "n\n" }, "ro"],
        ["workspace_write_file", { path: "ro/b.txt", content: "n\n" }, "ro"],
        ["workspace_delete", { path: "ro/b.txt" }, "ro/b.txt"],
        ["workspace_move", { from: "ro/b.txt", to: "rw/b.txt" }, "ro/b.txt"],
        ["workspace_move", { from: "c.txt", to: "ro/c.txt" }, "ro"],
      ];
      for (const [tool, args, where] of refusals) {
        const e = await s.callError(tool, args);
        expect([tool, e.code]).toEqual([tool, "PERMISSION_DENIED"]);
        expect(e.details).toMatchObject({ errno: "EROFS", reason: "read_only_file_system", path: where });
        expect(e.message).toBe(`${where} is on a file system mounted read-only; nothing was written, every file is as it was`);
      }
      // reads still work there
      const live = await s.call("snapshot_grep", { mode: "worktree", pattern: "one" });
      expect(live.matches.map((m: { path: string }) => m.path)).toEqual(["ro/b.txt", "rw/a.txt"]);
    }
    expect(status(root)).toBe("");
    expect(readdirSync(root).sort()).toEqual([".git", ".mcp", "c.txt", "ro", "rw"]);
    expect(readdirSync(join(root, "rw"))).toEqual(["a.txt"]);
    expect(historyEntries(root)).toEqual([]);
    const file = repo.beside(".diff");
    writeFileSync(file, patch);
    const r = cli(["apply", file, "--root", root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("worksnap: PERMISSION_DENIED: ro is on a file system mounted read-only; nothing was written, every file is as it was\n");
    expect(status(root)).toBe("");
    mounts.remount(join(root, "ro"), { readOnly: false });
    const ok = cli(["apply", file, "--root", root]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(status(root)).toBe(" M ro/b.txt\n M rw/a.txt\n");
    expect(historyEntries(root).map((e) => e.file_path).sort()).toEqual(["ro/b.txt", "rw/a.txt"]);
  });

  test("a full volume inside the work tree: a change set that does not fit there is refused whole as a full disk, every file as it was", async () => {
    await using repo = await tmpRepo();
    const root = repo.root;
    mkdirSync(join(root, "vol"));
    using _vol = mounts.tmpfs(join(root, "vol"), "1m");
    put(root, { "a.txt": "a\n", "vol/b.txt": "b\n" });
    repo.commit("start");
    await using s = await mcpSession(root);
    const big = "x".repeat(700_000);
    const patch = `--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+a2\n--- a/vol/b.txt\n+++ b/vol/b.txt\n@@ -1 +1,2 @@\n b\n+${big}\n--- /dev/null\n+++ b/vol/c.txt\n@@ -0,0 +1 @@\n+${big}\n`;
    const e = await s.callError("workspace_apply_patch", { patch });
    expect(e.code).toBe("TOO_LARGE");
    expect(e.details.reason).toBe("disk_full");
    expect(e.message).toContain("nothing was written, every file is as it was");
    expect(status(root)).toBe("");
    expect(readdirSync(join(root, "vol"))).toEqual(["b.txt"]);
    expect(historyEntries(root)).toEqual([]);
    // what fits goes through
    await s.call("workspace_write_file", { path: "vol/c.txt", content: big });
    expect(read(root, "vol/c.txt")).toBe(big);
  });

  for (const finder of ["a running server's next write", "a new command"] as const) {
    test.skipIf(nativeModule() === null)(`a process killed with a temporary name in the work tree (a file written beside its target on a volume): ${finder} completes the write and removes the name`, async () => {
      await using repo = await tmpRepo();
      const root = repo.root;
      mkdirSync(join(root, "vol"));
      using _vol = mounts.tmpfs(join(root, "vol"));
      const files = Array.from({ length: 10 }, (_, i) => `vol/f${i}.txt`);
      for (const f of files) put(root, { [f]: "old\n" });
      repo.commit("start");
      writeFileSync(join(root, ".git/info/exclude"), "/server.txt\n");
      const patch = repo.beside(".diff");
      writeFileSync(patch, files.map((f) => `--- a/${f}\n+++ b/${f}\n@@ -1 +1 @@\n-old\n+new\n`).join(""));
      await using server = finder === "a new command" ? null : await mcpSession(root);
      // the worker dies before renaming its 4th file into place: that file's temporary name is in vol/
      const worker = Bun.spawn([BUN, CRASH_WORKER, root, patch, "beside", "4"], { stdout: "ignore", stderr: "pipe" });
      expect(await worker.exited).not.toBe(0);
      expect(worker.signalCode).toBe("SIGKILL");
      const temps = () => readdirSync(join(root, "vol")).filter((n) => n.startsWith(".worksnap-"));
      expect(temps().length).toBe(1);
      if (server) await server.call("workspace_write_file", { path: "server.txt", content: "s\n" });
      else {
        const next = cli(["history", "status", "--root", root]);
        expect(next.code).toBe(0);
        expect(next.stderr).toContain("completed an interrupted write");
      }
      expect(temps()).toEqual([]);
      // the dead process's note went with its name (the finder's own note, if it wrote beside too, is its own)
      expect(readdirSync(join(root, ".mcp/tmp")).filter((n) => n.startsWith(`${worker.pid}-`))).toEqual([]);
      for (const f of files) expect([f, read(root, f)]).toEqual([f, "new\n"]);
      expect(historyEntries(root).filter((e) => e.file_path.startsWith("vol/")).length).toBe(10);
    });
  }

  test("kill -9 at any moment of a patch into a volume: the files are all old or all new, the history says which, and nothing of worksnap's is left in the work tree, whether a new command or a running server finds it", async () => {
    await using repo = await tmpRepo();
    const root = repo.root;
    mkdirSync(join(root, "vol"));
    using _vol = mounts.tmpfs(join(root, "vol"), "64m");
    const files = 120;
    const name = (i: number) => `vol/f${String(i).padStart(3, "0")}.txt`;
    const old = "line\n".repeat(8000);
    for (let i = 0; i < files; i++) put(root, { [name(i)]: old });
    repo.commit("start");
    writeFileSync(join(root, ".git/info/exclude"), "/server.txt\n");
    const patch = repo.beside(".diff");
    writeFileSync(patch, Array.from({ length: files }, (_, i) => `--- a/${name(i)}\n+++ b/${name(i)}\n@@ -1,2 +1,2 @@\n-line\n+LINE\n line\n`).join(""));
    const fresh = "LINE\n" + "line\n".repeat(7999);
    const leftovers = () => [...readdirSync(root), ...readdirSync(join(root, "vol"))].filter((n) => n.startsWith(".worksnap-"));
    const run = () => Bun.spawn([BINARY, "apply", patch, "--root", root], { stdout: "ignore", stderr: "ignore", env: { ...process.env, NO_COLOR: "1" } });
    const volEdits = () => historyEntries(root).filter((e) => e.file_path.startsWith("vol/"));
    const rejectVol = () => {
      const r = cli(["history", "reject", ...volEdits().filter((e) => e.status === "pending").map((e) => e.edit_id), "--root", root]);
      expect({ code: r.code, error: r.stderr }).toEqual({ code: 0, error: "" });
    };
    // a server open all along: after a kill it finds the leftovers when it next takes the work-tree lock
    await using server = await mcpSession(root);
    // one whole run to warm up (the pool of spares, the page cache), then one watched: the moments temporary
    // names are there are those the kills are spread over
    expect(await run().exited).toBe(0);
    rejectVol();
    const started = performance.now();
    const whole = run();
    let ended = false;
    void whole.exited.then(() => (ended = true));
    const named: number[] = [];
    while (!ended) {
      if (leftovers().length > 0) named.push(performance.now() - started);
      await Bun.sleep(1);
    }
    expect(await whole.exited).toBe(0);
    const [from, to] = named.length > 1 ? [named[0]!, named.at(-1)!] : [0, performance.now() - started];
    rejectVol();
    const seen = { cli: 0, server: 0 };
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      const before = volEdits().length;
      const child = run();
      await Bun.sleep(from + ((to - from) * round) / (rounds - 1));
      child.kill(9);
      await child.exited;
      if (leftovers().length > 0 && seen.server <= seen.cli) {
        seen.server++;
        await server.call("workspace_write_file", { path: "server.txt", content: `${round}\n` });
      } else {
        if (leftovers().length > 0) seen.cli++;
        // the next command takes the lock: it completes or drops the killed write, and removes its temporary names
        const next = cli(["history", "status", "--root", root]);
        expect({ code: next.code, error: next.stderr.includes("worksnap:") ? next.stderr : "" }).toEqual({ code: 0, error: "" });
      }
      expect(leftovers()).toEqual([]);
      const states = new Set(Array.from({ length: files }, (_, i) => read(root, name(i))));
      expect(states.size).toBe(1);
      const added = volEdits().slice(before);
      if (states.has(fresh)) {
        expect(added.length).toBe(files);
        rejectVol();
      } else {
        expect(states.has(old)).toBe(true);
        expect(added).toEqual([]);
      }
      expect(status(root)).toBe("");
    }
    console.log(`kill -9 into a volume: of ${rounds} kills, ${seen.cli} left a temporary name a new command removed, ${seen.server} one the running server removed`);
  }, 180_000);

  test("worksnap's .mcp as a mount of its own (a cache volume): snapshots store the repository's blobs, writes are recorded and rejected (regression: snapshot create failed, git pack-objects could not rename across it)", async () => {
    await using repo = await tmpRepo();
    const root = repo.root;
    put(root, { "src/a.ts": "export const a = 1;\n", "README.md": "# r\n" });
    repo.commit("start");
    mkdirSync(join(root, ".mcp"));
    using _mcp = mounts.tmpfs(join(root, ".mcp"));
    const c = cli(["snapshot", "create", "--root", root]);
    expect(c.stderr).toBe("");
    expect(c.code).toBe(0);
    const id = c.stdout.trim();
    // the snapshot survives the blobs leaving the repository's own store
    runGit(root, ["rm", "-q", "src/a.ts"]);
    runGit(root, ["commit", "-qm", "gone"]);
    runGit(root, ["reflog", "expire", "--expire=now", "--all"]);
    runGit(root, ["gc", "-q", "--prune=now"]);
    const f = cli(["snapshot", "file", "src/a.ts", "--snapshot", id, "--root", root]);
    expect(f.stderr).toBe("");
    expect(f.stdout).toBe("export const a = 1;\n");
    {
      await using s = await mcpSession(root);
      await s.call("workspace_write_file", { path: "README.md", content: "# r2\n" });
      await s.call("workspace_apply_patch", { patch: "--- /dev/null\n+++ b/src/b.ts\n@@ -0,0 +1 @@\n+export const b = 2;\n" });
    }
    expect(read(root, "README.md")).toBe("# r2\n");
    expect(historyEntries(root).length).toBe(2);
    rejectAll(root);
    expect(status(root)).toBe("");
  });

  test("a read-only checkout: with its .mcp made before, reads, snapshots of an unchanged tree and reviews work and a write is refused saying why; without one, every command says why, and nothing is written", async () => {
    await using made = await tmpRepo();
    await using bare = await tmpRepo();
    for (const repo of [made, bare]) {
      put(repo.root, { "a.txt": "hello\n" });
      repo.commit("start");
    }
    const id = cli(["snapshot", "create", "--root", made.root]).stdout.trim();
    using _madeMount = mounts.bind(made.root, { readOnly: true });
    using _bareMount = mounts.bind(bare.root, { readOnly: true });
    expect(cli(["snapshot", "create", "--root", made.root]).stdout.trim()).toBe(id);
    expect(cli(["snapshot", "grep", "hello", "--root", made.root]).stdout).toBe("a.txt:1:1:hello\n");
    expect(cli(["history", "status", "--root", made.root]).code).toBe(0);
    const w = cli(["apply", "-", "--root", made.root], { stdin: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+bye\n" });
    expect(w.code).toBe(1);
    expect(w.stderr).toContain("PERMISSION_DENIED: ");
    expect(w.stderr).toContain("is on a file system mounted read-only");
    expect(read(made.root, "a.txt")).toBe("hello\n");
    for (const args of [["snapshot", "create"], ["snapshot", "grep", "hello"], ["history", "status"], ["apply", "-"]]) {
      const r = cli([...args, "--root", bare.root], { stdin: "" });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 1]);
      expect(r.stderr).toBe("worksnap: PERMISSION_DENIED: .mcp is on a file system mounted read-only\n");
    }
    expect(existsSync(join(bare.root, ".mcp"))).toBe(false);
  });
});
