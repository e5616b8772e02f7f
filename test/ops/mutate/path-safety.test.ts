import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { deleteOp } from "../../../src/ops/mutate/delete";
import { moveOp } from "../../../src/ops/mutate/move";
import { applyPatchOp } from "../../../src/ops/mutate/apply-patch";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { openWorkspace } from "../../../src/ops/workspace";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { linkOf, read, treeText, wsOf } from "../../helpers/workspace";

/** A directory outside the repository with one file, to check it is never touched. */
function outside(): { dir: string; file: string } & AsyncDisposable {
  const dir = mkdtempSync(join(tmpdir(), "ws-outside-"));
  writeFileSync(join(dir, "secret.txt"), "secret\n");
  return { dir, file: join(dir, "secret.txt"), [Symbol.asyncDispose]: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  const r = await p.then(
    () => "succeeded",
    (e) => e.code as string,
  );
  return r;
}

async function setup(repo: TmpRepo, out: { dir: string; file: string }) {
  repo.write("inside/real.txt", "real\n");
  repo.symlink("out-dir", out.dir); // a directory symlink leaving the root
  repo.symlink("out-file", out.file); // a file symlink leaving the root
  repo.symlink("chain1", "chain2"); // a chain that ends outside
  repo.symlink("chain2", "chain3");
  repo.symlink("chain3", out.file);
  repo.symlink("rel-escape", "../../../../../../../../etc/hostname");
  repo.symlink("git-alias", ".git");
  repo.symlink("in-link", "inside/real.txt"); // stays inside
  repo.symlink("in-chain", "in-link");
  repo.symlink("in-dir", "inside");
  repo.symlink("dangling", "nowhere/at/all.txt");
  repo.commit();
}

describe("path safety (spec 3.2) in worktree mode", () => {
  test("escapes are refused and nothing outside the root changes", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    const before = treeText(repo.root);
    const w = (path: string) => codeOf(writeFileOp(ws, { mode: "worktree", path, content: "pwned\n" }));
    expect({
      dotdot: await w("../escape.txt"),
      dotdotInside: await w("inside/../../escape.txt"),
      absolute: await w("/tmp/escape.txt"),
      home: await w("~/escape.txt"),
      throughDirLink: await w("out-dir/new.txt"),
      throughDirLinkExisting: await w("out-dir/secret.txt"),
      fileLink: await w("out-file"),
      chain: await w("chain1"),
      relativeEscape: await w("rel-escape"),
      git: await w(".git/config"),
      gitHooks: await w(".git/hooks/pre-commit"),
      mcp: await w(".mcp/state.json"),
      gitThroughLink: await w("git-alias/config"),
      dangling: await w("dangling"),
      nul: await w("a\0b"),
    }).toEqual({
      dotdot: "INVALID_ARGUMENT",
      dotdotInside: "INVALID_ARGUMENT",
      absolute: "INVALID_ARGUMENT",
      home: "INVALID_ARGUMENT",
      throughDirLink: "PERMISSION_DENIED",
      throughDirLinkExisting: "PERMISSION_DENIED",
      fileLink: "PERMISSION_DENIED",
      chain: "PERMISSION_DENIED",
      relativeEscape: "PERMISSION_DENIED",
      git: "PERMISSION_DENIED",
      gitHooks: "PERMISSION_DENIED",
      mcp: "PERMISSION_DENIED",
      gitThroughLink: "PERMISSION_DENIED",
      dangling: "PERMISSION_DENIED",
      nul: "INVALID_ARGUMENT",
    });
    expect(readdirSync(out.dir)).toEqual(["secret.txt"]);
    expect(readFileSync(out.file, "utf8")).toBe("secret\n");
    expect(treeText(repo.root)).toEqual(before);
    expect(existsSync(join(repo.root, "..", "escape.txt"))).toBe(false);
  });

  test("move and delete refuse to reach outside through directory links, and into .git", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    expect(await codeOf(moveOp(ws, { mode: "worktree", from: "inside/real.txt", to: "out-dir/stolen.txt" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(moveOp(ws, { mode: "worktree", from: "out-dir/secret.txt", to: "inside/got.txt" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(moveOp(ws, { mode: "worktree", from: "inside/real.txt", to: "git-alias/real.txt" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(deleteOp(ws, { mode: "worktree", path: "out-dir/secret.txt" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(deleteOp(ws, { mode: "worktree", path: ".git/HEAD" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(deleteOp(ws, { mode: "worktree", path: "git-alias/HEAD" }))).toBe("PERMISSION_DENIED");
    expect(readdirSync(out.dir)).toEqual(["secret.txt"]);
    expect(read(repo.root, "inside/real.txt")).toBe("real\n");
  });

  test("deleting a symlink that points outside removes the link itself, never its target", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    const r = await deleteOp(ws, { mode: "worktree", path: "out-file" });
    expect(r.changed).toEqual([{ path: "out-file", status: "deleted" }]);
    expect(existsSync(join(repo.root, "out-file"))).toBe(false);
    expect(readFileSync(out.file, "utf8")).toBe("secret\n");
  });

  test("a symlink inside the root is written through to its target, and the answer says where", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    const r = await writeFileOp(ws, { mode: "worktree", path: "in-chain", content: "through the chain\n" });
    expect(r.resolved_path).toBe("inside/real.txt");
    expect(r.changed).toEqual([{ path: "inside/real.txt", status: "modified", blob: r.blob, requested_path: "in-chain" }]);
    expect(read(repo.root, "inside/real.txt")).toBe("through the chain\n");
    expect(linkOf(repo.root, "in-chain")).toBe("in-link");
    const r2 = await writeFileOp(ws, { mode: "worktree", path: "in-dir/new.txt", content: "via dir link\n" });
    expect(r2.resolved_path).toBe("inside/new.txt");
    expect(read(repo.root, "inside/new.txt")).toBe("via dir link\n");
  });

  test("a patch through an escaping symlink is PERMISSION_DENIED; a patch path with .. is a malformed reject", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    const escape = "--- /dev/null\n+++ b/out-dir/new.txt\n@@ -0,0 +1 @@\n+x\n";
    expect(await codeOf(applyPatchOp(ws, { mode: "worktree", patch: escape }))).toBe("PERMISSION_DENIED");
    const dotdot = await applyPatchOp(ws, { mode: "worktree", patch: "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n" });
    expect(dotdot.applied).toBe(false);
    expect(dotdot.rejects?.[0]?.hunks[0]?.reason).toBe("malformed");
    const git = await applyPatchOp(ws, { mode: "worktree", patch: "--- a/.git/HEAD\n+++ b/.git/HEAD\n@@ -1 +1 @@\n-x\n+y\n" });
    expect(git.applied).toBe(false);
    expect(readdirSync(out.dir)).toEqual(["secret.txt"]);
  });
});

describe("path safety in snapshot mode (symlinks are manifest entries)", () => {
  test("links leaving the root are refused; links inside are followed for write_file and reported", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    await setup(repo, out);
    using ws = wsOf(repo);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const w = (path: string) => codeOf(writeFileOp(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path, content: "x" }));
    expect([await w("out-dir/new.txt"), await w("out-file"), await w("chain1"), await w("rel-escape"), await w(".git/config"), await w("git-alias/config"), await w("dangling")]).toEqual([
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
      "PERMISSION_DENIED",
    ]);
    const r = await writeFileOp(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "in-chain", content: "new\n" });
    expect(r.resolved_path).toBe("inside/real.txt");
    expect(r.cache_hint).toBe("immutable");
    const r2 = await writeFileOp(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "in-dir/made.txt", content: "m\n" });
    expect(r2.resolved_path).toBe("inside/made.txt");
    expect(read(repo.root, "inside/real.txt")).toBe("real\n");
    expect(existsSync(join(repo.root, "inside/made.txt"))).toBe(false);
  });
});

describe("the state directory", () => {
  test("a .mcp (or .mcp/tmp) that is a symlink is refused, never followed: nothing is staged or cleaned through it", async () => {
    await using repo = await tmpRepo();
    await using out = outside();
    const tmpOut = join(out.dir, "tmp");
    mkdirSync(tmpOut);
    // A leftover that the temp cleanup would remove if it followed the link.
    writeFileSync(join(tmpOut, "1-0123456789ab-stage"), "not worksnap's\n");
    symlinkSync(out.dir, join(repo.root, ".mcp"));
    let err: any = null;
    try {
      openWorkspace(repo.root);
    } catch (e) {
      err = e;
    }
    expect({ code: err?.code, reason: err?.details?.reason }).toEqual({ code: "PERMISSION_DENIED", reason: "state_dir_not_a_directory" });
    expect(err.message).toContain(".mcp is a symbolic link");
    expect(err.message).not.toContain(out.dir);
    expect(readdirSync(tmpOut)).toEqual(["1-0123456789ab-stage"]);
    expect(readFileSync(out.file, "utf8")).toBe("secret\n");

    rmSync(join(repo.root, ".mcp"));
    mkdirSync(join(repo.root, ".mcp"));
    symlinkSync(tmpOut, join(repo.root, ".mcp", "tmp"));
    expect(() => openWorkspace(repo.root)).toThrow(/\.mcp\/tmp is a symbolic link/);
    expect(readdirSync(tmpOut)).toEqual(["1-0123456789ab-stage"]);
  });
});
