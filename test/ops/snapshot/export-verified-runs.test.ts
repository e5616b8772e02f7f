// An export puts each run of files the work tree holds as their blobs straight into the bundle, the tar headers
// made natively (src/native/bundle_put.c); everything else goes the ordinary way. The bundle must be the same
// bytes whichever way each entry went.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf, sha256Hex } from "../../../src/core/hash";
import { concat } from "../../../src/core/bytes";
import { ExportReads } from "../../../src/ops/snapshot/export-reads";
import type { Workspace } from "../../../src/ops/workspace";
import { AtomicFileWriter } from "../../../src/repo/atomic-stream";
import { BUNDLE_FILES_PREFIX } from "../../../src/repo/bundle";
import { MemBlobStore } from "../../../src/repo/mem-blob-store";
import { nativeModule, type NativeJob } from "../../../src/repo/native";
import type { SnapshotId } from "../../../src/repo/manifest";
import { tarHeader, tarPadding } from "../../../src/repo/tar";
import { tmpDir, tmpRepo } from "../../helpers/tmp-repo";
import { cli } from "../../helpers/binary";

const native = nativeModule() !== null;
const PREFIX = new TextEncoder().encode(BUNDLE_FILES_PREFIX);

/** Bytes of `n` from a seed: every size gets bytes of its own. */
function body(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  return b;
}

/** Every file under `dir` by relative path: its SHA-256 and whether it is executable, or a symlink's target. */
function treeOf(dir: string, rel = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) for (const [k, v] of treeOf(dir, p)) out.set(k, v);
    else if (d.isSymbolicLink()) out.set(p, `-> ${readlinkSync(join(dir, p))}`);
    else out.set(p, `${sha256Hex(readFileSync(join(dir, p)))}${statSync(join(dir, p)).mode & 0o100 ? " executable" : ""}`);
  }
  return out;
}

