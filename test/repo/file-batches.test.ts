/**
 * New files written in batches on the native threads (src/repo/file-batches.ts), as an import stages its
 * blobs: every byte and mode as given, across many batches; an existing entry, a symlink on the way and a
 * full disk are failures named by their code (never written through, never INTERNAL); after close() nothing
 * is written any more.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TreeHandles } from "../../src/repo/dir-handle";
import { FileBatches } from "../../src/repo/file-batches";
import { nativeModule, polled } from "../../src/repo/native";
import { tmpDir } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";

const native = nativeModule() !== null;

/** A directory held open beneath a fresh root, with `fanouts` subdirectories made. */
function area(root: string, fanouts: string[]): { handles: TreeHandles; dir: ReturnType<TreeHandles["ensureDir"]> } {
  const handles = TreeHandles.open(root);
  const dir = handles.ensureDir("stage");
  for (const f of fanouts) dir.mkdir(f);
  return { handles, dir };
}

/** Deterministic bytes: file k of `size` bytes. */
function bytesOf(k: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (k * 31 + i * 7) & 0xff;
  return out;
}

async function add(batches: FileBatches, path: string, bytes: Uint8Array): Promise<void> {
  batches.reserve(path, bytes.length);
  batches.put(bytes, 0);
  await batches.commit();
}

