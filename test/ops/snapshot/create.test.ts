import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, readlinkSync, lstatSync, rmSync, statSync, utimesSync, writeFileSync, cpSync } from "node:fs";
import { join } from "node:path";
import { readFile } from "../../../src/ops/snapshot/file";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { listEntries } from "../../../src/ops/snapshot/list";
import { snapshotInfo } from "../../../src/ops/snapshot/info";
import { openWorkspace } from "../../../src/ops/workspace";
import { captureEntries } from "../../../src/repo/capture";
import { readLiveTree } from "../../../src/ops/live/live-tree";
import { cliWithUnreadable } from "../../helpers/binary";
import { INDEX_BUSY, answersWhileStaging } from "../../helpers/index-toggler";
import { runGit, tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

function seed(repo: TmpRepo): void {
  repo.write("README.md", "# demo\n");
  repo.write("src/main.ts", "export const x = 1;\r\nconsole.log(x)");
  repo.write("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755);
  repo.write("assets/logo.bin", new Uint8Array([0, 1, 2, 3, 0, 255]));
  repo.write("日本/naïve.txt", "unicode\n");
  repo.symlink("link", "src/main.ts");
  repo.write("a.txt", "a");
  repo.write("a/b", "b");
}

/** Recomputes the snapshot id from git's own output and file bytes, sharing no code with worksnap. */
function independentId(root: string): `sha256:${string}` {
  const git = (args: string[]) => Bun.spawnSync(["git", ...args], { cwd: root, env: { ...process.env, LC_ALL: "C" } }).stdout;
  const head = git(["rev-parse", "--verify", "-q", "HEAD"]).toString().trim();
  const index = git(["write-tree"]).toString().trim();
  const status = git(["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=none"]);
  const statusHash = createHash("sha256").update(status).digest("hex");
  const files = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    .toString()
    .split("\0")
    .filter((p) => p && !p.startsWith(".mcp/"));
  files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const entries = files.map((p) => {
    const abs = join(root, p);
    const st = lstatSync(abs);
    const bytes = st.isSymbolicLink() ? Buffer.from(readlinkSync(abs)) : readFileSync(abs);
    const blob = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const mode = st.isSymbolicLink() ? "120000" : st.mode & 0o100 ? "100755" : null;
    return mode ? `{"blob":"${blob}","mode":"${mode}","path":${JSON.stringify(p)}}` : `{"blob":"${blob}","path":${JSON.stringify(p)}}`;
  });
  const manifest = `{"entries":[${entries.join(",")}]}`;
  const fp = `{"head_oid":"${head}","index_oid":"${index}","status_hash":"${statusHash}"}`;
  return `sha256:${createHash("sha256").update(`${fp}\n${manifest}`).digest("hex")}`;
}

describe("snapshot_create", () => {
  test("the id equals an independent recomputation from git output and file bytes", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    repo.write("untracked.txt", "u\n");
    repo.write("src/main.ts", "modified\n");
    const snap = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(snap.snapshot_id).toBe(independentId(repo.root));
    expect(snap.manifest_stats.files).toBe(9);
    expect(snap.cache_hint).toBe("immutable");
  });

  test("outside git the id still covers the files (empty git fields)", async () => {
    await using dir = await tmpRepo({ git: false });
    seed(dir);
    const ws = openWorkspace(dir.root);
    const a = await createSnapshot(ws, { paths: ["."] });
    const b = await createSnapshot(ws, { paths: ["."] });
    expect(a.snapshot_id).toBe(b.snapshot_id);
    expect(a.fingerprint.head_oid).toBe("");
    expect(a.manifest_stats.files).toBe(8);
  });

  test("the same tree in the same git state gives the same id in another clone", async () => {
    await using repo = await tmpRepo({ name: "ws repo with spaces ☃ " });
    seed(repo);
    repo.commit();
    await using other = await tmpRepo({ git: false });
    rmSync(other.root, { recursive: true, force: true });
    runGit(repo.root, ["clone", "-q", repo.root, other.root]);
    const a = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    const b = await createSnapshot(openWorkspace(other.root), { paths: ["."] });
    expect(b.snapshot_id).toBe(a.snapshot_id);
  });

  test("a warm capture returns the same snapshot and keeps its created_at", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const a = await createSnapshot(ws, { paths: ["."] });
    const b = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(b.snapshot_id).toBe(a.snapshot_id);
    expect(b.created_at).toBe(a.created_at);
  });

  test("snapshots stay readable after overwrite, commit --amend, reflog expire and gc --prune=now", async () => {
    await using repo = await tmpRepo();
    repo.write("kept.txt", "original bytes\n");
    repo.write("big.txt", "line\n".repeat(20000));
    repo.commit();
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    repo.write("kept.txt", "new bytes\n");
    repo.write("big.txt", "gone\n");
    runGit(repo.root, ["commit", "-qa", "--amend", "-m", "rewritten"]);
    runGit(repo.root, ["reflog", "expire", "--expire=now", "--all"]);
    runGit(repo.root, ["gc", "-q", "--prune=now"]);
    writeFileSync(join(repo.root, "probe"), "original bytes\n");
    const oldOid = runGit(repo.root, ["hash-object", "probe"]).trim();
    rmSync(join(repo.root, "probe"));
    expect(Bun.spawnSync(["git", "cat-file", "-e", oldOid], { cwd: repo.root }).exitCode).not.toBe(0);
    const fresh = openWorkspace(repo.root);
    const file = await readFile(fresh, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "kept.txt" });
    expect(file.content).toBe("original bytes\n");
    const big = await readFile(fresh, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "big.txt", start_line: 19999, end_line: 20000 });
    expect(big.content).toBe("line\nline\n");
    expect(big.total_lines).toBe(20000);
  });

  test("racy git: an edit that keeps size and mtime is still seen (tracked and untracked)", async () => {
    await using repo = await tmpRepo();
    repo.write("tracked.txt", "aaaa\n");
    repo.commit();
    repo.write("untracked.txt", "bbbb\n");
    const ws = openWorkspace(repo.root);
    const first = await createSnapshot(ws, { paths: ["."] });
    for (const name of ["tracked.txt", "untracked.txt"]) {
      const abs = join(repo.root, name);
      const st = statSync(abs);
      Bun.spawnSync(["cp", "--preserve=timestamps", abs, `${abs}.ref`]);
      writeFileSync(abs, name === "tracked.txt" ? "AAAA\n" : "BBBB\n");
      Bun.spawnSync(["touch", "-r", `${abs}.ref`, abs]);
      rmSync(`${abs}.ref`);
      expect(statSync(abs).mtimeMs).toBe(st.mtimeMs);
      expect(statSync(abs).size).toBe(st.size);
    }
    const second = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(second.snapshot_id).not.toBe(first.snapshot_id);
    const t = await readFile(ws, { mode: "snapshot", snapshot_id: second.snapshot_id, path: "tracked.txt" });
    const u = await readFile(ws, { mode: "snapshot", snapshot_id: second.snapshot_id, path: "untracked.txt" });
    expect([t.content, u.content]).toEqual(["AAAA\n", "BBBB\n"]);
  });

  test("the stat cache is reused once entries are safely old, and stays correct", async () => {
    await using dir = await tmpRepo({ git: false });
    dir.write("f.txt", "one\n");
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir.root, "f.txt"), old, old);
    const ws = openWorkspace(dir.root);
    await createSnapshot(ws, { paths: ["."] });
    await Bun.sleep(5);
    const again = await createSnapshot(ws, { paths: ["."] });
    writeFileSync(join(dir.root, "f.txt"), "two\n");
    utimesSync(join(dir.root, "f.txt"), old, old);
    const changed = await createSnapshot(ws, { paths: ["."] });
    expect(changed.snapshot_id).not.toBe(again.snapshot_id);
    expect((await readFile(ws, { mode: "snapshot", snapshot_id: changed.snapshot_id, path: "f.txt" })).content).toBe("two\n");
  });

  test("files rewritten by git's eol conversion are captured as the work tree has them", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitattributes", "*.txt text eol=crlf\n");
    repo.write("crlf.txt", "one\r\ntwo\r\n");
    repo.commit();
    rmSync(join(repo.root, "crlf.txt"));
    runGit(repo.root, ["checkout", "--", "crlf.txt"]);
    expect(readFileSync(join(repo.root, "crlf.txt"), "utf8")).toBe("one\r\ntwo\r\n");
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const f = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "crlf.txt" });
    expect(f.content).toBe("one\r\ntwo\r\n");
  });

  test("paths: subsets, NOT_FOUND for missing paths, escapes and reserved paths refused", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const sub = await createSnapshot(ws, { paths: ["src", "README.md"] });
    expect(sub.manifest_stats.files).toBe(2);
    const missing = await createSnapshot(ws, { paths: ["nope.txt"] }).catch((e) => e);
    expect(missing.code).toBe("NOT_FOUND");
    expect(missing.message).toContain("nope.txt");
    for (const bad of ["../x", "/etc", "~/x"]) expect((await createSnapshot(ws, { paths: [bad] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await createSnapshot(ws, { paths: [".git"] }).catch((e) => e)).code).toBe("PERMISSION_DENIED");
    expect((await createSnapshot(ws, {}).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
  });

  test("with only a lease, captures exactly the files the lease touched", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const read = await readFile(ws, { mode: "worktree", path: "README.md" });
    const listed = await listEntries(ws, { mode: "worktree", path: "src", lease_id: read.cache_hint === "until_dirty" ? read.lease_id : "" });
    const leaseId = listed.cache_hint === "until_dirty" ? listed.lease_id : "";
    const snap = await createSnapshot(ws, { lease_id: leaseId });
    expect(snap.manifest_stats.files).toBe(2);
    const l = await listEntries(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, recursive: true });
    expect(l.entries.map((e) => e.path)).toEqual(["README.md", "src", "src/main.ts"]);
  });

  test("empty repository and unborn HEAD: a snapshot with no files", async () => {
    await using repo = await tmpRepo();
    const snap = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(snap.manifest_stats).toEqual({ files: 0, bytes: 0 });
    expect(snap.fingerprint.head_oid).toBe("");
  });

  test("files vanishing between the walk and the read are skipped and counted", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a");
    repo.write("b.txt", "b");
    const ws = openWorkspace(repo.root);
    const live = await readLiveTree(ws);
    rmSync(join(repo.root, "a.txt"));
    const cap = await captureEntries(ws.repo, ws.blobs, live.entries);
    expect(cap.vanished).toEqual(["a.txt"]);
    expect(cap.entries.map((e) => e.path)).toEqual(["b.txt"]);
  });

  test("prefix refs: 8+ hex digits with or without sha256:, ambiguity lists candidates", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a");
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const hex = snap.snapshot_id.slice(7);
    expect(snapshotInfo(ws, { snapshot_id: hex.slice(0, 8) }).snapshot_id).toBe(snap.snapshot_id);
    expect(snapshotInfo(ws, { snapshot_id: `sha256:${hex.slice(0, 12)}` }).snapshot_id).toBe(snap.snapshot_id);
    expect(() => snapshotInfo(ws, { snapshot_id: hex.slice(0, 7) })).toThrow(/prefix of at least 8/);
    expect(() => snapshotInfo(ws, { snapshot_id: "zzzzzzzz" })).toThrow();
    const unknown = (() => { try { snapshotInfo(ws, { snapshot_id: "00000000" }); } catch (e) { return e as any; } })();
    expect(unknown.code).toBe("NOT_FOUND");
    const dir = join(repo.root, ".mcp", "snapshots");
    const twin = `${hex.slice(0, 10)}${"0".repeat(54)}`;
    cpSync(join(dir, `${hex}.json`), join(dir, `${twin}.json`));
    const amb = (() => { try { snapshotInfo(ws, { snapshot_id: hex.slice(0, 9) }); } catch (e) { return e as any; } })();
    expect(amb.code).toBe("INVALID_ARGUMENT");
    expect(amb.details.candidates).toHaveLength(2);
  });

  test("untracked files sharing their bytes (written on the I/O threads while the next are read): each captured with them, the blob stored once and readable", async () => {
    await using repo = await tmpRepo();
    repo.write("tracked.txt", "t\n");
    repo.commit();
    for (let i = 0; i < 60; i++) repo.write(`gen/copy${i}.txt`, i % 3 === 0 ? "generated, the same in many files\n" : `own ${i}\n`);
    const ws = openWorkspace(repo.root);
    const snap = await createSnapshot(ws, { paths: ["."] });
    const entries = ws.snapshots.load(snap.snapshot_id).entries;
    expect(entries).toHaveLength(61);
    const shared = entries.filter((e) => e.path.startsWith("gen/") && Number(e.path.slice(8, -4)) % 3 === 0);
    expect(new Set(shared.map((e) => e.blob)).size).toBe(1);
    for (const e of entries.filter((x) => x.path.startsWith("gen/"))) {
      const i = Number(e.path.slice(8, -4));
      expect(new TextDecoder().decode(await ws.blobs.read(e.blob))).toBe(i % 3 === 0 ? "generated, the same in many files\n" : `own ${i}\n`);
    }
    expect(readdirSync(join(repo.root, ".mcp", "tmp"))).toEqual([]);
  });

  test("a capture stopped after its manifest was started (cancelled, cold and warm) leaves no manifest behind and stores no snapshot", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`d${i % 7}/f${i}.txt`, `file ${i % 30}\n`);
    repo.commit();
    repo.write("untracked.txt", "new\n");
    for (const cold of [true, false]) {
      if (cold) rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
      const ws = openWorkspace(repo.root);
      const stop = new AbortController();
      stop.abort(new Error("cancelled by the caller"));
      await expect(createSnapshot(ws, { paths: ["."], signal: stop.signal })).rejects.toThrow("cancelled by the caller");
      expect(readdirSync(join(repo.root, ".mcp", "tmp"))).toEqual([]);
      const stored = existsSync(join(repo.root, ".mcp", "snapshots")) ? readdirSync(join(repo.root, ".mcp", "snapshots")) : [];
      expect(stored).toEqual([]);
    }
    // and a capture afterwards is whole
    const snap = await createSnapshot(openWorkspace(repo.root), { paths: ["."] });
    expect(snap.manifest_stats.files).toBe(201);
  });

  test("an unreadable untracked file is skipped and named; naming it alone is PERMISSION_DENIED", async () => {
    await using repo = await tmpRepo();
    repo.write("ok.txt", "ok");
    repo.write("secret.txt", "s");
    const r = cliWithUnreadable(repo.root, "secret.txt", ["snapshot", "create", "--root", repo.root, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ manifest_stats: { files: 1, unreadable: 1 }, unreadable: ["secret.txt"], unreadable_total: 1 });
    const named = cliWithUnreadable(repo.root, "secret.txt", ["snapshot", "create", "secret.txt", "--root", repo.root, "--json"]);
    expect(named.code).toBe(1);
    expect(named.json().error).toMatchObject({ code: "PERMISSION_DENIED", details: { path: "secret.txt" } });
  });
});

