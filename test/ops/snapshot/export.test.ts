import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import { canonicalJson } from "../../../src/core/canonical-json";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { exportSnapshot } from "../../../src/ops/snapshot/export";
import { WORKER_READS_MIN } from "../../../src/ops/snapshot/export-reads";
import { readFile } from "../../../src/ops/snapshot/file";
import { importBundle } from "../../../src/ops/snapshot/import";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { manifestJson, snapshotIdOf } from "../../../src/repo/manifest";
import { concat } from "../../../src/core/bytes";
import { TarReader, tarHeader, tarPadding, tarTrailer } from "../../../src/repo/tar";
import { runGit, tmpDir, tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { cli } from "../../helpers/binary";
import { nativeModule } from "../../../src/repo/native";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";

/** Larger than the bundle writer's read window, so the file is read on its own. */
const WINDOW_SPILL = 33 * 1024 * 1024;
const LONG = `deep/${"x".repeat(70)}/${"ÿ".repeat(30)}.txt`;

function seed(repo: TmpRepo): void {
  repo.write("manifest.json", '{"name":"the repo\'s own manifest"}\n');
  repo.write("README.md", "# demo\n");
  repo.write("src/main.ts", "export const x = 1;\r\nconsole.log(x)");
  repo.write("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755);
  repo.write("assets/logo.bin", new Uint8Array([0, 1, 2, 3, 0, 255]));
  repo.write("日本/naïve.txt", "unicode\n");
  repo.write("empty", "");
  repo.write(LONG, "long\n");
  repo.symlink("link", "src/main.ts");
}

interface TarItem {
  path: string;
  typeflag: string;
  mode: number;
  body: Uint8Array;
  link: Uint8Array;
}

async function readTar(file: string): Promise<TarItem[]> {
  const r = new TarReader(Bun.file(file).stream());
  const out: TarItem[] = [];
  for (;;) {
    const h = await r.next();
    if (!h) break;
    const chunks: Uint8Array[] = [];
    for await (const c of r.body(h.size)) chunks.push(c.slice());
    out.push({ path: h.path, typeflag: h.typeflag, mode: h.mode, body: concat(chunks), link: h.linkTarget });
  }
  return out;
}

function writeTar(file: string, items: TarItem[]): void {
  const parts: Uint8Array[] = [];
  for (const it of items) {
    if (it.typeflag === "2") parts.push(tarHeader({ path: it.path, type: "symlink", mode: 0o777, size: 0, linkTarget: it.link }));
    else parts.push(tarHeader({ path: it.path, type: "file", mode: it.mode, size: it.body.length }), it.body, tarPadding(it.body.length));
  }
  parts.push(tarTrailer());
  writeFileSync(file, concat(parts));
}

function sha256File(path: string): string {
  return sha256Hex(readFileSync(path));
}

async function snap(ws: Workspace): Promise<string> {
  return (await createSnapshot(ws, { paths: ["."] })).snapshot_id;
}

function stateFiles(root: string, sub: string): string[] {
  const dir = join(root, ".mcp", sub);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

describe("snapshot_export", () => {
  test("a bundle is a tar with manifest.json first, files in byte order, fixed headers; GNU tar unpacks the tree", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const r = await exportSnapshot(ws, { snapshot_id: id.slice(0, 16) });
    expect(r.cache_hint).toBe("immutable");
    expect(r.snapshot_id).toBe(id as never);
    expect(r.path).toBe(`.mcp/exports/${id.slice(7)}.tar`);
    const file = join(repo.root, r.path);
    expect(statSync(file).size).toBe(r.bytes);
    expect(sha256File(file)).toBe(r.sha256);
    expect(r.files).toBe(9);

    const items = await readTar(file);
    expect(items.map((i) => i.path)).toEqual([
      "manifest.json",
      "files/README.md",
      "files/assets/logo.bin",
      "files/bin/run.sh",
      `files/${LONG}`,
      "files/empty",
      "files/link",
      "files/manifest.json",
      "files/src/main.ts",
      "files/日本/naïve.txt",
    ]);
    const manifest = JSON.parse(Buffer.from(items[0]!.body).toString());
    expect(Object.keys(manifest)).toEqual(["entries", "fingerprint", "snapshot_id"]);
    expect(Buffer.from(items[0]!.body).toString()).toBe(canonicalJson(manifest));
    expect(manifest.snapshot_id).toBe(id);
    expect(snapshotIdOf(manifest.fingerprint, manifestJson(manifest.entries))).toBe(id as never);
    expect(items.find((i) => i.path === "files/bin/run.sh")!.mode).toBe(0o755);
    expect(items.find((i) => i.path === "files/README.md")!.mode).toBe(0o644);
    expect(items.find((i) => i.path === "files/link")!).toMatchObject({ typeflag: "2" });

    await using out = tmpDir("ws-untar-");
    const x = Bun.spawnSync(["tar", "-xf", file, "-C", out.path]);
    expect(x.exitCode).toBe(0);
    expect(readFileSync(join(out.path, "files/src/main.ts"), "utf8")).toBe("export const x = 1;\r\nconsole.log(x)");
    expect(readFileSync(join(out.path, "files/manifest.json"), "utf8")).toContain("the repo's own manifest");
    expect(readlinkSync(join(out.path, "files/link"))).toBe("src/main.ts");
    expect(statSync(join(out.path, "files/bin/run.sh")).mode & 0o777).toBe(0o755);
    const verbose = Bun.spawnSync(["tar", "-tvf", file], { env: { ...process.env, TZ: "UTC" } }).stdout.toString();
    for (const line of verbose.trim().split("\n")) expect(line).toMatch(/ 0\/0 .* 1970-01-01 00:00 /);
    closeWorkspace(ws);
  });

  test("byte-identical across runs and across a second clone of the same repository state", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const first = await exportSnapshot(ws, { snapshot_id: id });
    const firstSha = sha256File(join(repo.root, first.path));
    rmSync(join(repo.root, first.path));
    const second = await exportSnapshot(ws, { snapshot_id: id });
    expect(second.sha256).toBe(firstSha);
    closeWorkspace(ws);

    await using parent = tmpDir("ws-clone-");
    const clone = join(parent.path, "other checkout");
    runGit(parent.path, ["clone", "-q", repo.root, clone]);
    const ws2 = openWorkspace(clone);
    const id2 = await snap(ws2);
    expect(id2).toBe(id);
    const third = await exportSnapshot(ws2, { snapshot_id: id2 });
    expect(third.sha256).toBe(firstSha);
    expect(sha256File(join(clone, third.path))).toBe(firstSha);
    closeWorkspace(ws2);
  });

  test("mode worktree captures the live tree as a snapshot under a lease and touches every exported file", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.commit();
    repo.write("untracked.txt", "new\n");
    const ws = openWorkspace(repo.root);
    const r = await exportSnapshot(ws, { mode: "worktree", paths: ["src", "untracked.txt"] });
    expect(r.cache_hint).toBe("until_dirty");
    if (r.cache_hint !== "until_dirty") throw new Error("unreachable");
    expect(r.files).toBe(2);
    expect(ws.snapshots.has(r.snapshot_id)).toBe(true);
    const lease = ws.leases.get(r.lease_id);
    expect([...lease.touched.keys()]).toEqual(["src/main.ts", "untracked.txt"]);
    // The same lease validates on a second export; the bundle is the same.
    const again = await exportSnapshot(ws, { mode: "worktree", paths: ["src", "untracked.txt"], lease_id: r.lease_id });
    expect(again.sha256).toBe(r.sha256);
    expect((await exportSnapshot(ws, { mode: "worktree", paths: ["nope"] }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect((await exportSnapshot(ws, { mode: "worktree", snapshot_id: r.snapshot_id }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    closeWorkspace(ws);
  });

  test("paths narrow a stored snapshot into a sub-snapshot with its own verifiable id", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const r = await exportSnapshot(ws, { snapshot_id: id, paths: ["bin", "README.md"] });
    expect(r.source_snapshot_id).toBe(id as never);
    expect(r.snapshot_id).not.toBe(id as never);
    expect(r.files).toBe(2);
    await using other = await tmpRepo({ git: false });
    const ws2 = openWorkspace(other.root);
    const imported = await importBundle(ws2, { file: join(repo.root, r.path) });
    expect(imported.snapshot_id).toBe(r.snapshot_id);
    expect((await exportSnapshot(ws, { snapshot_id: id, paths: ["../x"] }).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    expect((await exportSnapshot(ws, { snapshot_id: id, paths: ["absent"] }).catch((e) => e)).code).toBe("NOT_FOUND");
    closeWorkspace(ws);
    closeWorkspace(ws2);
  });

  test("a snapshot whose blob was deleted from the store: NOT_FOUND naming the blob, no bundle and no temp file left", async () => {
    await using repo = await tmpRepo({ git: false });
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const entry = ws.snapshots.load(id as never).entries.find((e) => e.path === "src/main.ts")!;
    rmSync(ws.blobs.loose.pathOf(entry.blob));
    const err = await exportSnapshot(ws, { snapshot_id: id }).catch((e) => e);
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toContain(entry.blob);
    expect(err.details).toMatchObject({ blob: entry.blob, path: "src/main.ts" });
    expect(stateFiles(repo.root, "exports")).toEqual([]);
    expect(stateFiles(repo.root, "tmp")).toEqual([]);
    const out = join(repo.root, "out.tar");
    expect((await exportSnapshot(ws, { snapshot_id: id, output: out }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect(existsSync(out)).toBe(false);
    closeWorkspace(ws);
  });

  test("a blob found corrupt halfway through the bundle abandons the export and leaves no partial file", async () => {
    await using repo = await tmpRepo({ git: false });
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const entry = ws.snapshots.load(id as never).entries.find((e) => e.path === "日本/naïve.txt")!;
    const blobFile = ws.blobs.loose.pathOf(entry.blob);
    rmSync(blobFile);
    writeFileSync(blobFile, "UNICODE\n"); // same size, other bytes
    repo.write("日本/naïve.txt", "Unicode\n"); // and the work tree no longer holds the snapshot's bytes either
    const err = await exportSnapshot(ws, { snapshot_id: id }).catch((e) => e);
    expect(err.code).toBe("INTERNAL");
    expect(err.message).toContain(entry.blob);
    expect(stateFiles(repo.root, "exports")).toEqual([]);
    expect(stateFiles(repo.root, "tmp")).toEqual([]);
    closeWorkspace(ws);
  });

  test("files changed, replaced or removed in the work tree after the snapshot still export the snapshot's bytes", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    repo.write("big.bin", new Uint8Array(WINDOW_SPILL).map((_, i) => i % 251));
    repo.commit();
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const before = await exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "before.tar") });
    const items = await readTar(join(repo.root, "before.tar"));
    repo.write("src/main.ts", "export const y = 2;\r\nconsole.log(y)"); // same size, other bytes
    repo.write("big.bin", new Uint8Array(WINDOW_SPILL).fill(7));
    repo.write("manifest.json", '{"name":"the repo\'s own manifest, grown"}\n'); // longer than its blob: not read into its slot
    repo.write("bin/run.sh", "#!/bin/sh\n", 0o755); // shorter
    repo.write("empty", "now holds bytes");
    rmSync(join(repo.root, "README.md"));
    expect(Bun.spawnSync(["mkfifo", join(repo.root, "README.md")]).exitCode).toBe(0); // never opened for a blocking read
    rmSync(join(repo.root, "日本/naïve.txt"));
    repo.symlink("日本/naïve.txt", "../src/main.ts");
    rmSync(join(repo.root, "assets/logo.bin"));
    rmSync(join(repo.root, "link"));
    writeFileSync(join(repo.root, "link"), "src/main.ts"); // a file holding the symlink's target text
    const after = await exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "after.tar") });
    expect(after.sha256).toBe(before.sha256);
    expect(await readTar(join(repo.root, "after.tar"))).toEqual(items);
    closeWorkspace(ws);
  });

  test("two exports at once beside a grep, with large files of several sizes: each bundle holds the tree's bytes, and no read block is kept once they end", async () => {
    await using repo = await tmpRepo();
    // windows of small files (some borrowed by the writer, some copied) between large files read whole, each in a
    // block of its own: larger and smaller than the one before, so a block kept for reuse fits some and not others
    const large: Record<string, number> = { "a/big.bin": 3 << 20, "b/bigger.bin": 20 << 20, "c/smaller.bin": 17 << 20, "d/largest.bin": 40 << 20, "e/mid.bin": (5 << 20) + 123 };
    const bodies = new Map<string, Uint8Array>();
    Object.entries(large).forEach(([path, size], k) => bodies.set(path, new Uint8Array(size).map((_, i) => (i * (k + 3) + (i >> 12)) & 0xff)));
    for (let i = 0; i < 1500; i++) bodies.set(`${"abcde"[i % 5]}/small/${i}.txt`, new Uint8Array(1 + ((i * 7919) % 12000)).map((_, j) => (i + j * 31) & 0xff));
    for (const [path, body] of bodies) repo.write(path, body);
    repo.commit();
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const [one, two, grep] = await Promise.all([
      exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "one.tar") }),
      exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "two.tar") }),
      snapshotGrep(ws, { mode: "snapshot", snapshot_id: id, pattern: "zzz-not-there", fixed_strings: true }),
    ]);
    expect(grep.matches).toEqual([]);
    expect(two.sha256).toBe(one.sha256);
    expect(sha256File(join(repo.root, "two.tar"))).toBe(one.sha256);
    const items = await readTar(join(repo.root, "one.tar"));
    expect(items.length).toBe(bodies.size + 1);
    for (const it of items.slice(1)) {
      const body = bodies.get(it.path.slice("files/".length));
      expect(body === undefined ? it.path : sha256Hex(it.body)).toBe(sha256Hex(body ?? new Uint8Array()));
    }
    expect(nativeModule()?.slotSpares() ?? [0, 0]).toEqual([0, 0]);
    closeWorkspace(ws);
  }, 60_000);

  test("an old snapshot whose files all changed since exports its own bytes, across many read windows", async () => {
    await using repo = await tmpRepo({ git: false });
    const n = 9_000; // more than two read windows of 4,096 files
    for (let i = 0; i < n; i++) repo.write(`d${i % 30}/f${i}.txt`, `file ${i}\n`);
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const before = await exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "before.tar") });
    for (let i = 0; i < n; i++) repo.write(`d${i % 30}/f${i}.txt`, `FILE ${i}\n`); // same sizes, other bytes
    const after = await exportSnapshot(ws, { snapshot_id: id, output: join(repo.root, "after.tar") });
    expect(after.sha256).toBe(before.sha256);
    expect(after.files).toBe(n);
    closeWorkspace(ws);
  }, 60_000);

  test("without the native module a large export reads the work tree on workers: the same bundle as the native export, changed files taken from the store", async () => {
    await using repo = await tmpRepo();
    const n = WORKER_READS_MIN + 300;
    for (let i = 0; i < n; i++) repo.write(`d${i % 40}/f${i}.txt`, `file ${i}\n`.repeat(1 + (i % 50)));
    repo.write("exec.sh", "#!/bin/sh\n", 0o755);
    repo.symlink("link", "d0/f0.txt");
    repo.commit();
    const id = cli(["snapshot", "create", "--root", repo.root]).stdout.trim();
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    // after the snapshot: same sizes with other bytes, a file gone, one replaced by a symlink to a file that is the blob
    for (let i = 0; i < n; i += 7) repo.write(`d${i % 40}/f${i}.txt`, `FILE ${i}\n`.repeat(1 + (i % 50)));
    rmSync(join(repo.root, "d1/f1.txt"));
    rmSync(join(repo.root, "d2/f2.txt"));
    repo.symlink("d2/f2.txt", "../d0/f0.txt");
    const exportWith = (env: Record<string, string>, name: string) => {
      const r = cli(["snapshot", "export", id, "-o", join(repo.root, name), "--root", repo.root, "--json"], { env });
      expect(r.code).toBe(0);
      return r.json();
    };
    const native = exportWith({}, "native.tar");
    const workers = exportWith({ WORKSNAP_NATIVE: "0" }, "workers.tar");
    expect(workers.sha256).toBe(native.sha256);
    expect(workers.files).toBe(n + 2);
    expect(Buffer.compare(readFileSync(join(repo.root, "workers.tar")), readFileSync(join(repo.root, "native.tar")))).toBe(0);
  }, 60_000);

  test("unknown ids and missing arguments", async () => {
    await using repo = await tmpRepo({ git: false });
    seed(repo);
    const ws = openWorkspace(repo.root);
    expect((await exportSnapshot(ws, { snapshot_id: `sha256:${"a".repeat(64)}` }).catch((e) => e)).code).toBe("NOT_FOUND");
    expect((await exportSnapshot(ws, {}).catch((e) => e)).code).toBe("INVALID_ARGUMENT");
    closeWorkspace(ws);
  });
});