describe.skipIf(!native)("FileBatches", () => {
  test("files across many batches (by count and by bytes) hold their bytes, read-only", async () => {
    await using tmp = tmpDir("ws-batches-");
    const fanouts = Array.from({ length: 64 }, (_, i) => i.toString(16).padStart(2, "0"));
    const { handles, dir } = area(tmp.path, fanouts);
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    // 2,600 files: past a batch's file count twice; sizes from 0 to the largest batched size push the bytes over too
    const sizes = (k: number) => (k % 97 === 0 ? 1 << 20 : k % 13 === 0 ? 0 : (k * 977) % 40_000);
    const want = new Map<string, Uint8Array>();
    for (let k = 0; k < 2600; k++) {
      const path = `${fanouts[k % 64]}/file-${k}`;
      const bytes = bytesOf(k, sizes(k));
      want.set(path, bytes);
      await add(batches, path, bytes);
    }
    await batches.finish();
    let seen = 0;
    for (const f of fanouts) {
      for (const name of readdirSync(join(tmp.path, "stage", f))) {
        const abs = join(tmp.path, "stage", f, name);
        expect(Buffer.from(readFileSync(abs)).equals(Buffer.from(want.get(`${f}/${name}`) as Uint8Array))).toBe(true);
        expect(lstatSync(abs).mode & 0o777).toBe(0o444 & ~process.umask()); // made 0444, through the runner's umask
        seen++;
      }
    }
    expect(seen).toBe(2600);
    handles.close();
  });

  test("a dropped reservation writes nothing, and the next file takes its room", async () => {
    await using tmp = tmpDir("ws-batches-");
    const { handles, dir } = area(tmp.path, ["aa"]);
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    batches.reserve("aa/dropped", 5);
    batches.put(new TextEncoder().encode("wrong"), 0);
    batches.drop();
    await add(batches, "aa/kept", new TextEncoder().encode("right"));
    await batches.finish();
    expect(readdirSync(join(tmp.path, "stage", "aa"))).toEqual(["kept"]);
    expect(readFileSync(join(tmp.path, "stage", "aa", "kept"), "utf8")).toBe("right");
    handles.close();
  });

  test("an entry already there is EEXIST, named relative to the root, and is left as it was", async () => {
    await using tmp = tmpDir("ws-batches-");
    const { handles, dir } = area(tmp.path, ["aa"]);
    writeFileSync(join(tmp.path, "stage", "aa", "taken"), "first");
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    await add(batches, "aa/taken", new TextEncoder().encode("second"));
    const err = await batches.finish().catch((e) => e);
    expect(err).toMatchObject({ code: "EEXIST", syscall: "open", path: "stage/aa/taken" });
    expect(err.message).not.toContain(tmp.path);
    expect(readFileSync(join(tmp.path, "stage", "aa", "taken"), "utf8")).toBe("first");
    handles.close();
  });

  test("a fan-out directory swapped for a symlink is never written through", async () => {
    await using tmp = tmpDir("ws-batches-");
    const { handles, dir } = area(tmp.path, ["aa"]);
    const outside = join(tmp.path, "outside");
    mkdirSync(outside);
    rmSync(join(tmp.path, "stage", "aa"), { recursive: true });
    symlinkSync(outside, join(tmp.path, "stage", "aa"));
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    await add(batches, "aa/escaped", new TextEncoder().encode("must not land outside"));
    const err = await batches.finish().catch((e) => e);
    expect(["ELOOP", "ENOTDIR", "EXDEV"]).toContain(err?.code);
    expect(readdirSync(outside)).toEqual([]);
    handles.close();
  });

  test("with openat2 and with the walk a kernel without it takes (WORKSNAP_OPENAT2=0): the same files, and no symlink followed", async () => {
    for (const env of [{}, { WORKSNAP_OPENAT2: "0" }]) {
      await using tmp = tmpDir("ws-batches-");
      const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "fixtures", "file-batches-walk.ts"), tmp.path], { env: { ...process.env, ...env } });
      expect([env, r.exitCode, r.stderr.toString()]).toEqual([env, 0, ""]);
      const seen = JSON.parse(r.stdout.toString());
      expect(seen).toMatchObject({ files: 1500, f7: "file 7\n", outside: [] });
      expect(["ELOOP", "ENOTDIR"]).toContain(seen.err);
    }
  });

  test("a job writes the bytes it was handed: a plain buffer copied, a batch block kept by the job after its Buffer is collected", async () => {
    await using tmp = tmpDir("ws-batches-");
    const fanouts = Array.from({ length: 16 }, (_, i) => i.toString(16).padStart(2, "0"));
    const { handles, dir } = area(tmp.path, fanouts);
    const m = nativeModule() as NonNullable<ReturnType<typeof nativeModule>>;
    const files = 1000;
    const size = 3000;
    const pathsOf = (tag: string) => Buffer.from(`${Array.from({ length: files }, (_, k) => `${fanouts[k % 16]}/${tag}-${k}`).join("\0")}\0`);
    const ends = Float64Array.from({ length: files }, (_, k) => (k + 1) * size);
    const fill = (into: Uint8Array, salt: number) => {
      for (let k = 0; k < files; k++) into.set(bytesOf(k + salt, size), k * size);
    };
    // a plain buffer: overwritten the moment the job has it, the files hold what it held before
    const plain = new Uint8Array(files * size);
    fill(plain, 0);
    const copied = m.createStart(dir.fd, pathsOf("plain"), files, plain, ends, 0o444);
    plain.fill(0x55);
    // a block: every reference this test had dropped and collected while the job may still be writing from it
    const borrowed = (() => {
      const block = m.batchBlock(files * size);
      fill(block, 7);
      return m.createStart(dir.fd, pathsOf("block"), files, block.subarray(0, files * size), ends, 0o444);
    })();
    Bun.gc(true);
    for (const job of [copied, borrowed]) {
      const records = await polled(() => m.createRecords(job));
      m.release(job);
      expect(records.every((b) => b === 0)).toBe(true);
    }
    Bun.gc(true);
    for (let k = 0; k < files; k++) {
      const at = (tag: string) => readFileSync(join(tmp.path, "stage", fanouts[k % 16] as string, `${tag}-${k}`));
      expect(Buffer.from(at("plain")).equals(Buffer.from(bytesOf(k, size)))).toBe(true);
      expect(Buffer.from(at("block")).equals(Buffer.from(bytesOf(k + 7, size)))).toBe(true);
    }
    handles.close();
  });

  test("close() waits for the batches in flight: nothing is created after it returns", async () => {
    await using tmp = tmpDir("ws-batches-");
    const fanouts = Array.from({ length: 16 }, (_, i) => i.toString(16).padStart(2, "0"));
    const { handles, dir } = area(tmp.path, fanouts);
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    // two full batches submitted and a third filling, then closed without finishing
    for (let k = 0; k < 2500; k++) await add(batches, `${fanouts[k % 16]}/f${k}`, bytesOf(k, 100));
    await batches.close();
    const count = () => fanouts.reduce((n, f) => n + readdirSync(join(tmp.path, "stage", f)).length, 0);
    const after = count();
    await Bun.sleep(200);
    expect(count()).toBe(after);
    // the batch being filled was never handed over
    expect(after).toBeLessThan(2500);
    handles.close();
  });
});

const disk = tmpfsForTests("2m", "ws-batches-full-");

describe.skipIf(!native || !disk.canMount)("FileBatches on a full disk", () => {
  test("the disk filling half way is ENOSPC from commit or finish, never another failure", async () => {
    expect(disk.mounted).toBe(true);
    const root = join(disk.path, "repo");
    mkdirSync(root);
    const { handles, dir } = area(root, ["aa", "bb"]);
    const batches = FileBatches.open(dir, 0o444) as FileBatches;
    let err: unknown = null;
    try {
      for (let k = 0; k < 400 && err === null; k++) await add(batches, `${k % 2 ? "aa" : "bb"}/f${k}`, bytesOf(k, 20_000));
      await batches.finish();
    } catch (e) {
      err = e;
    }
    await batches.close();
    expect((err as NodeJS.ErrnoException | null)?.code).toBe("ENOSPC");
    expect(existsSync(join(root, "stage"))).toBe(true);
    handles.close();
  });
});