describe("a capture while the index changes", () => {
  test("regression (a snapshot of a tree that never was: a staged edit recorded as the file's old content): every snapshot holds the work tree's bytes, or the call is refused as BUSY", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 200; i++) repo.write(`f${i}.txt`, `file ${i}\n`);
    repo.commit();
    repo.write("f7.txt", "edited\n");
    repo.write("gone.txt", "tracked now and then\n");
    const ws = openWorkspace(repo.root);
    const right = JSON.stringify({ f7: "edited\n", gone: "tracked now and then\n", count: 201 });
    const snap = async () => {
      const made = await createSnapshot(ws, { paths: ["."] });
      const read = async (path: string) => (await readFile(ws, { mode: "snapshot", snapshot_id: made.snapshot_id, path })).content;
      return JSON.stringify({ f7: await read("f7.txt"), gone: await read("gone.txt"), count: made.manifest_stats.files });
    };
    // a second process stages and unstages an edit, and adds and removes a file from the index, over and over
    const seen = await answersWhileStaging(repo.root, ["f7.txt", "gone.txt"], snap);
    expect(seen.filter((s) => s !== right && s !== INDEX_BUSY)).toEqual([]);
    // and once the index holds still, the same store captures the work tree (no blob learnt from a mixed read)
    runGit(repo.root, ["add", "f7.txt", "gone.txt"]);
    expect(await snap()).toBe(right);
    runGit(repo.root, ["reset", "-q", "f7.txt", "gone.txt"]);
    expect(await snap()).toBe(right);
  });
});
