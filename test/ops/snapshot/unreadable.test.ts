import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cliUnprivileged, handToUnprivileged, mcpSession } from "../../helpers/binary";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { UNREADABLE_CAP, unreadableFields, withoutUnreadable } from "../../../src/ops/snapshot/unreadable";

/**
 * One unreadable file must not fail whole-tree work (git and ripgrep skip it
 * and say so). Root reads anything, so these run the compiled binary as an
 * unprivileged user (setpriv) when the tests run as root, on a tree handed to
 * that user with the file made mode 000; there is no file root cannot read.
 */
function seed(repo: TmpRepo): void {
  repo.write("a.txt", "needle in a\n");
  repo.write("src/b.ts", "export const needle = 1;\n");
  repo.write("secret.txt", "needle in secret\n");
  repo.commit();
}

describe("whole-tree work survives one bad file", () => {
  test("snapshot_create ['.'], whole-tree list, grep and changes skip an unreadable file, name it, and go on; reading it by name is PERMISSION_DENIED", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    handToUnprivileged(repo.root, []);
    // a snapshot taken while everything was readable, to compare with later
    await using s = await mcpSession(repo.root, [], { unprivileged: true });
    const full = await s.call("snapshot_create", { paths: ["."] });
    expect(full.manifest_stats).toEqual({ files: 3, bytes: 54 });
    handToUnprivileged(repo.root, ["secret.txt"]);

    const snap = await s.call("snapshot_create", { paths: ["."] });
    expect(snap).toMatchObject({ unreadable: ["secret.txt"], unreadable_total: 1 });
    // the manifest stats say so: an incomplete snapshot is never taken for a full one
    expect(snap.manifest_stats).toEqual({ files: 2, bytes: 37, unreadable: 1 });
    expect(snap.snapshot_id).not.toBe(full.snapshot_id);
    expect((await s.call("snapshot_info", { snapshot_id: snap.snapshot_id })).manifest_stats).toEqual({ files: 2, bytes: 37, unreadable: 1 });
    const frozen = await s.call("snapshot_list", { mode: "snapshot", snapshot_id: snap.snapshot_id, recursive: true });
    expect(frozen.entries.map((e: any) => e.path)).toEqual(["a.txt", "src", "src/b.ts"]);

    const list = await s.call("snapshot_list", { mode: "worktree", recursive: true });
    expect(list.entries.map((e: any) => e.path)).toEqual(["a.txt", "src", "src/b.ts"]);
    expect(list).toMatchObject({ unreadable: ["secret.txt"], unreadable_total: 1, truncated: false });

    const grep = await s.call("snapshot_grep", { mode: "worktree", pattern: "needle", fixed_strings: true });
    expect(grep.matches.map((m: any) => m.path)).toEqual(["a.txt", "src/b.ts"]);
    expect(grep).toMatchObject({ unreadable: ["secret.txt"], unreadable_total: 1 });
    const regex = await s.call("snapshot_grep", { mode: "worktree", pattern: "need+le" }); // the reader threads' path
    expect(regex.matches.map((m: any) => m.path)).toEqual(["a.txt", "src/b.ts"]);
    expect(regex.unreadable).toEqual(["secret.txt"]);

    // the file is not reported deleted: it is left out of both sides and named
    const changes = await s.call("snapshot_changes", { from: full.snapshot_id, to: "worktree" });
    expect(changes).toMatchObject({ changes: [], unreadable: ["secret.txt"], unreadable_total: 1 });
    const diff = await s.call("snapshot_diff", { from: full.snapshot_id, to: "worktree" });
    expect(diff).toMatchObject({ diff: "", unreadable: ["secret.txt"] });
    const exported = await s.call("snapshot_export", { mode: "worktree" });
    expect(exported).toMatchObject({ files: 2, unreadable: ["secret.txt"] });

    // named explicitly, it is an error, never a silent empty answer
    for (const [tool, args] of [
      ["snapshot_file", { mode: "worktree", path: "secret.txt" }],
      ["snapshot_create", { paths: ["secret.txt"] }],
      ["snapshot_list", { mode: "worktree", path: "secret.txt" }],
      ["snapshot_grep", { mode: "worktree", pattern: "needle", paths: ["secret.txt"] }],
    ] as const) {
      const e = await s.callError(tool, args);
      expect([tool, e.code, e.details.path]).toEqual([tool, "PERMISSION_DENIED", "secret.txt"]);
      expect(e.message).not.toContain(repo.root);
    }
  });

  test("outside git: an unreadable directory is named too, and the CLI says what it skipped", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    repo.write("locked/inner.txt", "x\n");
    repo.write("open/b.txt", "b\n");
    handToUnprivileged(repo.root, ["locked"]);
    const r = cliUnprivileged(["snapshot", "create", "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("skipped 1 path that cannot be read: locked");
    const json = cliUnprivileged(["snapshot", "create", "--root", repo.root, "--json"]).json();
    expect(json).toMatchObject({ manifest_stats: { files: 2, unreadable: 1 }, unreadable: ["locked"] });
    const inside = cliUnprivileged(["snapshot", "list", "locked/inner.txt", "--root", repo.root, "--json"]).json();
    expect(inside.error.code).toBe("PERMISSION_DENIED");
  });

  test("many unreadable files: the answer names the first 50 in byte order and counts them all", async () => {
    await using repo = await tmpRepo();
    repo.write("ok.txt", "ok\n");
    const bad: string[] = [];
    for (let i = 0; i < 60; i++) {
      const p = `d/f${String(i).padStart(2, "0")}.txt`;
      repo.write(p, `${i}\n`);
      bad.push(p);
    }
    handToUnprivileged(repo.root, bad);
    const r = cliUnprivileged(["snapshot", "create", "--root", repo.root, "--json"]).json();
    expect(r.unreadable).toEqual(bad.slice(0, UNREADABLE_CAP));
    expect(r.unreadable_total).toBe(60);
    expect(r.manifest_stats).toMatchObject({ files: 1, unreadable: 60 });
  });
});

describe("unreadable helpers", () => {
  test("fields are absent when nothing was skipped; paths are deduplicated and sorted by bytes", () => {
    expect(unreadableFields([])).toEqual({});
    expect(unreadableFields(["b", "a", "b", "\u{1F600}", "\uFFFD"])).toEqual({ unreadable: ["a", "b", "\uFFFD", "\u{1F600}"], unreadable_total: 4 });
  });

  test("withoutUnreadable drops the paths and everything under an unreadable directory, not look-alike prefixes", () => {
    const entries = ["a", "locked", "locked/x", "locked-not/y", "z"].map((path) => ({ path }));
    expect(withoutUnreadable(entries, ["locked", "z"]).map((e) => e.path)).toEqual(["a", "locked-not/y"]);
  });

  test("a directory the walk cannot open does not hide a readable sibling", async () => {
    await using repo = await tmpRepo({ git: false });
    mkdirSync(join(repo.root, "empty"));
    repo.write("x/y.txt", "y\n");
    handToUnprivileged(repo.root, ["empty"]);
    const r = cliUnprivileged(["snapshot", "list", "--recursive", "--root", repo.root, "--json"]).json();
    expect(r.entries.map((e: any) => e.path)).toEqual(["x", "x/y.txt"]);
    expect(r.unreadable).toEqual(["empty"]);
  });
});