describe("export: runs of verified files put natively", () => {
  test("names at ustar's limit in bytes (ASCII and multi-byte), sizes around the block and the borrowing threshold, modes, symlinks, and files changed, grown or gone mid-run: the same bundle as the TypeScript export, and GNU tar extracts the snapshot from it", async () => {
    await using repo = await tmpRepo();
    const files = new Map<string, Uint8Array>();
    const put = (path: string, bytes: Uint8Array, mode?: number) => {
      files.set(path, bytes);
      repo.write(path, bytes, mode);
    };
    // "files/" + path: 100 bytes fits the ustar name field, 101 needs a pax header
    const at100 = `n/${"a".repeat(100 - PREFIX.length - 2)}`;
    const at101 = `n/${"b".repeat(101 - PREFIX.length - 2)}`;
    const wide100 = `w/${"é".repeat((100 - PREFIX.length - 2) / 2)}`; // 2 bytes each: 100 bytes, fewer characters
    const wide102 = `w/${"ü".repeat((102 - PREFIX.length - 2) / 2)}`;
    expect([at100, at101, wide100, wide102].map((p) => PREFIX.length + Buffer.byteLength(p))).toEqual([100, 101, 100, 102]);
    const sizes = [0, 1, 100, 511, 512, 513, 1024, 4095, 4096, 4097, 8191, 65_536, 1_048_579];
    let seed = 0;
    for (const name of [at100, at101, wide100, wide102]) put(name, body(777, seed++));
    // more than one read window (512 files), sizes cycling, an executable every 5th, a symlink every 97th
    for (let i = 0; i < 1_300; i++) {
      const path = `d${i % 13}/f${String(i).padStart(4, "0")}.bin`;
      if (i % 97 === 50) {
        repo.symlink(path, `../d0/f0000.bin`);
        continue;
      }
      put(path, body(sizes[i % sizes.length] as number, seed++), i % 5 === 3 ? 0o755 : undefined);
    }
    repo.commit();
    const id = cli(["snapshot", "create", "--root", repo.root]).stdout.trim();
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const before = treeOf(repo.root);
    // after the snapshot: same sizes with other bytes (in the middle of runs), grown, shrunk, gone, a symlink in a file's place
    for (const i of [7, 8, 300, 777, 1_299]) repo.write(`d${i % 13}/f${String(i).padStart(4, "0")}.bin`, body(sizes[i % sizes.length] as number, 9_999));
    repo.write("d1/f0014.bin", body(sizes[14 % sizes.length]! + 1, 1));
    repo.write("d2/f0015.bin", body(Math.max(0, sizes[15 % sizes.length]! - 1), 2));
    rmSync(join(repo.root, "d3/f0016.bin"));
    rmSync(join(repo.root, "d4/f0017.bin"));
    repo.symlink("d4/f0017.bin", "../d0/f0000.bin");
    writeFileSync(join(repo.root, at100), body(777, 4242));

    const exportWith = (env: Record<string, string>, name: string) => {
      const r = cli(["snapshot", "export", id, "-o", join(repo.root, name), "--root", repo.root, "--json"], { env });
      expect(r.code).toBe(0);
      return r.json();
    };
    const fast = exportWith({}, "native.tar");
    const plain = exportWith({ WORKSNAP_NATIVE: "0" }, "plain.tar");
    expect(fast.sha256).toBe(plain.sha256);
    expect(Buffer.compare(readFileSync(join(repo.root, "native.tar")), readFileSync(join(repo.root, "plain.tar")))).toBe(0);
    expect(fast.sha256).toBe(sha256Hex(readFileSync(join(repo.root, "native.tar"))));

    // an independent reader: GNU tar checks every header's checksum and gives back the snapshot's tree
    const out = join(repo.root, "..", "extracted");
    mkdirSync(out);
    const tar = Bun.spawnSync(["tar", "-xf", join(repo.root, "native.tar"), "-C", out]);
    expect(tar.stderr.toString()).toBe("");
    expect(tar.exitCode).toBe(0);
    const got = treeOf(join(out, "files"));
    const want = new Map([...before].filter(([p]) => !p.startsWith(".git/") && !p.startsWith(".mcp/")));
    expect([...got].sort()).toEqual([...want].sort());
    rmSync(out, { recursive: true, force: true });
  }, 120_000);

  test.skipIf(!native)("putVerified puts the run of verified regular files from an entry and stops at the first that is not; what it put is what the ordinary writes would have written", async () => {
    await using dir = tmpDir("ws-export-runs-");
    const blobs = new MemBlobStore();
    const entries: { path: string; blob: `sha256:${string}`; mode: "100644" | "100755" | "120000" }[] = [];
    const bytesOf: Uint8Array[] = [];
    const add = async (path: string, bytes: Uint8Array, mode: "100644" | "100755" | "120000", inTree: Uint8Array | null = bytes) => {
      const blob = await blobs.write(bytes);
      entries.push({ path, blob, mode });
      bytesOf.push(bytes);
      if (inTree) {
        mkdirSync(join(dir.path, path, ".."), { recursive: true });
        await Bun.write(join(dir.path, path), inTree);
      }
    };
    await add("a.txt", body(10, 1), "100644");
    await add("b/exec", body(4096, 2), "100755"); // borrowed from the block, not copied
    await add("c.txt", body(600, 3), "100644");
    await add("changed.txt", body(600, 4), "100644", body(600, 5)); // the tree holds other bytes: stops the run
    await add("d.txt", body(0, 6), "100644");
    await add("link", new TextEncoder().encode("a.txt"), "120000", null); // a symlink: stops the run
    await add(`${"x".repeat(95)}`, body(7, 7), "100644"); // "files/" + 95 bytes needs a pax header: stops the run
    await add("e.txt", body(513, 8), "100644");
    await add("gone.txt", body(5, 9), "100644", null); // not in the tree
    const ws = { repo: { root: dir.path }, blobs } as unknown as Workspace;
    const sizes = bytesOf.map((b) => b.length);
    const out = new AtomicFileWriter(join(dir.path, ".mcp"), join(dir.path, "bundle"));
    const reads = new ExportReads(ws, entries, sizes, "sha256:00" as SnapshotId, (block) => out.giveBack(block));
    const put = (job: NativeJob, from: number, to: number, digests: Uint8Array, modes: Uint8Array) => out.putScanned(job, from, to, digests, modes, PREFIX);
    const runs: [number, number][] = [];
    const expected: Uint8Array[] = [];
    const header = (i: number) => {
      const e = entries[i]!;
      return e.mode === "120000"
        ? tarHeader({ path: BUNDLE_FILES_PREFIX + e.path, type: "symlink", mode: 0o777, size: 0, linkTarget: bytesOf[i] })
        : tarHeader({ path: BUNDLE_FILES_PREFIX + e.path, type: "file", mode: e.mode === "100755" ? 0o755 : 0o644, size: sizes[i]! });
    };
    for (let i = 0; i < entries.length; i++) {
      expected.push(header(i));
      if (entries[i]!.mode !== "120000") expected.push(bytesOf[i]!, tarPadding(sizes[i]!));
    }
    for (let i = 0; i < entries.length; i++) {
      const n = await reads.putVerified(i, put);
      runs.push([i, n]);
      if (n > 0) {
        i += n - 1;
        continue;
      }
      const e = entries[i]!;
      const bytes = await reads.take(i);
      expect(blobIdOf(bytes)).toBe(e.blob);
      out.write(header(i));
      if (e.mode !== "120000") out.write(bytes), out.write(tarPadding(sizes[i]!));
    }
    reads.close();
    // a.txt, b/exec, c.txt in one run; then each of the rest the ordinary way but d.txt and e.txt, put alone
    expect(runs).toEqual([
      [0, 3],
      [3, 0],
      [4, 1],
      [5, 0],
      [6, 0],
      [7, 1],
      [8, 0],
    ]);
    const whole = concat(expected);
    expect(out.written).toBe(whole.length);
    expect(await out.commit()).toBe(sha256Hex(whole));
    expect(Buffer.compare(readFileSync(join(dir.path, "bundle")), Buffer.from(whole))).toBe(0);
  });
});