describe("snapshot import", () => {
  async function exported(repo: TmpRepo): Promise<{ file: string; id: string }> {
    seed(repo);
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const r = await exportSnapshot(ws, { snapshot_id: id });
    closeWorkspace(ws);
    return { file: join(repo.root, r.path), id };
  }

  test("a bundle carried to another directory is readable there under the same id, and re-exports byte-identically", async () => {
    await using repo = await tmpRepo();
    const { file, id } = await exported(repo);
    await using other = await tmpRepo({ git: false });
    const ws = openWorkspace(other.root);
    const r = await importBundle(ws, { file });
    expect(r).toMatchObject({ snapshot_id: id, files: 9, created: true });
    const read = await readFile(ws, { mode: "snapshot", snapshot_id: id, path: "src/main.ts" });
    expect(read.content).toBe("export const x = 1;\r\nconsole.log(x)");
    const link = await readFile(ws, { mode: "snapshot", snapshot_id: id, path: "link" });
    expect(link).toMatchObject({ type: "symlink", content: "src/main.ts" });
    const again = await exportSnapshot(ws, { snapshot_id: id });
    expect(again.sha256).toBe(sha256File(file));
    expect((await importBundle(ws, { file })).created).toBe(false);
    expect(stateFiles(other.root, "tmp")).toEqual([]);
    closeWorkspace(ws);
  });

  test("a bundle imported where the store already holds some of its blobs stores the rest beside them", async () => {
    await using repo = await tmpRepo({ git: false });
    await using out = tmpDir("ws-bundles-");
    for (let i = 0; i < 40; i++) repo.write(`a/f${i}.txt`, `first ${i}\n`);
    const ws = openWorkspace(repo.root);
    const first = await snap(ws);
    const one = await exportSnapshot(ws, { snapshot_id: first, output: join(out.path, "one.tar") });
    for (let i = 0; i < 400; i++) repo.write(`b/g${i}.txt`, `second ${i}\n`); // new blobs, most in fan-outs the first has not
    const second = await snap(ws);
    const two = await exportSnapshot(ws, { snapshot_id: second, output: join(out.path, "two.tar") });
    closeWorkspace(ws);
    await using other = await tmpRepo({ git: false });
    const ws2 = openWorkspace(other.root);
    expect((await importBundle(ws2, { file: one.path })).created).toBe(true);
    const before = stateFiles(other.root, "blobs").filter((f) => f.split("/").length === 3);
    expect(before.length).toBe(40);
    const r = await importBundle(ws2, { file: two.path });
    expect(r).toMatchObject({ snapshot_id: second, files: 440, created: true });
    expect(stateFiles(other.root, "blobs").filter((f) => f.split("/").length === 3).length).toBe(440);
    for (const i of [0, 39]) expect((await readFile(ws2, { mode: "snapshot", snapshot_id: second, path: `a/f${i}.txt` })).content).toBe(`first ${i}\n`);
    for (const i of [0, 399]) expect((await readFile(ws2, { mode: "snapshot", snapshot_id: second, path: `b/g${i}.txt` })).content).toBe(`second ${i}\n`);
    expect((await exportSnapshot(ws2, { snapshot_id: second })).sha256).toBe(two.sha256);
    expect(stateFiles(other.root, "tmp")).toEqual([]);
    closeWorkspace(ws2);
  });

  async function refused(file: string): Promise<{ err: any; root: string }> {
    const dir = tmpDir("ws-import-");
    const ws = openWorkspace(dir.path);
    const err = await importBundle(ws, { file }).catch((e) => e);
    closeWorkspace(ws);
    expect(stateFiles(dir.path, "snapshots")).toEqual([]);
    expect(stateFiles(dir.path, "blobs")).toEqual([]);
    expect(stateFiles(dir.path, "tmp")).toEqual([]);
    await dir[Symbol.asyncDispose]();
    return { err, root: dir.path };
  }

  test("tampered bundles are refused, naming the first bad entry, and nothing is stored", async () => {
    await using repo = await tmpRepo();
    const { file } = await exported(repo);
    const items = await readTar(file);
    const variant = (name: string, edit: (xs: TarItem[]) => TarItem[]) => {
      const p = join(repo.root, `${name}.tar`);
      writeTar(p, edit(items.map((i) => ({ ...i, body: i.body.slice() }))));
      return p;
    };
    const idx = (p: string) => items.findIndex((i) => i.path === p);

    // One byte of one file flipped (header checksums still valid).
    const flipped = variant("flip", (xs) => {
      const body = xs[idx("files/src/main.ts")]!.body;
      body[0] = body[0]! ^ 1;
      return xs;
    });
    let { err } = await refused(flipped);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.entry).toBe("files/src/main.ts");

    // The manifest edited (a blob id changed): the id no longer matches.
    const manifestEdit = variant("manifest", (xs) => {
      const m = JSON.parse(Buffer.from(xs[0]!.body).toString());
      m.entries[0].blob = `sha256:${"0".repeat(64)}`;
      xs[0]!.body = new TextEncoder().encode(canonicalJson(m));
      return xs;
    });
    ({ err } = await refused(manifestEdit));
    expect(err.details.entry).toBe("manifest.json");
    expect(err.message).toContain("does not match");

    // Manifest and id recomputed consistently, but a file's content differs: caught at that file.
    const forged = variant("forged", (xs) => {
      const m = JSON.parse(Buffer.from(xs[0]!.body).toString());
      const target = m.entries.findIndex((e: { path: string }) => e.path === "empty");
      m.entries[target].blob = `sha256:${sha256Hex("not empty")}`;
      m.snapshot_id = snapshotIdOf(m.fingerprint, manifestJson(m.entries));
      xs[0]!.body = new TextEncoder().encode(canonicalJson(m));
      return xs;
    });
    ({ err } = await refused(forged));
    expect(err.details.entry).toBe("files/empty");

    // Reordered files, an extra entry, a missing file, a truncated archive, a non-canonical manifest.
    const swapped = variant("swap", (xs) => {
      const [a, b] = [xs[1]!, xs[2]!];
      xs[1] = b;
      xs[2] = a;
      return xs;
    });
    ({ err } = await refused(swapped));
    expect(err.details.entry).toBe(items[2]!.path);
    const extra = variant("extra", (xs) => [...xs, { ...xs[1]!, path: "files/zzz" }]);
    ({ err } = await refused(extra));
    expect(err.details.entry).toBe("files/zzz");
    const missing = variant("missing", (xs) => xs.slice(0, -1));
    ({ err } = await refused(missing));
    expect(err.details.entry).toBe(items[items.length - 1]!.path);
    const spaced = variant("spaced", (xs) => {
      xs[0]!.body = new TextEncoder().encode(JSON.stringify(JSON.parse(Buffer.from(xs[0]!.body).toString()), null, 1));
      return xs;
    });
    ({ err } = await refused(spaced));
    expect(err.message).toContain("canonical");
    const truncatedFile = join(repo.root, "trunc.tar");
    const bytes = readFileSync(file);
    writeFileSync(truncatedFile, bytes.subarray(0, bytes.length - 1500));
    ({ err } = await refused(truncatedFile));
    expect(err.code).toBe("INVALID_ARGUMENT");
    const notTar = join(repo.root, "junk.tar");
    writeFileSync(notTar, "this is not a tar archive".repeat(40));
    ({ err } = await refused(notTar));
    expect(err.code).toBe("INVALID_ARGUMENT");
  });

  test("thousands of blobs staged in batches beside a large one: imported whole, or refused at a late bad file with nothing left", async () => {
    await using repo = await tmpRepo({ git: false });
    // past a staging batch's file count and bytes several times over, symlinks among them, and one blob too large
    // for a batch, written as it is read
    for (let i = 0; i < 3000; i++) repo.write(`d${i % 50}/f${i}.txt`, `file ${i} `.repeat(1 + (i % 40)));
    for (let i = 0; i < 20; i++) repo.symlink(`links/l${i}`, `../d${i}/f${i}.txt`);
    repo.write("big.bin", new Uint8Array(3 << 20).map((_, k) => (k * 13) & 0xff));
    const ws = openWorkspace(repo.root);
    const id = await snap(ws);
    const file = (await exportSnapshot(ws, { snapshot_id: id })).path;
    closeWorkspace(ws);
    await using other = await tmpRepo({ git: false });
    const ws2 = openWorkspace(other.root);
    expect(await importBundle(ws2, { file: join(repo.root, file) })).toMatchObject({ snapshot_id: id, files: 3021, created: true });
    for (const path of ["d0/f0.txt", "d49/f2999.txt"]) {
      expect((await readFile(ws2, { mode: "snapshot", snapshot_id: id, path })).content).toBe(readFileSync(join(repo.root, path), "utf8"));
    }
    expect(await readFile(ws2, { mode: "snapshot", snapshot_id: id, path: "links/l7" })).toMatchObject({ type: "symlink", content: "../d7/f7.txt" });
    // every byte of every blob, the large one too: the bundle exported again from the imported store is the same
    expect((await exportSnapshot(ws2, { snapshot_id: id })).sha256).toBe(sha256File(join(repo.root, file)));
    expect(stateFiles(other.root, "tmp")).toEqual([]);
    closeWorkspace(ws2);
    // a byte flipped in one of the last files: batches of earlier blobs were written by then, and are gone again
    const items = await readTar(join(repo.root, file));
    const late = items.findLastIndex((i) => i.path.startsWith("files/d49/"));
    (items[late] as TarItem).body[0]! ^= 1;
    const bad = join(repo.root, "late.tar");
    writeTar(bad, items);
    const { err } = await refused(bad);
    expect([err.code, err.details.entry]).toEqual(["INVALID_ARGUMENT", (items[late] as TarItem).path]);
  });

  test("a bundle path that does not exist is NOT_FOUND", async () => {
    await using dir = tmpDir("ws-import-");
    mkdirSync(join(dir.path, "root"));
    const ws = openWorkspace(join(dir.path, "root"));
    expect((await importBundle(ws, { file: join(dir.path, "nope.tar") }).catch((e) => e)).code).toBe("NOT_FOUND");
    closeWorkspace(ws);
  });
});
